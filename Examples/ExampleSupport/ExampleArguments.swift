/// The command line of an example: `--name value` (or `--name=value`) options, boolean
/// `--flag`s and positional arguments, in the style of the iOS examples' text fields and
/// switches.
public struct ExampleArguments: Sendable {
  /// Option values by name (without the leading dashes); the last occurrence wins.
  public private(set) var values: [String: String] = [:]
  /// Every value of each option, in order (for options given more than once, e.g. `--file`).
  public private(set) var allValues: [String: [String]] = [:]
  /// Boolean flags that were given.
  public private(set) var flags: Set<String> = []
  /// Arguments that are not options.
  public private(set) var positional: [String] = []

  /// Parses `arguments` (without the program name). `booleanFlags` names the options that take
  /// no value; `--no-NAME` clears a flag whose default is on. With `usage`, every option must be
  /// one the usage text names (`--name`), so a typo is an error instead of a silently ignored
  /// option that swallows the next argument.
  /// - Throws: `ExampleError.usage` for an unknown option or an option missing its value.
  public init(
    _ arguments: [String], booleanFlags: Set<String> = [], usage: String? = nil
  ) throws(ExampleError) {
    let known = usage.map(Self.options(in:))
    var index = 0
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      guard argument.hasPrefix("--"), argument.count > 2 else {
        positional.append(argument)
        continue
      }
      var name = String(argument.dropFirst(2))
      var value: String?
      if let equals = name.firstIndex(of: "=") {
        value = String(name[name.index(after: equals)...])
        name = String(name[..<equals])
      }
      if let known {
        let base = name.hasPrefix("no-") ? String(name.dropFirst(3)) : name
        guard known.contains(name) || known.contains(base) else {
          throw .usage("unknown option --\(name)")
        }
      }
      if booleanFlags.contains(name) || (name.hasPrefix("no-") && value == nil) {
        flags.insert(name)
        continue
      }
      if value == nil {
        guard index < arguments.count else { throw .usage("--\(name) needs a value") }
        value = arguments[index]
        index += 1
      }
      let given = value ?? ""
      values[name] = given
      allValues[name, default: []].append(given)
    }
  }

  /// The option names (`--name` → `name`) a usage text mentions.
  public static func options(in usage: String) -> Set<String> {
    var names: Set<String> = []
    var rest = Substring(usage)
    while let range = rest.range(of: "--") {
      let name = rest[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "-" }
      if !name.isEmpty { names.insert(String(name)) }
      rest = rest[range.upperBound...]
    }
    return names
  }

  /// The value of `--name`, or `defaultValue`.
  public func string(_ name: String, default defaultValue: String? = nil) -> String? {
    values[name] ?? defaultValue
  }

  /// The integer value of `--name`, or `defaultValue`.
  /// - Throws: `ExampleError.usage` when the value is not an integer.
  public func int(_ name: String, default defaultValue: Int) throws(ExampleError) -> Int {
    guard let text = values[name] else { return defaultValue }
    guard let value = Int(text) else { throw .usage("--\(name) wants an integer, got \(text)") }
    return value
  }

  /// The number value of `--name` (seconds, ratios), or `defaultValue`.
  /// - Throws: `ExampleError.usage` when the value is not a finite number (`nan` and `inf`
  ///   parse as `Double`s but no duration or ratio means them).
  public func double(_ name: String, default defaultValue: Double) throws(ExampleError) -> Double {
    guard let text = values[name] else { return defaultValue }
    guard let value = Double(text), value.isFinite else {
      throw .usage("--\(name) wants a number, got \(text)")
    }
    return value
  }

  /// Whether `--name` was given; `--no-name` gives `false`; otherwise `defaultValue`.
  public func flag(_ name: String, default defaultValue: Bool = false) -> Bool {
    if flags.contains("no-" + name) { return false }
    return flags.contains(name) ? true : defaultValue
  }
}

/// Why an example stopped.
public enum ExampleError: Error, Sendable, CustomStringConvertible {
  /// A bad command line; the message says which option.
  case usage(String)
  /// The local server could not start.
  case server(String)
  /// A step of the example failed (status, media, record).
  case failed(String)

  /// The message printed before exiting.
  public var description: String {
    switch self {
    case .usage(let message): return "usage: \(message)"
    case .server(let message): return "local server: \(message)"
    case .failed(let message): return message
    }
  }
}

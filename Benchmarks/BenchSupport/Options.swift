/// The positive integer after `--name` on the command line, or `fallback` when it is missing,
/// not a number or not above 0.
public func option(_ name: String, default fallback: Int) -> Int {
  let arguments = CommandLine.arguments
  guard let index = arguments.firstIndex(of: "--" + name), index + 1 < arguments.count,
    let value = Int(arguments[index + 1]), value > 0
  else { return fallback }
  return value
}

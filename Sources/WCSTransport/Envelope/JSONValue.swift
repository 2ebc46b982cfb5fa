import Foundation

/// A JSON value as WCS sends it, with lenient accessors: WCS servers and SDKs send booleans as
/// `true`, `"true"` or `1`, and numbers as numbers or strings (wcs-protocol.md §2, §4.7).
public enum JSONValue: Sendable, Equatable, Hashable {
  case null
  case bool(Bool)
  case number(Double)
  case string(String)
  case array([JSONValue])
  case object([String: JSONValue])

  /// The member `key` of an object, or `nil` for a missing key or a non-object.
  public subscript(key: String) -> JSONValue? {
    if case .object(let members) = self { return members[key] }
    return nil
  }

  /// The element at `index` of an array, or `nil` when out of range or not an array.
  public subscript(index: Int) -> JSONValue? {
    if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
    return nil
  }

  /// A string, or a number/boolean written as a string; `nil` for null, arrays and objects.
  public var stringValue: String? {
    switch self {
    case .string(let s): return s
    case .number(let n):
      if n.rounded() == n, abs(n) < 1e15 { return String(Int64(n)) }
      return String(n)
    case .bool(let b): return b ? "true" : "false"
    default: return nil
    }
  }

  /// `true`/`false`, also from `"true"`/`"false"` (any case) and the numbers 1/0.
  public var boolValue: Bool? {
    switch self {
    case .bool(let b): return b
    case .number(let n): return n == 1 ? true : (n == 0 ? false : nil)
    case .string(let s):
      switch s.lowercased() {
      case "true", "1": return true
      case "false", "0": return false
      default: return nil
      }
    default: return nil
    }
  }

  /// A number, also from a numeric string (`"1500"`).
  public var doubleValue: Double? {
    switch self {
    case .number(let n): return n
    case .string(let s): return Double(s.trimmingCharacters(in: .whitespaces))
    default: return nil
    }
  }

  /// An integer (a number or numeric string with no fractional part that fits in `Int`).
  public var intValue: Int? {
    guard let d = doubleValue, d.isFinite, d.rounded() == d, abs(d) < 9.0e15 else { return nil }
    return Int(d)
  }

  /// The members of an object, or `nil`.
  public var objectValue: [String: JSONValue]? {
    if case .object(let members) = self { return members }
    return nil
  }

  /// The elements of an array, or `nil`.
  public var arrayValue: [JSONValue]? {
    if case .array(let elements) = self { return elements }
    return nil
  }

  /// `true` for `.null`.
  public var isNull: Bool { self == .null }
}

extension JSONValue: Codable {
  /// Decodes any JSON value; numbers become `.number(Double)`.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let b = try? container.decode(Bool.self) {
      self = .bool(b)
    } else if let n = try? container.decode(Double.self) {
      self = .number(n)
    } else if let s = try? container.decode(String.self) {
      self = .string(s)
    } else if let a = try? container.decode([JSONValue].self) {
      self = .array(a)
    } else {
      self = .object(try container.decode([String: JSONValue].self))
    }
  }

  /// Encodes the value; whole numbers below 2^53 are written without a fraction.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .null: try container.encodeNil()
    case .bool(let b): try container.encode(b)
    case .number(let n):
      if n.rounded() == n, abs(n) < 9.0e15 {
        try container.encode(Int64(n))
      } else {
        try container.encode(n)
      }
    case .string(let s): try container.encode(s)
    case .array(let a): try container.encode(a)
    case .object(let o): try container.encode(o)
    }
  }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral,
  ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByArrayLiteral,
  ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
  /// A literal as `.string`.
  public init(stringLiteral value: String) { self = .string(value) }
  /// A literal as `.bool`.
  public init(booleanLiteral value: Bool) { self = .bool(value) }
  /// A literal as `.number`.
  public init(integerLiteral value: Int) { self = .number(Double(value)) }
  /// A literal as `.number`.
  public init(floatLiteral value: Double) { self = .number(value) }
  /// A literal as `.array`.
  public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
  /// A literal as `.object` (the last of duplicate keys wins).
  public init(dictionaryLiteral elements: (String, JSONValue)...) {
    self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
  }
  /// A literal as `.null`.
  public init(nilLiteral: ()) { self = .null }
}

import Foundation

/// Conversions between the apps' Foundation dictionaries (`[String: Any]`, as the iOS SDK takes
/// them) and `JSONValue`.
enum JSONConversion {
  /// Converts a JSON-compatible value: String, Bool, integers, floating point, NSNumber, NSNull,
  /// arrays and dictionaries with String keys, `JSONValue`.
  /// - Throws: `WCSError.invalidArgument` naming the path and type of the first value that is not JSON.
  static func json(_ value: Any, path: String = "") throws(WCSError) -> JSONValue {
    switch value {
    case let v as JSONValue: return v
    case let v as String: return .string(v)
    case let v as Substring: return .string(String(v))
    case let v as Bool: return .bool(v)
    case let v as Int: return .number(Double(v))
    case let v as Int64: return .number(Double(v))
    case let v as Int32: return .number(Double(v))
    case let v as UInt: return .number(Double(v))
    case let v as Double:
      guard v.isFinite else { throw .invalidArgument("\(path): \(v) is not a JSON number") }
      return .number(v)
    case let v as Float: return .number(Double(v))
    case is NSNull: return .null
    case let v as NSNumber: return .number(v.doubleValue)
    case let v as [Any]:
      var out: [JSONValue] = []
      for (i, e) in v.enumerated() { out.append(try json(e, path: "\(path)[\(i)]")) }
      return .array(out)
    case let v as [String: Any]: return .object(try object(v, path: path))
    default:
      if case Optional<Any>.none = value as Any? { return .null }
      throw .invalidArgument("\(path.isEmpty ? "value" : path): \(type(of: value)) is not JSON")
    }
  }

  /// Converts a dictionary with `json(_:path:)` member by member.
  static func object(_ dictionary: [String: Any], path: String = "") throws(WCSError) -> [String:
    JSONValue]
  {
    var out: [String: JSONValue] = [:]
    for (key, member) in dictionary {
      out[key] = try json(member, path: path.isEmpty ? key : "\(path).\(key)")
    }
    return out
  }

  /// Foundation form of a JSON object: String, NSNumber-bridgeable numbers/Bools, arrays,
  /// dictionaries, NSNull.
  static func foundationObject(_ object: [String: JSONValue]) -> [String: Any] {
    object.mapValues { foundationValue($0) }
  }

  static func foundationValue(_ value: JSONValue) -> Any {
    switch value {
    case .null: return NSNull()
    case .bool(let b): return b
    case .number(let n):
      if n.rounded() == n, abs(n) < 9.0e15 { return Int(n) }
      return n
    case .string(let s): return s
    case .array(let a): return a.map { foundationValue($0) }
    case .object(let o): return foundationObject(o)
    }
  }
}

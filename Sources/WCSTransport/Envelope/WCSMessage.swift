import Foundation

/// One WCS signalling message: `{"message": NAME, "data": [arg0, arg1, ...]}` with positional
/// arguments (wcs-protocol.md §2). Client→server messages carry one argument (`[null]` when there
/// is none); server→client messages may carry several (`setRemoteSDP` is `[id, sdp, isInitiator]`).
public struct WCSMessage: Sendable, Equatable {
  /// The method name, case-sensitive (`getUserData`, `unPublishStream`, `DataStatusEvent`).
  public var name: String
  /// Positional arguments; empty when the frame had no `data` or `data: null`.
  public var data: [JSONValue]

  /// Creates a message; `data` defaults to `[null]`, which is how SDKs send a message without payload.
  public init(name: String, data: [JSONValue] = [.null]) {
    self.name = name
    self.data = data
  }

  /// The first argument, or `nil` when `data` is empty or `[null]`.
  public var argument: JSONValue? {
    guard let first = data.first, !first.isNull else { return nil }
    return first
  }

  /// Positional argument `index`, or `nil` when absent.
  public subscript(index: Int) -> JSONValue? { data.indices.contains(index) ? data[index] : nil }
}

/// Why a frame is not a WCS message. The frame is skipped; the connection goes on.
public enum WCSMessageDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The text is not JSON (`detail` says where the parser gave up).
  case notJSON(detail: String)
  /// The JSON is valid but not an object.
  case notAnObject
  /// The object has no string `message` member.
  case missingMessageName
  /// `data` is present but neither an array, an object nor null.
  case invalidData(String)

  /// A one-line explanation for logs.
  public var description: String {
    switch self {
    case .notJSON(let detail): return "frame is not JSON: \(detail)"
    case .notAnObject: return "frame is not a JSON object"
    case .missingMessageName: return "frame has no string \"message\" member"
    case .invalidData(let kind): return "\"data\" is \(kind), not an array"
    }
  }
}

/// Encodes and decodes the WCS envelope.
public enum WCSMessageCodec {
  /// Decodes one text frame. `data` may be missing, `null`, an array, or (leniently) a single
  /// object, which is taken as a one-element array.
  /// - Throws: `WCSMessageDecodingError` describing why the frame was not a message.
  public static func decode(_ text: String) throws(WCSMessageDecodingError) -> WCSMessage {
    let value: JSONValue
    do {
      value = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    } catch {
      throw .notJSON(detail: Self.describe(error))
    }
    guard case .object(let members) = value else { throw .notAnObject }
    guard case .string(let name)? = members["message"] else { throw .missingMessageName }
    switch members["data"] {
    case nil, .null?: return WCSMessage(name: name, data: [])
    case .array(let args)?: return WCSMessage(name: name, data: args)
    case .object(let object)?: return WCSMessage(name: name, data: [.object(object)])
    case .string?: throw .invalidData("a string")
    case .number?: throw .invalidData("a number")
    case .bool?: throw .invalidData("a boolean")
    }
  }

  /// Encodes a message as compact JSON text.
  public static func encode(_ message: WCSMessage) -> String {
    let value = JSONValue.object(["message": .string(message.name), "data": .array(message.data)])
    return encode(value)
  }

  /// Compact JSON text of any value, keys sorted so output is reproducible.
  public static func encode(_ value: JSONValue) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(value), let text = String(data: data, encoding: .utf8)
    else { return "null" }
    return text
  }

  private static func describe(_ error: any Error) -> String {
    if case DecodingError.dataCorrupted(let context) = error {
      return context.underlyingError.map { "\($0)" } ?? context.debugDescription
    }
    // Valid JSON text that `JSONValue` cannot hold (a number beyond Double's range such as
    // 1e309): its own error is swallowed by the type-by-type attempts, and the one left ("expected
    // Dictionary<String, Any> but found an array") names Swift types and the wrong place.
    return "a value cannot be represented (e.g. a number beyond ±1.8e308)"
  }
}

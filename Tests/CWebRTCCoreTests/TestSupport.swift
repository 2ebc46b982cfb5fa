import CWebRTCCore
import Foundation
import TestSupport
import XCTest

/// Errors the binding tests raise when a C call reports failure, so the failing call is named.
enum BindingTestError: Error, CustomStringConvertible {
  case badHex(String)
  case cCall(String, code: Int)
  case openSSL(String, reason: String)

  var description: String {
    switch self {
    case .badHex(let text): return "not hex: \(text)"
    case .cCall(let call, let code): return "\(call) failed with \(code)"
    case .openSSL(let call, let reason): return "\(call) failed: \(reason)"
    }
  }
}

/// Decodes a hex string (either case, no separators).
func hexBytes(_ text: String) throws -> [UInt8] {
  let digits = Array(text.utf8)
  guard digits.count % 2 == 0 else { throw BindingTestError.badHex(text) }
  var bytes: [UInt8] = []
  bytes.reserveCapacity(digits.count / 2)
  var index = 0
  while index < digits.count {
    guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else {
      throw BindingTestError.badHex(text)
    }
    bytes.append(high << 4 | low)
    index += 2
  }
  return bytes
}

private func hexValue(_ digit: UInt8) -> UInt8? {
  switch digit {
  case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
  case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
  case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
  default: return nil
  }
}

/// Lower-case hex of `bytes`, for readable assertion messages.
func hexString(_ bytes: [UInt8]) -> String {
  bytes.map { String(format: "%02x", $0) }.joined()
}

/// The shared test corpus (`../shared/corpus` next to the package root), when it exists.
enum Corpus {
  /// `../shared/corpus/vectors/<name>` parsed as a JSON object, or nil when the corpus is absent.
  static func vectors(_ name: String) throws -> [String: Any]? {
    guard let file = SharedCorpus.url("vectors/\(name)") else { return nil }
    let object = try JSONSerialization.jsonObject(with: Data(contentsOf: file))
    return object as? [String: Any]
  }
}

/// Reads a nested value from a corpus object; fails the test (and returns nil) when it is missing.
func corpusValue<T>(
  _ object: [String: Any], _ path: String..., file: StaticString = #filePath, line: UInt = #line
) -> T? {
  var current: Any = object
  for key in path {
    guard let dictionary = current as? [String: Any], let next = dictionary[key] else {
      XCTFail("corpus has no \(path.joined(separator: "."))", file: file, line: line)
      return nil
    }
    current = next
  }
  guard let value = current as? T else {
    XCTFail("corpus \(path.joined(separator: ".")) is not \(T.self)", file: file, line: line)
    return nil
  }
  return value
}

/// The text of OpenSSL's error queue (emptied), for failure messages.
func openSSLErrors() -> String {
  var reasons: [String] = []
  while case let code = ERR_get_error(), code != 0 {
    var buffer = [CChar](repeating: 0, count: 256)
    ERR_error_string_n(code, &buffer, buffer.count)
    reasons.append(
      String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
  }
  return reasons.isEmpty ? "no OpenSSL error queued" : reasons.joined(separator: "; ")
}

/// The body of a close frame: a 2-byte big-endian status code and UTF-8 reason (RFC 6455 §5.5.1).
struct WebSocketClosePayload: Equatable {
  /// The close code, 1005 ("no status received", RFC 6455 §7.4.1) when the body is empty.
  var code: Int
  /// The reason text; invalid UTF-8 is repaired, never rejected.
  var reason: String

  /// Parses a close frame body; a 1-byte body is malformed and reads as 1002 (protocol error).
  init(bytes: UnsafeRawBufferPointer) {
    guard bytes.count >= 2 else {
      code = bytes.isEmpty ? 1005 : 1002
      reason = ""
      return
    }
    code = Int(bytes[0]) << 8 | Int(bytes[1])
    reason = String(decoding: bytes[2...], as: UTF8.self)
  }

  /// Creates a payload from a code and reason.
  init(code: Int, reason: String) {
    self.code = code
    self.reason = reason
  }

  /// The code to put on the wire: 1005, 1006 and 1015 are reserved for reporting and must not
  /// be sent (RFC 6455 §7.4.1), nor may codes outside 1000-4999; those go out as 1000.
  var codeForFrame: Int {
    guard (1000...4999).contains(code), ![1004, 1005, 1006, 1015].contains(code) else {
      return 1000
    }
    return code
  }

  /// Reason bytes that fit a control frame: at most 123 bytes (125 minus the code), cut on a
  /// UTF-8 character boundary.
  var reasonBytesForFrame: [UInt8] {
    var bytes: [UInt8] = []
    for scalar in reason.unicodeScalars {
      let encoded = Array(String(scalar).utf8)
      if bytes.count + encoded.count > 123 { break }
      bytes += encoded
    }
    return bytes
  }
}

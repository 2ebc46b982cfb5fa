import COpenSSL

/// Reads OpenSSL's thread-local error queue into text for `DTLSError` reasons.
enum OpenSSLErrorQueue {
  /// Every queued error rendered with `ERR_error_string_n`, joined by "; ", and the queue cleared;
  /// "no OpenSSL error queued" when it is empty.
  static func drain() -> String {
    var messages: [String] = []
    while true {
      let code = ERR_get_error()
      if code == 0 { break }
      var buffer = [CChar](repeating: 0, count: 256)
      buffer.withUnsafeMutableBufferPointer { ERR_error_string_n(code, $0.baseAddress, $0.count) }
      let bytes = buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }
      messages.append(String(decoding: bytes, as: UTF8.self))
    }
    return messages.isEmpty ? "no OpenSSL error queued" : messages.joined(separator: "; ")
  }
}

import CWebSockets
import Foundation

/// A libwebsockets context pointer that other threads may hold. `@unchecked Sendable`: they
/// use it only for `lws_cancel_service` (thread-safe by design), under the lock that the
/// service thread also takes before destroying the context.
struct LWSContextHandle: @unchecked Sendable {
  let pointer: OpaquePointer
}

/// Process-wide libwebsockets settings.
enum LWSLibrary {
  /// Sets the library's own logging once: off, since failures reach the owner as events with
  /// reasons, unless the environment variable `WCS_LWS_LOG` gives an lws log level bit mask
  /// (e.g. `15` for errors, warnings, notices and info) to debug with.
  static let quiet: Void = {
    let level = ProcessInfo.processInfo.environment["WCS_LWS_LOG"].flatMap { Int32($0) } ?? 0
    lws_set_log_level(level, level == 0 ? nil : lwsl_emit_stderr)
  }()

  /// OpenSSL's set-up through libwebsockets, done once for the process by a context that is
  /// never destroyed. Every other context is created without `DO_SSL_GLOBAL_INIT` (their vhosts
  /// keep it, which is what turns TLS on for a vhost): each context created with it makes lws
  /// allocate a fresh `SSL` ex-data index and overwrite the global one its certificate-verify
  /// callback reads, so a TLS handshake of an older context that reaches verification after a
  /// newer context was created finds no connection there and fails ("certificate verify
  /// failed"). Two clients or a client and a server starting close together hit it.
  static let tlsLibrary: LWSContextHandle? = {
    quiet
    var info = lws_context_creation_info()
    info.port = -1  // CONTEXT_PORT_NO_LISTEN
    info.options = UInt64(
      LWS_SERVER_OPTION_EXPLICIT_VHOSTS | LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
    info.gid = -1
    info.uid = -1
    info.fd_limit_per_thread = 4
    return lws_create_context(&info).map { LWSContextHandle(pointer: $0) }
  }()

  /// Copies a request header known to libwebsockets (`WSI_TOKEN_*`), or `nil` when absent.
  static func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
    let length = lws_hdr_total_length(wsi, token)
    guard length > 0 else { return nil }
    var buffer = [CChar](repeating: 0, count: Int(length) + 1)
    let copied = lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token)
    guard copied >= 0 else { return nil }
    return String(decoding: buffer.prefix(Int(copied)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Copies a request header libwebsockets does not know by name (`x-custom`), or `nil`.
  static func customHeader(_ wsi: OpaquePointer, _ name: String) -> String? {
    let key = name.lowercased() + ":"
    let keyLength = Int32(key.utf8.count)
    let length = lws_hdr_custom_length(wsi, key, keyLength)
    guard length >= 0 else { return nil }
    var buffer = [CChar](repeating: 0, count: Int(length) + 1)
    let copied = lws_hdr_custom_copy(wsi, &buffer, Int32(buffer.count), key, keyLength)
    guard copied >= 0 else { return nil }
    return String(decoding: buffer.prefix(Int(copied)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// The peer's address as text (`127.0.0.1`; IPv4-mapped IPv6 shown as IPv4), or "".
  static func peerAddress(_ wsi: OpaquePointer) -> String {
    var buffer = [CChar](repeating: 0, count: 128)
    guard lws_get_peer_simple(wsi, &buffer, buffer.count) != nil else { return "" }
    let text = String(
      decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let mapped = "::ffff:"
    if text.lowercased().hasPrefix(mapped), text.contains(".") {
      return String(text.dropFirst(mapped.count))
    }
    return text
  }

  /// Writes one WebSocket frame. `first`: TEXT opcode, else CONTINUATION; `final`: FIN set.
  /// Returns `false` when libwebsockets reports an error or a short write.
  static func writeFrame(
    _ wsi: OpaquePointer, payload: ArraySlice<UInt8>, first: Bool, final: Bool
  ) -> Bool {
    let pre = wcs_lws_pre()
    var buffer = [UInt8](repeating: 0, count: pre + payload.count)
    buffer.replaceSubrange(pre..<buffer.count, with: payload)
    var flags = first ? LWS_WRITE_TEXT.rawValue : LWS_WRITE_CONTINUATION.rawValue
    if !final { flags |= LWS_WRITE_NO_FIN.rawValue }
    let written = buffer.withUnsafeMutableBufferPointer { bytes -> Int32 in
      guard let base = bytes.baseAddress else { return -1 }
      return lws_write(wsi, base + pre, payload.count, lws_write_protocol(rawValue: flags))
    }
    // lws buffers what the socket did not take and reports the whole frame as written; less
    // than the payload means the frame was cut and the connection is no longer usable.
    return written >= 0 && Int(written) >= payload.count
  }

  /// Sets the close code and reason sent when the callback next returns -1.
  static func setCloseReason(_ wsi: OpaquePointer, _ payload: WebSocketClosePayload) {
    var bytes = payload.reasonBytesForFrame
    let status = lws_close_status(rawValue: UInt32(payload.codeForFrame))
    bytes.withUnsafeMutableBufferPointer { reason in
      lws_close_reason(wsi, status, reason.baseAddress, reason.count)
    }
  }
}

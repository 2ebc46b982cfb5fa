import COpenSSL
import CWebSockets
import Synchronization

/// OpenSSL client contexts (`SSL_CTX`) handed to libwebsockets as `provided_client_ssl_ctx`.
///
/// Left to itself, libwebsockets builds a client `SSL_CTX` in every `lws_create_context` and
/// parses the whole system CA bundle into it: 150–180 ms per connection on a Debian machine,
/// before the first TCP packet. Loading the trust store once per process and sharing the context
/// brings a connection's set-up to well under a millisecond. Certificate checks are unaffected:
/// libwebsockets sets peer verification and the expected host name on each connection's `SSL`
/// object, from that connection's `LCCSCF_*` flags.
///
/// `@unchecked Sendable`: an `SSL_CTX` is reference counted by OpenSSL and may be used by many
/// threads at once to create `SSL` objects once it is configured; it is configured completely
/// before it leaves `make`, and never changed after.
final class ClientTLSContext: @unchecked Sendable {
  /// The `SSL_CTX *`.
  let pointer: OpaquePointer

  private init(pointer: OpaquePointer) { self.pointer = pointer }

  deinit { SSL_CTX_free(pointer) }

  /// Where the trust anchors come from.
  enum TrustStore: Hashable {
    /// No anchors: for `ws://`, where no TLS happens.
    case none
    /// The system's store (`SSL_CTX_set_default_verify_paths`: `/etc/ssl/certs`).
    case system
    /// One PEM file of CA certificates.
    case file(String)
  }

  /// Contexts shared by every connection of the process, built on first use.
  private static let shared = Mutex<[TrustStore: ClientTLSContext]>([:])

  /// The context for `store`. `.none` and `.system` are built once per process; a CA file is
  /// read for each call, so a file replaced on disk is seen by the next connection.
  /// - Throws: `SignalingTransportError.connectionFailed` if OpenSSL cannot create the context
  ///   or cannot read the CA file (the reason names the file).
  static func context(for store: TrustStore) throws(SignalingTransportError) -> ClientTLSContext {
    if case .file = store { return try make(store) }
    // Built under the lock so concurrent first connections load the system store only once.
    return try shared.withLock { (contexts) throws(SignalingTransportError) -> ClientTLSContext in
      if let existing = contexts[store] { return existing }
      let context = try make(store)
      contexts[store] = context
      return context
    }
  }

  private static func make(_ store: TrustStore) throws(SignalingTransportError) -> ClientTLSContext
  {
    guard let method = TLS_client_method(), let pointer = SSL_CTX_new(method) else {
      throw .connectionFailed(reason: "OpenSSL could not create a TLS client context")
    }
    let context = ClientTLSContext(pointer: pointer)
    _ = wcs_ssl_ctx_set_min_proto_version(pointer, TLS1_2_VERSION)
    switch store {
    case .none:
      break
    case .system:
      // A store that fails to load leaves no anchors, so every certificate is refused: safe.
      SSL_CTX_set_default_verify_paths(pointer)
    case .file(let path):
      guard SSL_CTX_load_verify_locations(pointer, path, nil) == 1 else {
        ERR_clear_error()
        throw .connectionFailed(reason: "could not read CA certificates from \(path)")
      }
    }
    return context
  }
}

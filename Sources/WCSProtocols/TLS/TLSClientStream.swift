import COpenSSL

/// How a `TLSClientStream` authenticates its server.
public struct TLSClientOptions: Sendable, Hashable {
  /// Verify the server's certificate chain and name (default `true`). `false` accepts any
  /// certificate, self-signed or for another name: for tests only, as
  /// `SignalingConnectOptions.verifyCertificates` for `wss://`.
  public var verifyCertificates: Bool
  /// A PEM file of CA certificates to trust instead of the system store.
  public var caFile: String?

  /// Options; defaults: verified against the system CA store.
  public init(verifyCertificates: Bool = true, caFile: String? = nil) {
    self.verifyCertificates = verifyCertificates
    self.caFile = caFile
  }
}

/// Why a `TLSClientStream` failed. The stream is over after any of them.
public enum TLSClientStreamError: Error, Equatable, Sendable, CustomStringConvertible {
  /// OpenSSL could not make the context or connection, or refused a setting.
  case setupFailed(reason: String)
  /// The handshake failed; `verification` is the certificate check's verdict when that was
  /// the cause (`X509_verify_cert_error_string`, e.g. "self-signed certificate").
  case handshakeFailed(reason: String, verification: String?)
  /// A record after the handshake did not decrypt or the server sent a fatal alert.
  case connectionFailed(reason: String)
  /// The server closed the TLS session (close_notify).
  case closed

  /// A one-line explanation.
  public var description: String {
    switch self {
    case .setupFailed(let reason): return "TLS setup failed: \(reason)"
    case .handshakeFailed(let reason, let verification):
      return verification.map { "TLS certificate rejected: \($0)" }
        ?? "TLS handshake failed: \(reason)"
    case .connectionFailed(let reason): return "TLS connection failed: \(reason)"
    case .closed: return "TLS session closed by the server"
    }
  }
}

/// A Sans-I/O TLS 1.2+ client (OpenSSL over memory BIOs) for TURN over TLS (RFC 8656 §3.1,
/// `turns:`): bytes read from the TCP connection go in through `receive`, which returns the
/// plaintext they completed; plaintext to send goes in through `write`; `takeOutput` gives the
/// ciphertext (handshake flights and records) to write to the connection. Plaintext written
/// before the handshake completes waits for it.
///
/// The server is authenticated by default: its chain against the system store (or `caFile`)
/// and its name (`serverName`: a DNS name, checked with the certificate's subjectAltName and
/// sent as SNI, or an IP address literal, checked against its IP subjectAltName).
///
/// Not thread-safe: use it from one thread or loop.
public final class TLSClientStream {
  /// Whether the handshake completed (and the certificate verified, when asked).
  public private(set) var isEstablished = false
  /// Whether the stream failed or was closed.
  public private(set) var isFinished = false
  /// The negotiated protocol ("TLSv1.3"), once established.
  public private(set) var protocolVersion: String?

  private let context: OpaquePointer
  private let ssl: OpaquePointer
  /// Ciphertext from the network, read by OpenSSL; owned by `ssl`.
  private let networkIn: OpaquePointer
  /// Ciphertext for the network, written by OpenSSL; owned by `ssl`.
  private let networkOut: OpaquePointer
  private var pendingPlaintext: [UInt8] = []
  /// Plaintext held back before the handshake at most, bytes.
  public static let maximumPendingPlaintext = 1 << 20

  /// A client for `serverName`.
  ///
  /// - Throws: `TLSClientStreamError.setupFailed` (e.g. an unreadable `caFile`).
  public init(serverName: String, options: TLSClientOptions = TLSClientOptions())
    throws(TLSClientStreamError)
  {
    func failure(_ step: String) -> TLSClientStreamError {
      .setupFailed(reason: "\(step): \(OpenSSLErrorQueue.drain())")
    }
    guard let context = SSL_CTX_new(TLS_client_method()) else { throw failure("SSL_CTX_new") }
    guard wcs_ssl_ctx_set_min_proto_version(context, Int32(TLS1_2_VERSION)) == 1 else {
      SSL_CTX_free(context)
      throw failure("minimum TLS 1.2")
    }
    if options.verifyCertificates {
      SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
      let loaded =
        options.caFile.map { SSL_CTX_load_verify_locations(context, $0, nil) == 1 }
        ?? (SSL_CTX_set_default_verify_paths(context) == 1)
      guard loaded else {
        SSL_CTX_free(context)
        throw failure("CA certificates \(options.caFile ?? "(system)")")
      }
    } else {
      SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
    }
    guard let ssl = SSL_new(context) else {
      SSL_CTX_free(context)
      throw failure("SSL_new")
    }
    guard let networkIn = BIO_new(BIO_s_mem()), let networkOut = BIO_new(BIO_s_mem()) else {
      SSL_free(ssl)
      SSL_CTX_free(context)
      throw failure("BIO_new")
    }
    // An empty input BIO means "wait for more", not end of file.
    _ = wcs_bio_set_mem_eof_return(networkIn, -1)
    SSL_set_bio(ssl, networkIn, networkOut)
    SSL_set_connect_state(ssl)
    self.context = context
    self.ssl = ssl
    self.networkIn = networkIn
    self.networkOut = networkOut
    if options.verifyCertificates {
      let isAddress = ICEIPAddress(serverName) != nil
      let named =
        isAddress
        ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName) == 1
        : SSL_set1_host(ssl, serverName) == 1
      guard named else { throw failure("server name \(serverName)") }
    }
    // SNI is for names only (RFC 6066 §3: no IP literals).
    if ICEIPAddress(serverName) == nil { _ = wcs_ssl_set_tlsext_host_name(ssl, serverName) }
  }

  deinit {
    SSL_free(ssl)
    SSL_CTX_free(context)
  }

  /// Starts the handshake: the ClientHello is in `takeOutput()` afterwards.
  public func start() throws(TLSClientStreamError) {
    try advanceHandshake()
  }

  /// Ciphertext to write to the connection, oldest first (empty when there is none).
  public func takeOutput() -> [UInt8] {
    let pending = Int(BIO_ctrl_pending(networkOut))
    guard pending > 0 else { return [] }
    var bytes = [UInt8](repeating: 0, count: pending)
    let read = bytes.withUnsafeMutableBytes { BIO_read(networkOut, $0.baseAddress, Int32(pending)) }
    return read > 0 ? Array(bytes.prefix(Int(read))) : []
  }

  /// Takes ciphertext read from the connection; returns the plaintext it completed (empty
  /// during the handshake). Check `takeOutput()` afterwards: the handshake or a key update may
  /// have to answer.
  ///
  /// - Throws: `TLSClientStreamError`; the stream is over then.
  public func receive(_ bytes: some Collection<UInt8>) throws(TLSClientStreamError) -> [UInt8] {
    guard !isFinished else { throw .closed }
    let written = Array(bytes).withUnsafeBytes {
      BIO_write(networkIn, $0.baseAddress, Int32($0.count))
    }
    guard written == bytes.count else {
      isFinished = true
      throw .connectionFailed(reason: "BIO_write: \(OpenSSLErrorQueue.drain())")
    }
    if !isEstablished {
      try advanceHandshake()
      guard isEstablished else { return [] }
    }
    var plaintext: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 16 << 10)
    while true {
      let count = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
      if count > 0 {
        plaintext += buffer.prefix(Int(count))
        continue
      }
      switch SSL_get_error(ssl, count) {
      case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
        return plaintext
      case SSL_ERROR_ZERO_RETURN:
        isFinished = true
        throw .closed
      default:
        isFinished = true
        throw .connectionFailed(reason: OpenSSLErrorQueue.drain())
      }
    }
  }

  /// Encrypts `plaintext` into `takeOutput()`, or holds it until the handshake completes.
  ///
  /// - Throws: `.closed` after the stream ended; `.connectionFailed` when OpenSSL refuses or
  ///   more than `maximumPendingPlaintext` bytes would wait for the handshake.
  public func write(_ plaintext: [UInt8]) throws(TLSClientStreamError) {
    guard !isFinished else { throw .closed }
    guard !plaintext.isEmpty else { return }
    guard isEstablished else {
      guard pendingPlaintext.count + plaintext.count <= Self.maximumPendingPlaintext else {
        throw .connectionFailed(
          reason: "over \(Self.maximumPendingPlaintext) bytes wait for the handshake")
      }
      pendingPlaintext += plaintext
      return
    }
    let written = plaintext.withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }
    guard written == plaintext.count else {
      isFinished = true
      throw .connectionFailed(reason: "SSL_write: \(OpenSSLErrorQueue.drain())")
    }
  }

  private func advanceHandshake() throws(TLSClientStreamError) {
    guard !isEstablished, !isFinished else { return }
    let result = SSL_do_handshake(ssl)
    if result == 1 {
      isEstablished = true
      protocolVersion = SSL_get_version(ssl).map { String(cString: $0) }
      let held = pendingPlaintext
      pendingPlaintext = []
      try write(held)
      return
    }
    let error = SSL_get_error(ssl, result)
    if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE { return }
    isFinished = true
    let verdict = SSL_get_verify_result(ssl)
    let verification =
      verdict == X509_V_OK ? nil : String(cString: X509_verify_cert_error_string(verdict))
    throw .handshakeFailed(reason: OpenSSLErrorQueue.drain(), verification: verification)
  }
}

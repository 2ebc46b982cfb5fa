/// Why a DTLS certificate, fingerprint or endpoint operation failed.
///
/// Carried by `DTLSEvent.failed(_:)` for failures of a running endpoint (the session is over), and
/// thrown by the setup calls (certificate generation, endpoint creation, fingerprint parsing).
public enum DTLSError: Error, Equatable, Sendable, CustomStringConvertible {
  /// OpenSSL reported a fatal handshake or record-layer error; `reason` is the OpenSSL error
  /// queue rendered with `ERR_error_string_n` (or a short description when the queue is empty).
  case handshakeFailed(reason: String)
  /// The certificate the peer presented does not hash to the `a=fingerprint` from its SDP
  /// (RFC 8122 §5, RFC 5763 §5): the peer is not who signalling said it is.
  case fingerprintMismatch(expected: DTLSFingerprint, actual: DTLSFingerprint)
  /// OpenSSL reported a fatal error after the handshake (reading or writing application data);
  /// `reason` is the OpenSSL error queue.
  case connectionFailed(reason: String)
  /// The handshake finished without a peer certificate, so the peer cannot be authenticated.
  case missingPeerCertificate
  /// The handshake finished without a `use_srtp` protection profile both sides support
  /// (RFC 5764 §4.1.1), so no SRTP keys can be derived.
  case noSRTPProfileNegotiated
  /// The handshake did not finish: `retransmissions` flights were resent, or it ran longer than
  /// the endpoint's handshake timeout (`elapsed`, by the caller's clock).
  case timeout(retransmissions: Int, elapsed: Duration)
  /// An `a=fingerprint` value could not be parsed (RFC 8122 §5 syntax); `reason` says what was wrong.
  case invalidFingerprint(reason: String)
  /// OpenSSL could not create the key, certificate, context or connection object.
  case setupFailed(reason: String)
  /// `SSL_export_keying_material` failed after the handshake (RFC 5705 exporter).
  case keyingMaterialExportFailed(reason: String)
  /// The local and remote `a=setup` values do not give one client and one server
  /// (RFC 4145 §4, RFC 5763 §5).
  case incompatibleSetup(local: DTLSSetup, remote: DTLSSetup?)
  /// Application data was given to an endpoint whose handshake is not complete and verified, or
  /// that is closed or failed.
  case notConnected

  /// A one-line human-readable explanation.
  public var description: String {
    switch self {
    case .handshakeFailed(let reason):
      return "DTLS handshake failed: \(reason)"
    case .fingerprintMismatch(let expected, let actual):
      return "DTLS peer certificate fingerprint mismatch: SDP says \(expected.sdpValue), "
        + "certificate is \(actual.sdpValue)"
    case .connectionFailed(let reason):
      return "DTLS connection failed: \(reason)"
    case .missingPeerCertificate:
      return "DTLS peer sent no certificate"
    case .noSRTPProfileNegotiated:
      return "DTLS handshake negotiated no SRTP protection profile (use_srtp)"
    case .timeout(let retransmissions, let elapsed):
      return "DTLS handshake timed out after \(retransmissions) retransmissions and \(elapsed)"
    case .invalidFingerprint(let reason):
      return "invalid a=fingerprint: \(reason)"
    case .setupFailed(let reason):
      return "DTLS setup failed: \(reason)"
    case .keyingMaterialExportFailed(let reason):
      return "DTLS-SRTP keying material export failed: \(reason)"
    case .incompatibleSetup(let local, let remote):
      return
        "incompatible a=setup: local \(local.rawValue), remote \(remote?.rawValue ?? "missing")"
    case .notConnected:
      return "DTLS endpoint is not connected"
    }
  }
}

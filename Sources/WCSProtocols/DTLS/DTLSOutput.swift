/// Something a `DTLSEndpoint` reports to its owner.
public enum DTLSEvent: Equatable, Sendable {
  /// The handshake finished and the peer's certificate matched its SDP fingerprint. Carries the
  /// negotiated protection profile and `profile.keyingMaterialLength` bytes from the
  /// `EXTRACTOR-dtls_srtp` exporter (RFC 5764 §4.2): client key | server key | client salt |
  /// server salt. Reported once; nothing before it may be used for media.
  case connected(profile: DTLSSRTPProfile, keyingMaterial: [UInt8])
  /// The endpoint stopped for good; no further events follow.
  case failed(DTLSError)
  /// The peer sent close_notify (RFC 5246 §7.2.1); the endpoint is closed.
  case closed
  /// One decrypted application-data record from the peer (SCTP for data channels, RFC 8261).
  case applicationData([UInt8])
}

/// What one call into a `DTLSEndpoint` produced.
public struct DTLSOutput: Equatable, Sendable {
  /// Datagrams to send to the peer, in order; each at most the endpoint's MTU in bytes.
  public var datagrams: [[UInt8]]
  /// Events, in the order they happened.
  public var events: [DTLSEvent]

  /// An output with the given datagrams and events (both empty by default).
  public init(datagrams: [[UInt8]] = [], events: [DTLSEvent] = []) {
    self.datagrams = datagrams
    self.events = events
  }
}

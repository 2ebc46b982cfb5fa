import WCSPeerConnection

extension NativeMediaBackend {
  /// `PeerConnection.prepareSecurity()`: libsrtp's self-tests and the DTLS certificate, started
  /// ahead of the first connection, for a caller that sees the engine and not the peer
  /// connection below it (`FPWCSApi2Session`).
  package static func prepareSecurity() { PeerConnection.prepareSecurity() }
}

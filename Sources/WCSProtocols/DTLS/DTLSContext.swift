import COpenSSL

/// Builds the OpenSSL `SSL_CTX` every `DTLSEndpoint` uses: DTLS 1.2 only, our certificate, a
/// required peer certificate accepted by fingerprint only, `use_srtp` profiles, ECDHE groups,
/// and the MTU fixed by the caller rather than probed.
enum DTLSContext {
  /// Key exchange groups: X25519 and P-256 (RFC 8422 §5.1.1), what browsers offer over DTLS 1.2.
  static let groups = "X25519:P-256"

  /// A new `SSL_CTX`; the caller frees it with `SSL_CTX_free`.
  /// Throws `DTLSError.setupFailed` with the OpenSSL error if a setting is refused.
  static func make(certificate: DTLSCertificate, profiles: [DTLSSRTPProfile]) throws(DTLSError)
    -> OpaquePointer
  {
    guard let context = SSL_CTX_new(DTLS_method()) else {
      throw .setupFailed(reason: "SSL_CTX_new: \(OpenSSLErrorQueue.drain())")
    }
    do {
      try configure(context, certificate: certificate, profiles: profiles)
    } catch {
      SSL_CTX_free(context)
      throw error
    }
    return context
  }

  private static func configure(
    _ context: OpaquePointer, certificate: DTLSCertificate, profiles: [DTLSSRTPProfile]
  ) throws(DTLSError) {
    func check(_ ok: Bool, _ step: String) throws(DTLSError) {
      if !ok { throw .setupFailed(reason: "\(step): \(OpenSSLErrorQueue.drain())") }
    }
    let version = Int32(DTLS1_2_VERSION)
    try check(wcs_ssl_ctx_set_min_proto_version(context, version) == 1, "min version DTLS 1.2")
    try check(wcs_ssl_ctx_set_max_proto_version(context, version) == 1, "max version DTLS 1.2")
    try check(SSL_CTX_use_certificate(context, certificate.x509) == 1, "certificate")
    try check(SSL_CTX_use_PrivateKey(context, certificate.key) == 1, "private key")
    try check(SSL_CTX_check_private_key(context) == 1, "key matches certificate")
    wcs_ssl_ctx_request_peer_certificate(context)
    guard !profiles.isEmpty else { throw .setupFailed(reason: "no SRTP protection profile given") }
    let profileList = profiles.map(\.openSSLName).joined(separator: ":")
    // SSL_CTX_set_tlsext_use_srtp returns 0 on success.
    try check(SSL_CTX_set_tlsext_use_srtp(context, profileList) == 0, "use_srtp \(profileList)")
    try check(wcs_ssl_ctx_set1_groups_list(context, groups) == 1, "groups \(groups)")
    // SSL_OP_NO_TICKET (bit 14; SSL_OP_BIT is a function-like macro Swift cannot import): a
    // WebRTC association is never resumed, and a NewSessionTicket would only lengthen the final
    // flight.
    _ = SSL_CTX_set_options(context, UInt64(1) << 14)
    _ = wcs_ssl_ctx_set_no_query_mtu(context)
    _ = wcs_ssl_ctx_set_read_ahead(context, 1)
  }
}

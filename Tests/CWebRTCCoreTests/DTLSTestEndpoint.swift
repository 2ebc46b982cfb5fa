import CWebRTCCore

/// One side of a DTLS 1.2 handshake over memory BIOs (no sockets), with its own ECDSA P-256
/// self-signed certificate, as a WebRTC endpoint sets it up.
final class DTLSTestEndpoint {
  let isClient: Bool
  private let key: OpaquePointer
  private let certificate: OpaquePointer
  private let context: OpaquePointer
  private let ssl: OpaquePointer
  /// Datagrams the peer sent, read by OpenSSL.
  private let incoming: OpaquePointer
  /// Datagrams OpenSSL wrote, for the peer.
  private let outgoing: OpaquePointer

  init(isClient: Bool, srtpProfiles: String, commonName: String) throws {
    self.isClient = isClient
    guard let key = wcs_evp_ec_gen_p256() else {
      throw BindingTestError.openSSL("wcs_evp_ec_gen_p256", reason: openSSLErrors())
    }
    self.key = key
    guard let certificate = X509_new() else {
      EVP_PKEY_free(key)
      throw BindingTestError.openSSL("X509_new", reason: openSSLErrors())
    }
    self.certificate = certificate
    guard let context = SSL_CTX_new(DTLS_method()) else {
      X509_free(certificate)
      EVP_PKEY_free(key)
      throw BindingTestError.openSSL("SSL_CTX_new", reason: openSSLErrors())
    }
    self.context = context
    // SSL_new copies these context settings into the connection.
    // SSL_CTX_set_tlsext_use_srtp returns 0 on success.
    guard SSL_CTX_set_tlsext_use_srtp(context, srtpProfiles) == 0 else {
      SSL_CTX_free(context)
      X509_free(certificate)
      EVP_PKEY_free(key)
      throw BindingTestError.openSSL("SSL_CTX_set_tlsext_use_srtp", reason: openSSLErrors())
    }
    wcs_ssl_ctx_request_peer_certificate(context)
    _ = wcs_ssl_ctx_set_no_query_mtu(context)
    guard let ssl = SSL_new(context), let incoming = BIO_new(BIO_s_mem()),
      let outgoing = BIO_new(BIO_s_mem())
    else {
      SSL_CTX_free(context)
      X509_free(certificate)
      EVP_PKEY_free(key)
      throw BindingTestError.openSSL("SSL_new/BIO_new", reason: openSSLErrors())
    }
    self.ssl = ssl
    self.incoming = incoming
    self.outgoing = outgoing
    // SSL_free releases both BIOs from here on.
    SSL_set_bio(ssl, incoming, outgoing)

    try Self.sign(
      certificate, key: key, serial: isClient ? 1 : 2, commonName: commonName)
    guard SSL_use_certificate(ssl, certificate) == 1, SSL_use_PrivateKey(ssl, key) == 1,
      SSL_check_private_key(ssl) == 1
    else { throw BindingTestError.openSSL("SSL_use_certificate", reason: openSSLErrors()) }
    // An empty memory BIO means "no datagram yet", not end of stream.
    _ = wcs_bio_set_mem_eof_return(incoming, -1)
    _ = wcs_dtls_set_link_mtu(ssl, 1200)
    if isClient { SSL_set_connect_state(ssl) } else { SSL_set_accept_state(ssl) }
  }

  deinit {
    SSL_free(ssl)
    SSL_CTX_free(context)
    X509_free(certificate)
    EVP_PKEY_free(key)
  }

  private static func sign(
    _ certificate: OpaquePointer, key: OpaquePointer, serial: Int, commonName: String
  ) throws {
    let name = X509_get_subject_name(certificate)
    let nameBytes = Array(commonName.utf8)
    guard X509_set_version(certificate, 2) == 1,
      ASN1_INTEGER_set(X509_get_serialNumber(certificate), serial) == 1,
      X509_gmtime_adj(X509_getm_notBefore(certificate), -3600) != nil,
      X509_gmtime_adj(X509_getm_notAfter(certificate), 30 * 24 * 3600) != nil,
      X509_set_pubkey(certificate, key) == 1,
      X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, nameBytes, Int32(nameBytes.count), -1, 0)
        == 1,
      X509_set_issuer_name(certificate, name) == 1,
      X509_sign(certificate, key, EVP_sha256()) > 0
    else { throw BindingTestError.openSSL("building the certificate", reason: openSSLErrors()) }
  }

  /// SHA-256 of the DER certificate (the `a=fingerprint` value, RFC 8122 §5).
  var localFingerprint: [UInt8] { get throws { try Self.fingerprint(certificate) } }

  /// SHA-256 of the certificate the peer presented, or nil before the handshake.
  var peerFingerprint: [UInt8]? {
    get throws {
      guard let peer = SSL_get1_peer_certificate(ssl) else { return nil }
      defer { X509_free(peer) }
      return try Self.fingerprint(peer)
    }
  }

  static func fingerprint(_ certificate: OpaquePointer) throws -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
    var length: UInt32 = 0
    guard X509_digest(certificate, EVP_sha256(), &digest, &length) == 1 else {
      throw BindingTestError.openSSL("X509_digest", reason: openSSLErrors())
    }
    return Array(digest.prefix(Int(length)))
  }

  /// Runs the handshake as far as the datagrams received so far allow; true once it is done.
  func advanceHandshake() throws -> Bool {
    if SSL_is_init_finished(ssl) == 1 { return true }
    let result = SSL_do_handshake(ssl)
    if result == 1 { return true }
    let error = SSL_get_error(ssl, result)
    guard error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE else {
      throw BindingTestError.openSSL("SSL_do_handshake (\(error))", reason: openSSLErrors())
    }
    return false
  }

  /// Everything OpenSSL wrote since the last call (one or more DTLS records).
  func takeOutgoing() -> [UInt8] {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while case let count = BIO_read(outgoing, &chunk, Int32(chunk.count)), count > 0 {
      bytes += chunk.prefix(Int(count))
    }
    return bytes
  }

  func receive(_ datagram: [UInt8]) {
    guard !datagram.isEmpty else { return }
    _ = BIO_write(incoming, datagram, Int32(datagram.count))
  }

  /// The negotiated DTLS-SRTP protection profile (RFC 5764 §4.1.2): id and OpenSSL name.
  var selectedSRTPProfile: (id: UInt, name: String)? {
    guard let profile = SSL_get_selected_srtp_profile(ssl) else { return nil }
    return (UInt(profile.pointee.id), String(cString: profile.pointee.name))
  }

  /// RFC 5705 exporter output with no context (RFC 5764 §4.2 uses label EXTRACTOR-dtls_srtp).
  func exportKeyingMaterial(label: String, length: Int) throws -> [UInt8] {
    var output = [UInt8](repeating: 0, count: length)
    let labelBytes = Array(label.utf8)
    let status = labelBytes.withUnsafeBufferPointer { labelBuffer in
      labelBuffer.withMemoryRebound(to: CChar.self) { label in
        SSL_export_keying_material(ssl, &output, length, label.baseAddress, label.count, nil, 0, 0)
      }
    }
    guard status == 1 else {
      throw BindingTestError.openSSL("SSL_export_keying_material", reason: openSSLErrors())
    }
    return output
  }

  /// `DTLSv1_get_timeout`: the retransmission time left in microseconds, nil when no timer runs.
  var retransmissionTimeout: Int? {
    var seconds = 0
    var microseconds = 0
    guard wcs_dtls_get_timeout(ssl, &seconds, &microseconds) == 1 else { return nil }
    return seconds * 1_000_000 + microseconds
  }

  /// The negotiated protocol version name ("DTLSv1.2").
  var protocolVersion: String { String(cString: SSL_get_version(ssl)) }
}

import COpenSSL
import Glibc
import Synchronization

/// A self-signed ECDSA P-256 X.509 certificate and its private key, the identity a DTLS endpoint
/// presents; peers authenticate it by the SHA-256 fingerprint signalled in SDP (RFC 8122,
/// RFC 8827 §6.5). Subject and issuer CN "WCSApi2", random 64-bit serial, valid from one day
/// before creation for 30 days after it (by default), signed with ECDSA-SHA256.
///
/// Immutable after creation; the OpenSSL objects are freed when the last reference goes away.
public final class DTLSCertificate: @unchecked Sendable {
  // @unchecked Sendable: `key` and `x509` are never mutated after init; OpenSSL allows shared
  // read-only use of X509 / EVP_PKEY from several threads (SSL_CTX_use_* only up-refs them).
  let key: OpaquePointer
  let x509: OpaquePointer

  /// The certificate's DER encoding.
  public let derBytes: [UInt8]
  /// SHA-256 of `derBytes`, for `a=fingerprint:sha-256 ...`.
  public let fingerprint: DTLSFingerprint
  /// End of validity (X.509 notAfter), seconds since the Unix epoch.
  public let notAfter: Double

  /// How long a certificate is valid from its creation: 30 days.
  public static let defaultValidity: Double = 30 * 86_400

  private static let store = DTLSCertificateStore()

  /// The process-wide certificate, generated on first use and reused until it is within
  /// `DTLSCertificateStore.renewalMargin` (1 day) of its notAfter, then replaced, so a process
  /// running for months never presents an expired certificate (endpoints made earlier keep
  /// theirs). Generation costs a key pair. Safe to call from any thread. Throws
  /// `DTLSError.setupFailed` if OpenSSL cannot generate it; a later call tries again.
  public static var shared: DTLSCertificate {
    get throws(DTLSError) { try store.certificate() }
  }

  /// Generates a fresh key pair and self-signed certificate valid 30 days from now.
  /// Throws `DTLSError.setupFailed` with the OpenSSL error if any step fails.
  public convenience init() throws(DTLSError) {
    try self.init(validity: Self.defaultValidity, createdAt: DTLSCertificateStore.wallClock())
  }

  /// Generates a fresh key pair and self-signed certificate valid from one day before
  /// `createdAt` (seconds since the Unix epoch) until `validity` seconds after it.
  /// Throws `DTLSError.setupFailed` with the OpenSSL error if any step fails.
  public init(validity: Double, createdAt: Double) throws(DTLSError) {
    guard let key = wcs_evp_ec_gen_p256() else {
      throw .setupFailed(reason: "EC P-256 key generation: \(OpenSSLErrorQueue.drain())")
    }
    guard let x509 = X509_new() else {
      EVP_PKEY_free(key)
      throw .setupFailed(reason: "X509_new: \(OpenSSLErrorQueue.drain())")
    }
    do {
      try Self.fill(x509, key: key, createdAt: time_t(createdAt), validity: Int(validity))
      let der = try Self.derEncoding(of: x509)
      self.derBytes = der
      self.fingerprint = try DTLSFingerprint(algorithm: .sha256, derCertificate: der)
    } catch {
      X509_free(x509)
      EVP_PKEY_free(key)
      throw error
    }
    self.key = key
    self.x509 = x509
    self.notAfter = Double(time_t(createdAt) + Int(validity))
  }

  deinit {
    X509_free(x509)
    EVP_PKEY_free(key)
  }

  /// The fingerprint of this certificate with another hash function (RFC 8122 allows several).
  public func fingerprint(using algorithm: DTLSFingerprint.Algorithm) throws(DTLSError)
    -> DTLSFingerprint
  {
    try DTLSFingerprint(algorithm: algorithm, derCertificate: derBytes)
  }

  private static func fill(
    _ x509: OpaquePointer, key: OpaquePointer, createdAt: time_t, validity: Int
  ) throws(DTLSError) {
    func check(_ ok: Bool, _ step: String) throws(DTLSError) {
      if !ok { throw .setupFailed(reason: "\(step): \(OpenSSLErrorQueue.drain())") }
    }
    try check(X509_set_version(x509, 2) == 1, "X509_set_version")  // 2 means v3

    guard let serial = BN_new() else { throw .setupFailed(reason: "BN_new") }
    defer { BN_free(serial) }
    // 63 random bits with the top bit clear keep the DER INTEGER positive and at most 8 bytes.
    try check(BN_rand(serial, 63, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1, "BN_rand")
    try check(BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(x509)) != nil, "serial number")

    var anchor = createdAt
    // One day back so a peer whose clock runs behind still sees a valid certificate.
    try check(X509_time_adj_ex(X509_getm_notBefore(x509), -1, 0, &anchor) != nil, "notBefore")
    try check(X509_time_adj_ex(X509_getm_notAfter(x509), 0, validity, &anchor) != nil, "notAfter")

    guard let name = X509_get_subject_name(x509) else { throw .setupFailed(reason: "subject") }
    let added = X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, "WCSApi2", -1, -1, 0)
    try check(added == 1, "subject CN")
    try check(X509_set_issuer_name(x509, name) == 1, "issuer")
    try check(X509_set_pubkey(x509, key) == 1, "X509_set_pubkey")
    try check(X509_sign(x509, key, EVP_sha256()) > 0, "X509_sign")
  }

  /// The DER encoding of an OpenSSL `X509`; throws `DTLSError.setupFailed` if it cannot be encoded.
  static func derEncoding(of x509: OpaquePointer) throws(DTLSError) -> [UInt8] {
    var buffer: UnsafeMutablePointer<UInt8>? = nil
    let length = i2d_X509(x509, &buffer)
    guard length > 0, let buffer else {
      throw .setupFailed(reason: "i2d_X509: \(OpenSSLErrorQueue.drain())")
    }
    defer { wcs_openssl_free(buffer) }
    return Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
  }
}

/// Hands out one shared certificate and replaces it before it expires. The clock and validity
/// are injectable so tests can run a month in a moment.
final class DTLSCertificateStore: Sendable {
  /// A certificate is replaced once `now` is this close to its notAfter: 1 day.
  static let renewalMargin: Double = 86_400

  let validity: Double
  let clock: @Sendable () -> Double
  private let current = Mutex<DTLSCertificate?>(nil)

  init(
    validity: Double = DTLSCertificate.defaultValidity,
    clock: @escaping @Sendable () -> Double = DTLSCertificateStore.wallClock
  ) {
    self.validity = validity
    self.clock = clock
  }

  /// The current certificate, generated when there is none or it is within `renewalMargin`
  /// of its notAfter.
  func certificate() throws(DTLSError) -> DTLSCertificate {
    let now = clock()
    return try current.withLock {
      (cached: inout DTLSCertificate?) throws(DTLSError) -> DTLSCertificate in
      if let cached, now < cached.notAfter - Self.renewalMargin { return cached }
      let made = try DTLSCertificate(validity: validity, createdAt: now)
      cached = made
      return made
    }
  }

  /// Seconds since the Unix epoch (X.509 validity is wall-clock time).
  @Sendable static func wallClock() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
  }
}

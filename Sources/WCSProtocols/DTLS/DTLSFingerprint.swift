import COpenSSL

/// A certificate fingerprint as carried in SDP `a=fingerprint:<hash-func> <hex:hex:...>`
/// (RFC 8122 §5): the hash of the certificate's DER encoding.
public struct DTLSFingerprint: Equatable, Hashable, Sendable, CustomStringConvertible {
  /// The hash function named in the attribute (RFC 8122 §5, "hash-func" registry).
  public enum Algorithm: String, Sendable, CaseIterable {
    /// `sha-1`, 20-byte digest.
    case sha1 = "sha-1"
    /// `sha-256`, 32-byte digest; what WebRTC endpoints send.
    case sha256 = "sha-256"
    /// `sha-384`, 48-byte digest.
    case sha384 = "sha-384"
    /// `sha-512`, 64-byte digest.
    case sha512 = "sha-512"

    /// Digest length in bytes.
    public var digestLength: Int {
      switch self {
      case .sha1: return 20
      case .sha256: return 32
      case .sha384: return 48
      case .sha512: return 64
      }
    }

    var evpMessageDigest: OpaquePointer? {
      switch self {
      case .sha1: return EVP_sha1()
      case .sha256: return EVP_sha256()
      case .sha384: return EVP_sha384()
      case .sha512: return EVP_sha512()
      }
    }
  }

  /// The hash function.
  public let algorithm: Algorithm
  /// The digest, `algorithm.digestLength` bytes.
  public let bytes: [UInt8]

  /// A fingerprint from a digest; throws `DTLSError.invalidFingerprint` if `bytes` is not
  /// `algorithm.digestLength` long.
  public init(algorithm: Algorithm, bytes: [UInt8]) throws(DTLSError) {
    guard bytes.count == algorithm.digestLength else {
      throw .invalidFingerprint(
        reason: "\(algorithm.rawValue) needs \(algorithm.digestLength) bytes, got \(bytes.count)")
    }
    self.algorithm = algorithm
    self.bytes = bytes
  }

  /// Parses an `a=fingerprint` value such as `sha-256 AB:CD:...` (the `a=fingerprint:` prefix
  /// is accepted too). The hash name and the hex digits are case-insensitive (RFC 8122 §5).
  ///
  /// Throws `DTLSError.invalidFingerprint` for an unknown or unsupported hash function, a group
  /// that is not two hex digits, or a digest of the wrong length.
  public init(parsing text: String) throws(DTLSError) {
    var value = Substring(text).trimmingWhitespace()
    let prefix = "a=fingerprint:"
    if value.lowercased().hasPrefix(prefix) {
      value = value.dropFirst(prefix.count).trimmingWhitespace()
    }
    let parts = value.split(whereSeparator: \.isWhitespace)
    guard parts.count == 2 else {
      throw .invalidFingerprint(reason: "expected '<hash-func> <hex:hex:...>', got '\(text)'")
    }
    guard let algorithm = Algorithm(rawValue: parts[0].lowercased()) else {
      throw .invalidFingerprint(reason: "unsupported hash function '\(parts[0])'")
    }
    var bytes: [UInt8] = []
    for group in parts[1].split(separator: ":", omittingEmptySubsequences: false) {
      // The explicit digit check keeps out the sign `UInt8(_:radix:)` would accept.
      guard group.count == 2, group.allSatisfy(\.isHexDigit), let byte = UInt8(group, radix: 16)
      else {
        throw .invalidFingerprint(reason: "'\(group)' is not two hex digits")
      }
      bytes.append(byte)
    }
    try self.init(algorithm: algorithm, bytes: bytes)
  }

  /// The hash of a DER-encoded certificate with `algorithm`; throws `DTLSError.setupFailed` if
  /// OpenSSL cannot compute the digest.
  public init(algorithm: Algorithm, derCertificate: [UInt8]) throws(DTLSError) {
    var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
    var length: UInt32 = 0
    let ok = derCertificate.withUnsafeBytes { der in
      digest.withUnsafeMutableBufferPointer { out in
        EVP_Digest(
          der.baseAddress, der.count, out.baseAddress, &length, algorithm.evpMessageDigest, nil)
      }
    }
    guard ok == 1 else {
      throw .setupFailed(reason: "EVP_Digest(\(algorithm.rawValue)): \(OpenSSLErrorQueue.drain())")
    }
    try self.init(algorithm: algorithm, bytes: Array(digest.prefix(Int(length))))
  }

  /// Checks a DER certificate against the fingerprints a peer signalled: RFC 8122 §5 lets an
  /// endpoint give several (one per hash function or certificate), and a certificate matching
  /// any of them is the peer's. Returns `nil` on a match; otherwise the first expected
  /// fingerprint and the certificate's fingerprint with its hash function, for
  /// `DTLSError.fingerprintMismatch`. Throws `DTLSError.setupFailed` if hashing fails and
  /// `DTLSError.invalidFingerprint` when `expected` is empty.
  static func mismatch(derCertificate der: [UInt8], expected: [DTLSFingerprint]) throws(DTLSError)
    -> (expected: DTLSFingerprint, actual: DTLSFingerprint)?
  {
    guard let first = expected.first else {
      throw .invalidFingerprint(reason: "no fingerprint to compare the certificate with")
    }
    var digests: [Algorithm: DTLSFingerprint] = [:]
    for candidate in expected {
      let actual: DTLSFingerprint
      if let known = digests[candidate.algorithm] {
        actual = known
      } else {
        actual = try DTLSFingerprint(algorithm: candidate.algorithm, derCertificate: der)
        digests[candidate.algorithm] = actual
      }
      if actual == candidate { return nil }
    }
    return (first, digests[first.algorithm] ?? first)
  }

  /// Uppercase hex bytes joined by colons, e.g. `AB:CD:01`.
  public var hexString: String {
    bytes.map { byte in
      let hex = String(byte, radix: 16, uppercase: true)
      return hex.count == 1 ? "0" + hex : hex
    }.joined(separator: ":")
  }

  /// The attribute value, `sha-256 AB:CD:...` (RFC 8122 §5), without `a=fingerprint:`.
  public var sdpValue: String { "\(algorithm.rawValue) \(hexString)" }

  /// Same as `sdpValue`.
  public var description: String { sdpValue }
}

extension Substring {
  fileprivate func trimmingWhitespace() -> Substring {
    // Character.isWhitespace also covers "\r\n", which is one Character in Swift.
    guard let first = firstIndex(where: { !$0.isWhitespace }),
      let last = lastIndex(where: { !$0.isWhitespace })
    else { return Substring() }
    return self[first...last]
  }
}

import COpenSSL
import Synchronization

/// The HMAC algorithm for MESSAGE-INTEGRITY (SHA-1, RFC 8489 §14.5) or
/// MESSAGE-INTEGRITY-SHA256 (RFC 8489 §14.6).
public enum STUNIntegrityAlgorithm: Sendable, Hashable {
  /// HMAC-SHA1, 20 bytes.
  case sha1
  /// HMAC-SHA256, 32 bytes.
  case sha256

  /// The MAC size in bytes.
  public var size: Int { self == .sha1 ? 20 : 32 }
}

/// Which integrity attributes `STUNMessage.encode` appends: MESSAGE-INTEGRITY, then
/// MESSAGE-INTEGRITY-SHA256 (RFC 8489 §14.5-14.6 order).
public struct STUNIntegrityAlgorithms: OptionSet, Sendable {
  /// The bits.
  public var rawValue: UInt8
  /// Wraps bits.
  public init(rawValue: UInt8) { self.rawValue = rawValue }
  /// MESSAGE-INTEGRITY (HMAC-SHA1).
  public static let sha1 = STUNIntegrityAlgorithms(rawValue: 1)
  /// MESSAGE-INTEGRITY-SHA256.
  public static let sha256 = STUNIntegrityAlgorithms(rawValue: 2)

  /// The selected algorithms in wire order.
  var ordered: [STUNIntegrityAlgorithm] {
    switch (contains(.sha1), contains(.sha256)) {
    case (true, true): return [.sha1, .sha256]
    case (true, false): return [.sha1]
    case (false, true): return [.sha256]
    case (false, false): return []
    }
  }
}

/// A key for STUN message integrity: the short-term credential (the ICE password, RFC 8489
/// §9.1.1) or the long-term key MD5(username ":" realm ":" password) (RFC 8489 §9.2.2).
/// HMACs are computed by OpenSSL (`EVP_MAC`), one keyed context per algorithm, re-initialised per
/// message.
// @unchecked Sendable: the key bytes are immutable and the two OpenSSL contexts are only touched
// inside `lock`.
public final class STUNIntegrityKey: @unchecked Sendable {
  /// The raw key bytes.
  public let bytes: [UInt8]
  private let lock = Mutex(())
  private let sha1Context: OpaquePointer?
  private let sha256Context: OpaquePointer?

  /// A key from raw bytes (for short-term credentials: the UTF-8 password).
  public init(bytes: [UInt8]) {
    self.bytes = bytes
    sha1Context = Self.makeContext(digest: "SHA1", key: bytes)
    sha256Context = Self.makeContext(digest: "SHA256", key: bytes)
  }

  /// The short-term key: the password's UTF-8 bytes (ICE passwords are ASCII, so SASLprep /
  /// OpaqueString leaves them unchanged).
  public convenience init(shortTermPassword password: String) {
    self.init(bytes: Array(password.utf8))
  }

  /// The long-term key MD5(username ":" realm ":" password) (RFC 8489 §9.2.2, MD5 algorithm).
  /// The password must already be SASLprep-processed. Throws `STUNError.cryptoFailure` if OpenSSL
  /// cannot compute MD5.
  public static func longTerm(username: String, realm: String, password: String) throws
    -> STUNIntegrityKey
  {
    let input = Array("\(username):\(realm):\(password)".utf8)
    var digest = [UInt8](repeating: 0, count: 16)
    var length: UInt32 = 0
    let ok = input.withUnsafeBytes { raw in
      EVP_Digest(raw.baseAddress, raw.count, &digest, &length, EVP_md5(), nil)
    }
    guard ok == 1, length == 16 else { throw STUNError.cryptoFailure("MD5") }
    return STUNIntegrityKey(bytes: digest)
  }

  deinit {
    EVP_MAC_CTX_free(sha1Context)
    EVP_MAC_CTX_free(sha256Context)
  }

  /// HMAC of `header` (the 20-byte header with its length field adjusted) followed by `body`.
  /// Throws `STUNError.cryptoFailure` if OpenSSL fails.
  func mac(
    _ algorithm: STUNIntegrityAlgorithm, header: UnsafeRawBufferPointer,
    body: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
  ) throws {
    let context = algorithm == .sha1 ? sha1Context : sha256Context
    let ok: Bool = lock.withLock { _ in
      guard let context else { return false }
      // A NULL key re-initialises the HMAC with the key set at creation.
      guard EVP_MAC_init(context, nil, 0, nil) == 1 else { return false }
      guard
        EVP_MAC_update(
          context, header.baseAddress?.assumingMemoryBound(to: UInt8.self), header.count)
          == 1,
        EVP_MAC_update(context, body.baseAddress?.assumingMemoryBound(to: UInt8.self), body.count)
          == 1
      else { return false }
      var written = 0
      let result = EVP_MAC_final(
        context, output.baseAddress?.assumingMemoryBound(to: UInt8.self), &written, output.count)
      return result == 1 && written == algorithm.size
    }
    guard ok else { throw STUNError.cryptoFailure("HMAC") }
  }

  private static func makeContext(digest: String, key: [UInt8]) -> OpaquePointer? {
    guard let mac = HMACAlgorithm.shared.mac, let context = EVP_MAC_CTX_new(mac) else {
      return nil
    }
    // OSSL_PARAM keeps the pointers it is given, so both strings must outlive EVP_MAC_init.
    guard let name = strdup("digest"), let value = strdup(digest) else {
      EVP_MAC_CTX_free(context)
      return nil
    }
    defer {
      free(name)
      free(value)
    }
    let initialised: Int32 = {
      var params = [
        OSSL_PARAM_construct_utf8_string(name, value, 0), OSSL_PARAM_construct_end(),
      ]
      // An empty key still needs a valid pointer for OpenSSL.
      var keyBytes = key.isEmpty ? [UInt8(0)] : key
      return keyBytes.withUnsafeMutableBufferPointer { buffer in
        EVP_MAC_init(context, buffer.baseAddress, key.count, &params)
      }
    }()
    guard initialised == 1 else {
      EVP_MAC_CTX_free(context)
      return nil
    }
    return context
  }
}

/// The fetched HMAC implementation, shared by every key.
// @unchecked Sendable: an `EVP_MAC` is immutable after `EVP_MAC_fetch` and OpenSSL documents
// fetched algorithms as safe to use from any thread.
private final class HMACAlgorithm: @unchecked Sendable {
  static let shared = HMACAlgorithm()
  let mac: OpaquePointer?
  private init() { mac = EVP_MAC_fetch(nil, "HMAC", nil) }
}

/// Why a STUN message was rejected (RFC 8489 §6.3, §14). Thrown by `STUNMessage.decode` and
/// the integrity checks; never a crash.
public enum STUNError: Error, Equatable, Sendable {
  /// Fewer than 20 bytes, or fewer bytes than the header's length field promises.
  case truncated(needed: Int, available: Int)
  /// The first two bits are not zero (not STUN, RFC 8489 §6).
  case notSTUN
  /// The magic cookie is not 0x2112A442.
  case badMagicCookie(UInt32)
  /// The length field is not a multiple of 4, or does not match the datagram size.
  case badLength(declared: Int, available: Int)
  /// An attribute's length runs past the end of the message.
  case attributeOverrun(type: UInt16, offset: Int, length: Int)
  /// A known attribute has a value of the wrong shape (`reason` says which).
  case malformedAttribute(type: UInt16, reason: String)
  /// FINGERPRINT is present but its CRC-32 does not match (RFC 8489 §14.7).
  case fingerprintMismatch(expected: UInt32, found: UInt32)
  /// FINGERPRINT is not the last attribute.
  case fingerprintNotLast
  /// The message has no MESSAGE-INTEGRITY or MESSAGE-INTEGRITY-SHA256 to verify.
  case integrityMissing
  /// The HMAC does not match with the given key (RFC 8489 §14.5, §14.6).
  case integrityMismatch
  /// OpenSSL could not compute an HMAC or digest.
  case cryptoFailure(String)
}

/// DTLS-SRTP protection profiles this stack offers (RFC 5764 §4.1.2, RFC 7714 §14.2).
///
/// The raw value is the profile identifier carried in the DTLS `use_srtp` extension.
public enum SRTPProtectionProfile: UInt16, CaseIterable, Sendable {
  /// SRTP_AES128_CM_HMAC_SHA1_80: AES-128 counter mode, HMAC-SHA1 with an 80-bit tag.
  case aes128CMHMACSHA1_80 = 0x0001
  /// SRTP_AES128_CM_HMAC_SHA1_32: as above with a 32-bit RTP tag (SRTCP keeps 80 bits).
  case aes128CMHMACSHA1_32 = 0x0002
  /// SRTP_AEAD_AES_128_GCM: AES-128-GCM with a 16-octet tag (RFC 7714).
  case aeadAES128GCM = 0x0007
  /// SRTP_AEAD_AES_256_GCM: AES-256-GCM with a 16-octet tag (RFC 7714).
  case aeadAES256GCM = 0x0008

  /// Master key length in octets (16 or 32).
  public var keyLength: Int {
    switch self {
    case .aes128CMHMACSHA1_80, .aes128CMHMACSHA1_32, .aeadAES128GCM: return 16
    case .aeadAES256GCM: return 32
    }
  }

  /// Master salt length in octets: 14 for AES-CM (RFC 3711), 12 for GCM (RFC 7714 §12).
  public var saltLength: Int {
    switch self {
    case .aes128CMHMACSHA1_80, .aes128CMHMACSHA1_32: return 14
    case .aeadAES128GCM, .aeadAES256GCM: return 12
    }
  }

  /// Octets SRTP appends to an RTP packet (the authentication tag).
  public var rtpTrailerLength: Int {
    switch self {
    case .aes128CMHMACSHA1_80: return 10
    case .aes128CMHMACSHA1_32: return 4
    case .aeadAES128GCM, .aeadAES256GCM: return 16
    }
  }

  /// Octets SRTCP appends to an RTCP packet: the tag plus the 4-octet E flag and SRTCP index.
  public var rtcpTrailerLength: Int {
    switch self {
    case .aes128CMHMACSHA1_80, .aes128CMHMACSHA1_32: return 10 + 4
    case .aeadAES128GCM, .aeadAES256GCM: return 16 + 4
    }
  }

  /// Octets of DTLS keying material to export: 2 × (key + salt) (RFC 5764 §4.2).
  public var keyingMaterialLength: Int { 2 * (keyLength + saltLength) }
}

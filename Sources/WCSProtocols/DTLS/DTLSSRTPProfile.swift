/// A DTLS-SRTP protection profile negotiated by the `use_srtp` extension (RFC 5764 §4.1.2,
/// RFC 7714 §14.2), with the key and salt lengths that size the exported keying material.
///
/// The DTLS side of the registry `SRTPProtectionProfile` keys SRTP with: the same ids
/// (`srtpProfile`), plus what the handshake needs (OpenSSL names, exporter length).
public enum DTLSSRTPProfile: UInt16, Sendable, CaseIterable, CustomStringConvertible {
  /// `SRTP_AES128_CM_HMAC_SHA1_80`, id 0x0001: 16-byte key, 14-byte salt.
  case aes128CMHMACSHA1_80 = 0x0001
  /// `SRTP_AES128_CM_HMAC_SHA1_32`, id 0x0002: 16-byte key, 14-byte salt.
  case aes128CMHMACSHA1_32 = 0x0002
  /// `SRTP_AEAD_AES_128_GCM`, id 0x0007: 16-byte key, 12-byte salt.
  case aeadAES128GCM = 0x0007
  /// `SRTP_AEAD_AES_256_GCM`, id 0x0008: 32-byte key, 12-byte salt.
  case aeadAES256GCM = 0x0008

  /// What a WebRTC endpoint offers by default: AEAD-GCM first (cheaper and stronger), then the
  /// mandatory-to-implement AES-CM with an 80-bit tag (RFC 8827 §6.5).
  public static let defaultOffer: [DTLSSRTPProfile] = [.aeadAES128GCM, .aes128CMHMACSHA1_80]

  /// The profile with the RFC 5764 / RFC 7714 id, or `nil` for ids this stack does not support.
  public init?(id: UInt16) {
    self.init(rawValue: id)
  }

  /// The two-byte protection profile id from the `use_srtp` extension.
  public var id: UInt16 { rawValue }

  /// The SRTP profile of the same id, which keys the SRTP sessions.
  public var srtpProfile: SRTPProtectionProfile {
    switch self {
    case .aes128CMHMACSHA1_80: return .aes128CMHMACSHA1_80
    case .aes128CMHMACSHA1_32: return .aes128CMHMACSHA1_32
    case .aeadAES128GCM: return .aeadAES128GCM
    case .aeadAES256GCM: return .aeadAES256GCM
    }
  }

  /// SRTP master key length in bytes.
  public var keyLength: Int { srtpProfile.keyLength }

  /// SRTP master salt length in bytes.
  public var saltLength: Int { srtpProfile.saltLength }

  /// Bytes taken from the `EXTRACTOR-dtls_srtp` exporter: client key, server key, client salt,
  /// server salt (RFC 5764 §4.2), i.e. `2 * (keyLength + saltLength)` — 60 for AES-CM, 56 for
  /// AEAD-AES-128-GCM.
  public var keyingMaterialLength: Int { srtpProfile.keyingMaterialLength }

  /// The profile name OpenSSL's `SSL_CTX_set_tlsext_use_srtp` understands.
  public var openSSLName: String {
    switch self {
    case .aes128CMHMACSHA1_80: return "SRTP_AES128_CM_SHA1_80"
    case .aes128CMHMACSHA1_32: return "SRTP_AES128_CM_SHA1_32"
    case .aeadAES128GCM: return "SRTP_AEAD_AES_128_GCM"
    case .aeadAES256GCM: return "SRTP_AEAD_AES_256_GCM"
    }
  }

  /// The RFC name, e.g. `SRTP_AEAD_AES_128_GCM`.
  public var description: String {
    switch self {
    case .aes128CMHMACSHA1_80: return "SRTP_AES128_CM_HMAC_SHA1_80"
    case .aes128CMHMACSHA1_32: return "SRTP_AES128_CM_HMAC_SHA1_32"
    case .aeadAES128GCM: return "SRTP_AEAD_AES_128_GCM"
    case .aeadAES256GCM: return "SRTP_AEAD_AES_256_GCM"
    }
  }
}

/// An SRTP master key and master salt for one direction.
public struct SRTPMasterKey: Equatable, Sendable {
  /// Master key, `profile.keyLength` octets.
  public var key: [UInt8]
  /// Master salt, `profile.saltLength` octets.
  public var salt: [UInt8]

  /// Creates a master key and salt pair.
  public init(key: [UInt8], salt: [UInt8]) {
    self.key = key
    self.salt = salt
  }
}

/// Splits DTLS-exported keying material ("EXTRACTOR-dtls_srtp") into SRTP master keys
/// (RFC 5764 §4.2).
public enum SRTPKeyingMaterial {
  /// This endpoint's DTLS role after negotiation (a=setup:active is the DTLS client).
  public enum DTLSRole: Sendable {
    /// The DTLS client: protects with client_write_*, unprotects with server_write_*.
    case client
    /// The DTLS server: protects with server_write_*, unprotects with client_write_*.
    case server
  }

  /// Splits `material` laid out as client_write_key | server_write_key | client_write_salt |
  /// server_write_salt into the key this endpoint sends with (`local`, outbound) and the key the
  /// peer sends with (`remote`, inbound).
  ///
  /// Throws `SRTPError.invalidKeyingMaterialLength` unless `material` has
  /// `profile.keyingMaterialLength` octets.
  public static func split(
    _ material: [UInt8], profile: SRTPProtectionProfile, role: DTLSRole
  ) throws(SRTPError) -> (local: SRTPMasterKey, remote: SRTPMasterKey) {
    guard material.count == profile.keyingMaterialLength else {
      throw .invalidKeyingMaterialLength(
        expected: profile.keyingMaterialLength, actual: material.count)
    }
    let keyLength = profile.keyLength
    let saltLength = profile.saltLength
    let client = SRTPMasterKey(
      key: Array(material[0..<keyLength]),
      salt: Array(material[2 * keyLength..<2 * keyLength + saltLength]))
    let server = SRTPMasterKey(
      key: Array(material[keyLength..<2 * keyLength]),
      salt: Array(material[2 * keyLength + saltLength..<2 * (keyLength + saltLength)]))
    switch role {
    case .client: return (local: client, remote: server)
    case .server: return (local: server, remote: client)
    }
  }
}

/// The SRTP master keys and salts cut from the DTLS-SRTP exporter output (RFC 5764 §4.2):
/// `client_write_key | server_write_key | client_write_salt | server_write_salt`.
///
/// The DTLS client protects what it sends with the client keys and the server with the server
/// keys; each side unprotects with the other's.
public struct DTLSSRTPKeyingMaterial: Equatable, Sendable {
  /// The profile that sized the keys.
  public let profile: DTLSSRTPProfile
  /// Master key of the DTLS client's outgoing SRTP/SRTCP, `profile.keyLength` bytes.
  public let clientWriteKey: [UInt8]
  /// Master key of the DTLS server's outgoing SRTP/SRTCP.
  public let serverWriteKey: [UInt8]
  /// Master salt of the DTLS client's outgoing SRTP/SRTCP, `profile.saltLength` bytes.
  public let clientWriteSalt: [UInt8]
  /// Master salt of the DTLS server's outgoing SRTP/SRTCP.
  public let serverWriteSalt: [UInt8]

  /// Splits exporter output; throws `DTLSError.keyingMaterialExportFailed` unless `bytes` is
  /// exactly `profile.keyingMaterialLength` long.
  public init(profile: DTLSSRTPProfile, bytes: [UInt8]) throws(DTLSError) {
    guard bytes.count == profile.keyingMaterialLength else {
      throw .keyingMaterialExportFailed(
        reason: "\(profile) needs \(profile.keyingMaterialLength) bytes, got \(bytes.count)")
    }
    let key = profile.keyLength
    let salt = profile.saltLength
    self.profile = profile
    clientWriteKey = Array(bytes[0..<key])
    serverWriteKey = Array(bytes[key..<(2 * key)])
    clientWriteSalt = Array(bytes[(2 * key)..<(2 * key + salt)])
    serverWriteSalt = Array(bytes[(2 * key + salt)..<(2 * key + 2 * salt)])
  }

  /// Key and salt for protecting what the side playing `role` sends.
  public func outbound(for role: DTLSRole) -> (key: [UInt8], salt: [UInt8]) {
    role == .client ? (clientWriteKey, clientWriteSalt) : (serverWriteKey, serverWriteSalt)
  }

  /// Key and salt for unprotecting what the side playing `role` receives (the peer's keys).
  public func inbound(for role: DTLSRole) -> (key: [UInt8], salt: [UInt8]) {
    outbound(for: role == .client ? .server : .client)
  }
}

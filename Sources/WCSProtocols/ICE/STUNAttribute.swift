/// STUN attribute type numbers (RFC 8489 §18.3, RFC 8445 §16.1, RFC 8656 §18).
public enum STUNAttributeType {
  /// MAPPED-ADDRESS.
  public static let mappedAddress: UInt16 = 0x0001
  /// USERNAME.
  public static let username: UInt16 = 0x0006
  /// MESSAGE-INTEGRITY (HMAC-SHA1, 20 bytes).
  public static let messageIntegrity: UInt16 = 0x0008
  /// ERROR-CODE.
  public static let errorCode: UInt16 = 0x0009
  /// UNKNOWN-ATTRIBUTES.
  public static let unknownAttributes: UInt16 = 0x000A
  /// CHANNEL-NUMBER (TURN).
  public static let channelNumber: UInt16 = 0x000C
  /// LIFETIME (TURN, seconds).
  public static let lifetime: UInt16 = 0x000D
  /// XOR-PEER-ADDRESS (TURN).
  public static let xorPeerAddress: UInt16 = 0x0012
  /// DATA (TURN).
  public static let data: UInt16 = 0x0013
  /// REALM.
  public static let realm: UInt16 = 0x0014
  /// NONCE.
  public static let nonce: UInt16 = 0x0015
  /// XOR-RELAYED-ADDRESS (TURN).
  public static let xorRelayedAddress: UInt16 = 0x0016
  /// REQUESTED-TRANSPORT (TURN).
  public static let requestedTransport: UInt16 = 0x0019
  /// MESSAGE-INTEGRITY-SHA256.
  public static let messageIntegritySHA256: UInt16 = 0x001C
  /// XOR-MAPPED-ADDRESS.
  public static let xorMappedAddress: UInt16 = 0x0020
  /// PRIORITY (ICE).
  public static let priority: UInt16 = 0x0024
  /// USE-CANDIDATE (ICE).
  public static let useCandidate: UInt16 = 0x0025
  /// SOFTWARE.
  public static let software: UInt16 = 0x8022
  /// FINGERPRINT.
  public static let fingerprint: UInt16 = 0x8028
  /// ICE-CONTROLLED.
  public static let iceControlled: UInt16 = 0x8029
  /// ICE-CONTROLLING.
  public static let iceControlling: UInt16 = 0x802A

  /// Types 0x0000-0x7FFF are comprehension-required (RFC 8489 §14).
  public static func isComprehensionRequired(_ type: UInt16) -> Bool { type < 0x8000 }
}

/// A decoded or to-be-encoded STUN attribute. MESSAGE-INTEGRITY, MESSAGE-INTEGRITY-SHA256 and
/// FINGERPRINT are not in this list: the encoder appends them, the decoder checks them.
public enum STUNAttribute: Equatable, Sendable {
  /// MAPPED-ADDRESS (RFC 8489 §14.1).
  case mappedAddress(ICETransportAddress)
  /// XOR-MAPPED-ADDRESS (RFC 8489 §14.2), the plain address (XOR is applied on the wire).
  case xorMappedAddress(ICETransportAddress)
  /// USERNAME, UTF-8, at most 509 bytes (RFC 8489 §14.3).
  case username(String)
  /// ERROR-CODE: code 300-699 (class * 100 + number) and a UTF-8 reason (RFC 8489 §14.8).
  case errorCode(code: Int, reason: String)
  /// UNKNOWN-ATTRIBUTES: the types the server did not understand (RFC 8489 §14.9).
  case unknownAttributes([UInt16])
  /// REALM (RFC 8489 §14.9).
  case realm(String)
  /// NONCE (RFC 8489 §14.10).
  case nonce(String)
  /// SOFTWARE (RFC 8489 §14.14).
  case software(String)
  /// PRIORITY: the priority a peer-reflexive candidate would get (RFC 8445 §7.1.1).
  case priority(UInt32)
  /// USE-CANDIDATE: nomination flag (RFC 8445 §7.1.2).
  case useCandidate
  /// ICE-CONTROLLING with the 64-bit tie-breaker (RFC 8445 §7.1.3).
  case iceControlling(UInt64)
  /// ICE-CONTROLLED with the 64-bit tie-breaker.
  case iceControlled(UInt64)
  /// CHANNEL-NUMBER: 0x4000-0x4FFF (RFC 8656 §18.1).
  case channelNumber(UInt16)
  /// LIFETIME in seconds (RFC 8656 §18.2).
  case lifetime(UInt32)
  /// XOR-PEER-ADDRESS (RFC 8656 §18.3).
  case xorPeerAddress(ICETransportAddress)
  /// DATA: the application datagram (RFC 8656 §18.4).
  case data([UInt8])
  /// XOR-RELAYED-ADDRESS (RFC 8656 §18.5).
  case xorRelayedAddress(ICETransportAddress)
  /// REQUESTED-TRANSPORT: IANA protocol number, 17 for UDP (RFC 8656 §18.6).
  case requestedTransport(UInt8)
  /// Any other attribute, kept as raw bytes (without padding).
  case unknown(type: UInt16, value: [UInt8])

  /// The attribute type number on the wire.
  public var type: UInt16 {
    switch self {
    case .mappedAddress: return STUNAttributeType.mappedAddress
    case .xorMappedAddress: return STUNAttributeType.xorMappedAddress
    case .username: return STUNAttributeType.username
    case .errorCode: return STUNAttributeType.errorCode
    case .unknownAttributes: return STUNAttributeType.unknownAttributes
    case .realm: return STUNAttributeType.realm
    case .nonce: return STUNAttributeType.nonce
    case .software: return STUNAttributeType.software
    case .priority: return STUNAttributeType.priority
    case .useCandidate: return STUNAttributeType.useCandidate
    case .iceControlling: return STUNAttributeType.iceControlling
    case .iceControlled: return STUNAttributeType.iceControlled
    case .channelNumber: return STUNAttributeType.channelNumber
    case .lifetime: return STUNAttributeType.lifetime
    case .xorPeerAddress: return STUNAttributeType.xorPeerAddress
    case .data: return STUNAttributeType.data
    case .xorRelayedAddress: return STUNAttributeType.xorRelayedAddress
    case .requestedTransport: return STUNAttributeType.requestedTransport
    case .unknown(let type, _): return type
    }
  }
}

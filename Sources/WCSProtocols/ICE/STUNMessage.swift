/// A STUN message (RFC 8489 §5): type, transaction ID and attributes.
///
/// Build one and call `encode(key:algorithms:fingerprint:)`, or get one from
/// `STUNMessage.decode(_:)`, which also checks FINGERPRINT and remembers where MESSAGE-INTEGRITY
/// sits so `verifyIntegrity(key:)` can check it once the caller knows the key.
public struct STUNMessage: Sendable {
  /// The STUN magic cookie 0x2112A442 (RFC 8489 §6).
  public static let magicCookie: UInt32 = 0x2112_A442
  /// The value XORed into FINGERPRINT's CRC-32 (RFC 8489 §14.7).
  public static let fingerprintXOR: UInt32 = 0x5354_554E

  /// Method and class.
  public var type: STUNMessageType
  /// The 96-bit transaction ID.
  public var transactionID: STUNTransactionID
  /// The attributes in wire order, without MESSAGE-INTEGRITY(-SHA256) and FINGERPRINT.
  public var attributes: [STUNAttribute]

  /// After decoding: comprehension-required attribute types (< 0x8000) this codec does not
  /// know; a request with any of them is answered with 420 (RFC 8489 §6.3.1).
  public internal(set) var unknownComprehensionRequired: [UInt16] = []
  /// After decoding: whether a FINGERPRINT was present (and therefore verified).
  public internal(set) var hasFingerprint = false
  /// After decoding: the MESSAGE-INTEGRITY value, if present.
  public var messageIntegrity: [UInt8]? { attributeValue(at: integrityOffset) }
  /// After decoding: the MESSAGE-INTEGRITY-SHA256 value, if present.
  public var messageIntegritySHA256: [UInt8]? { attributeValue(at: integritySHA256Offset) }

  /// The decoded bytes, kept for integrity verification.
  var rawBytes: [UInt8] = []
  /// Offset of the MESSAGE-INTEGRITY attribute header in `rawBytes`.
  var integrityOffset: Int?
  /// Offset of the MESSAGE-INTEGRITY-SHA256 attribute header in `rawBytes`.
  var integritySHA256Offset: Int?

  /// Makes a message to encode.
  public init(
    type: STUNMessageType, transactionID: STUNTransactionID = .random(),
    attributes: [STUNAttribute] = []
  ) {
    self.type = type
    self.transactionID = transactionID
    self.attributes = attributes
  }

  private func attributeValue(at offset: Int?) -> [UInt8]? {
    guard let offset, offset + 4 <= rawBytes.count else { return nil }
    let length = Int(rawBytes[offset + 2]) << 8 | Int(rawBytes[offset + 3])
    guard offset + 4 + length <= rawBytes.count else { return nil }
    return Array(rawBytes[(offset + 4)..<(offset + 4 + length)])
  }

  /// The first attribute for which `extract` returns a value.
  public func first<T>(_ extract: (STUNAttribute) -> T?) -> T? {
    for attribute in attributes {
      if let value = extract(attribute) { return value }
    }
    return nil
  }

  /// USERNAME, if present.
  public var username: String? {
    first { if case .username(let value) = $0 { value } else { nil } }
  }
  /// XOR-MAPPED-ADDRESS, if present.
  public var xorMappedAddress: ICETransportAddress? {
    first { if case .xorMappedAddress(let value) = $0 { value } else { nil } }
  }
  /// MAPPED-ADDRESS, if present.
  public var mappedAddress: ICETransportAddress? {
    first { if case .mappedAddress(let value) = $0 { value } else { nil } }
  }
  /// PRIORITY, if present.
  public var priority: UInt32? {
    first { if case .priority(let value) = $0 { value } else { nil } }
  }
  /// Whether USE-CANDIDATE is present.
  public var useCandidate: Bool {
    first { if case .useCandidate = $0 { true } else { nil } } ?? false
  }
  /// ICE-CONTROLLING tie-breaker, if present.
  public var iceControlling: UInt64? {
    first { if case .iceControlling(let value) = $0 { value } else { nil } }
  }
  /// ICE-CONTROLLED tie-breaker, if present.
  public var iceControlled: UInt64? {
    first { if case .iceControlled(let value) = $0 { value } else { nil } }
  }
  /// ERROR-CODE (code 300-699, reason), if present.
  public var errorCode: (code: Int, reason: String)? {
    first { if case .errorCode(let code, let reason) = $0 { (code, reason) } else { nil } }
  }
  /// REALM, if present.
  public var realm: String? {
    first { if case .realm(let value) = $0 { value } else { nil } }
  }
  /// NONCE, if present.
  public var nonce: String? {
    first { if case .nonce(let value) = $0 { value } else { nil } }
  }
  /// SOFTWARE, if present.
  public var software: String? {
    first { if case .software(let value) = $0 { value } else { nil } }
  }
  /// LIFETIME in seconds, if present.
  public var lifetime: UInt32? {
    first { if case .lifetime(let value) = $0 { value } else { nil } }
  }
  /// XOR-RELAYED-ADDRESS, if present.
  public var xorRelayedAddress: ICETransportAddress? {
    first { if case .xorRelayedAddress(let value) = $0 { value } else { nil } }
  }
  /// XOR-PEER-ADDRESS, if present.
  public var xorPeerAddress: ICETransportAddress? {
    first { if case .xorPeerAddress(let value) = $0 { value } else { nil } }
  }
  /// DATA, if present.
  public var data: [UInt8]? {
    first { if case .data(let value) = $0 { value } else { nil } }
  }
  /// CHANNEL-NUMBER, if present.
  public var channelNumber: UInt16? {
    first { if case .channelNumber(let value) = $0 { value } else { nil } }
  }
}

/// The class of a STUN message (RFC 8489 §5): two bits, C1 and C0, of the message type.
public enum STUNClass: UInt8, Sendable, Hashable {
  /// Request (0b00): expects a response.
  case request = 0
  /// Indication (0b01): no response.
  case indication = 1
  /// Success response (0b10).
  case successResponse = 2
  /// Error response (0b11): carries ERROR-CODE.
  case errorResponse = 3
}

/// A STUN method (RFC 8489 §18.2, RFC 8656 §17): the 12 method bits of the message type.
public struct STUNMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
  /// The 12-bit method number.
  public var rawValue: UInt16
  /// Wraps a method number; only the low 12 bits are kept.
  public init(rawValue: UInt16) { self.rawValue = rawValue & 0x0FFF }

  /// Binding (0x001, RFC 8489).
  public static let binding = STUNMethod(rawValue: 0x001)
  /// TURN Allocate (0x003, RFC 8656).
  public static let allocate = STUNMethod(rawValue: 0x003)
  /// TURN Refresh (0x004).
  public static let refresh = STUNMethod(rawValue: 0x004)
  /// TURN Send indication (0x006).
  public static let send = STUNMethod(rawValue: 0x006)
  /// TURN Data indication (0x007).
  public static let data = STUNMethod(rawValue: 0x007)
  /// TURN CreatePermission (0x008).
  public static let createPermission = STUNMethod(rawValue: 0x008)
  /// TURN ChannelBind (0x009).
  public static let channelBind = STUNMethod(rawValue: 0x009)

  /// The method name, or its number in hex.
  public var description: String {
    switch self {
    case .binding: return "Binding"
    case .allocate: return "Allocate"
    case .refresh: return "Refresh"
    case .send: return "Send"
    case .data: return "Data"
    case .createPermission: return "CreatePermission"
    case .channelBind: return "ChannelBind"
    default: return "0x" + String(rawValue, radix: 16)
    }
  }
}

/// A STUN message type: method and class interleaved into 14 bits (RFC 8489 §5, figure 3:
/// `M11..M7 C1 M6..M4 C0 M3..M0`).
public struct STUNMessageType: Hashable, Sendable, CustomStringConvertible {
  /// The method.
  public var method: STUNMethod
  /// The class.
  public var messageClass: STUNClass

  /// Makes a type from its method and class.
  public init(method: STUNMethod, messageClass: STUNClass) {
    self.method = method
    self.messageClass = messageClass
  }

  /// Splits a 16-bit type field; the two top bits must be zero (checked by the decoder).
  public init(rawValue: UInt16) {
    let method = (rawValue & 0x000F) | ((rawValue & 0x00E0) >> 1) | ((rawValue & 0x3E00) >> 2)
    let classBits = ((rawValue & 0x0010) >> 4) | ((rawValue & 0x0100) >> 7)
    self.method = STUNMethod(rawValue: method)
    self.messageClass = STUNClass(rawValue: UInt8(classBits)) ?? .request
  }

  /// The 16-bit type field (top two bits zero).
  public var rawValue: UInt16 {
    let method = method.rawValue
    let classBits = UInt16(messageClass.rawValue)
    return (method & 0x000F) | ((method & 0x0070) << 1) | ((method & 0x0F80) << 2)
      | ((classBits & 1) << 4) | ((classBits & 2) << 7)
  }

  /// Binding request (0x0001).
  public static let bindingRequest = STUNMessageType(method: .binding, messageClass: .request)
  /// Binding success response (0x0101).
  public static let bindingSuccess = STUNMessageType(
    method: .binding, messageClass: .successResponse)
  /// Binding error response (0x0111).
  public static let bindingError = STUNMessageType(method: .binding, messageClass: .errorResponse)
  /// Binding indication (0x0011), used as a keepalive.
  public static let bindingIndication = STUNMessageType(
    method: .binding, messageClass: .indication)

  /// `Binding request`, `Allocate errorResponse`...
  public var description: String { "\(method) \(messageClass)" }
}

/// The 96-bit transaction ID of a STUN message (RFC 8489 §6), held as 12 octets.
public struct STUNTransactionID: Hashable, Sendable, CustomStringConvertible {
  /// Octets 0..3.
  public var high: UInt32
  /// Octets 4..11.
  public var low: UInt64

  /// Makes an ID from its two parts.
  public init(high: UInt32, low: UInt64) {
    self.high = high
    self.low = low
  }

  /// Makes an ID from exactly 12 octets; `nil` otherwise.
  public init?(octets: [UInt8]) {
    guard octets.count == 12 else { return nil }
    high = octets[0..<4].reduce(0) { $0 << 8 | UInt32($1) }
    low = octets[4..<12].reduce(0) { $0 << 8 | UInt64($1) }
  }

  /// A random ID from the system CSPRNG (RFC 8489 §6 asks for a uniformly random ID).
  public static func random() -> STUNTransactionID {
    var generator = SystemRandomNumberGenerator()
    return random(using: &generator)
  }

  /// A random ID from the given generator (tests pass a seeded one).
  public static func random(using generator: inout some RandomNumberGenerator) -> STUNTransactionID
  {
    STUNTransactionID(
      high: UInt32.random(in: .min ... .max, using: &generator),
      low: UInt64.random(in: .min ... .max, using: &generator))
  }

  /// The 12 octets in order.
  public var octets: [UInt8] {
    (0..<4).map { UInt8(truncatingIfNeeded: high >> (24 - 8 * $0)) }
      + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
  }

  /// 24 lower-case hex digits.
  public var description: String {
    octets.map { String(format2: $0) }.joined()
  }
}

extension String {
  /// Two lower-case hex digits.
  init(format2 byte: UInt8) {
    let digits: [Character] = Array("0123456789abcdef")
    self = String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
  }
}

/// Why bytes from the network are not a valid RTP packet (RFC 3550 §5.1, RFC 8285).
public enum RTPParseError: Error, Equatable, Sendable {
  /// Fewer than the 12 octets of the fixed header (RFC 3550 §5.1); `available` octets were given.
  case truncatedFixedHeader(available: Int)
  /// The version field (top two bits) is not 2.
  case invalidVersion(UInt8)
  /// The CC field announces `csrcCount` CSRCs but the packet ends first.
  case truncatedCSRCList(csrcCount: Int, available: Int)
  /// X=1 but the 4-octet extension header (profile, length) is cut.
  case truncatedExtensionHeader(available: Int)
  /// The extension length word announces `declared` octets but only `available` follow.
  case truncatedExtensionData(declared: Int, available: Int)
  /// An RFC 8285 element runs past the end of the extension block.
  case truncatedExtensionElement(id: UInt8, declared: Int, available: Int)
  /// P=1 but the padding count (last octet) is 0 or larger than the octets after the header.
  case invalidPadding(count: Int, available: Int)
}

/// Why an RTP header cannot be written.
public enum RTPWriteError: Error, Equatable, Sendable {
  /// The destination holds `available` octets but `needed` are required.
  case bufferTooSmall(needed: Int, available: Int)
  /// More than 15 CSRCs (the CC field has 4 bits, RFC 3550 §5.1).
  case tooManyCSRCs(Int)
  /// An extension element does not fit its form: one-byte IDs are 1...14 with 1...16 octets,
  /// two-byte IDs are 1...255 with 0...255 octets (RFC 8285 §4.2, §4.3).
  case invalidExtensionElement(id: UInt8, length: Int)
  /// A generic (non-RFC 8285) extension's data is not a whole number of 32-bit words or too long.
  case invalidExtensionData(length: Int)
  /// Padding must be 1...255 octets (the count is one octet, RFC 3550 §5.1).
  case invalidPadding(Int)
}

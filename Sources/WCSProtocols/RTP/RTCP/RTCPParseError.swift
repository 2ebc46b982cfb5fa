/// Why bytes from the network are not valid RTCP (RFC 3550 §6, RFC 4585 §6, RFC 5104 §4.3).
public enum RTCPParseError: Error, Equatable, Sendable {
  /// Fewer than 4 octets where a common header should start (offset in the compound).
  case truncatedHeader(offset: Int, available: Int)
  /// The version field is not 2.
  case invalidVersion(UInt8)
  /// The length word announces `declared` octets but only `available` remain.
  case truncatedPacket(packetType: UInt8, declared: Int, available: Int)
  /// P=1 but the padding count (last octet) is 0 or larger than the packet body.
  case invalidPadding(packetType: UInt8, count: Int)
  /// The body is too short for what its header announces (report count, source count, FCI).
  case invalidLength(packetType: UInt8, reason: String)
  /// An SDES chunk ends before its SSRC.
  case sdesSourceTruncated
  /// An SDES item runs past the end of the packet.
  case sdesItemTruncated
  /// A BYE reason runs past the end of the packet.
  case byeReasonTruncated
  /// A transport-wide feedback packet is inconsistent (chunks, deltas, reserved symbol).
  case invalidTransportFeedback(String)
}

/// Why an RTCP packet cannot be written.
public enum RTCPWriteError: Error, Equatable, Sendable {
  /// A list is longer than its count field allows (31 reports, 31 SDES chunks, ...).
  case tooManyItems(packetType: UInt8, count: Int)
  /// A field value does not fit (SDES item longer than 255 octets, APP name not 4 octets, ...).
  case invalidField(String)
  /// The destination holds `available` octets but `needed` are required.
  case bufferTooSmall(needed: Int, available: Int)
}

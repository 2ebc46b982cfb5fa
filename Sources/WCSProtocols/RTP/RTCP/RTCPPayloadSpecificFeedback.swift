/// Picture loss indication, PSFB FMT 1 (RFC 4585 §6.3.1): no FCI.
public struct RTCPPictureLossIndication: Equatable, Sendable {
  /// Feedback format value in the FMT field.
  public static let format: UInt8 = 1
  /// SSRC of the packet sender.
  public var senderSSRC: UInt32
  /// SSRC of the media source that should send a key frame.
  public var mediaSSRC: UInt32

  /// Creates a PLI.
  public init(senderSSRC: UInt32, mediaSSRC: UInt32) {
    self.senderSSRC = senderSSRC
    self.mediaSSRC = mediaSSRC
  }

  func append(to bytes: inout [UInt8]) throws(RTCPWriteError) {
    try bytes.appendRTCPPacket(
      packetType: RTCPPacketType.payloadSpecificFeedback, count: Self.format
    ) { bytes throws(RTCPWriteError) in
      bytes.appendUInt32(senderSSRC)
      bytes.appendUInt32(mediaSSRC)
    }
  }
}

/// One FIR FCI entry (RFC 5104 §4.3.1.1).
public struct RTCPFullIntraRequestEntry: Equatable, Sendable {
  /// SSRC of the media sender asked for a decoder refresh.
  public var ssrc: UInt32
  /// Command sequence number, +1 per new request (wraps at 256).
  public var sequenceNumber: UInt8

  /// Creates an FCI entry.
  public init(ssrc: UInt32, sequenceNumber: UInt8) {
    self.ssrc = ssrc
    self.sequenceNumber = sequenceNumber
  }
}

/// Full intra request, PSFB FMT 4 (RFC 5104 §4.3.1); the media SSRC field is 0.
public struct RTCPFullIntraRequest: Equatable, Sendable {
  /// Feedback format value in the FMT field.
  public static let format: UInt8 = 4
  /// SSRC of the packet sender.
  public var senderSSRC: UInt32
  /// Media source SSRC of the common header (0 per RFC 5104 §4.3.1.2).
  public var mediaSSRC: UInt32
  /// FCI entries, one per media sender.
  public var entries: [RTCPFullIntraRequestEntry]

  /// Creates a FIR.
  public init(senderSSRC: UInt32, mediaSSRC: UInt32 = 0, entries: [RTCPFullIntraRequestEntry]) {
    self.senderSSRC = senderSSRC
    self.mediaSSRC = mediaSSRC
    self.entries = entries
  }

  static func parse(senderSSRC: UInt32, mediaSSRC: UInt32, fci: inout ByteReader) throws
    -> RTCPFullIntraRequest
  {
    guard fci.remaining % 8 == 0 else {
      throw RTCPParseError.invalidLength(
        packetType: RTCPPacketType.payloadSpecificFeedback, reason: "FIR FCI not a multiple of 8")
    }
    var entries: [RTCPFullIntraRequestEntry] = []
    while let ssrc = fci.readUInt32(), let word = fci.readUInt32() {
      entries.append(RTCPFullIntraRequestEntry(ssrc: ssrc, sequenceNumber: UInt8(word >> 24)))
    }
    return RTCPFullIntraRequest(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, entries: entries)
  }

  func append(to bytes: inout [UInt8]) throws(RTCPWriteError) {
    try bytes.appendRTCPPacket(
      packetType: RTCPPacketType.payloadSpecificFeedback, count: Self.format
    ) { bytes throws(RTCPWriteError) in
      bytes.appendUInt32(senderSSRC)
      bytes.appendUInt32(mediaSSRC)
      for entry in entries {
        bytes.appendUInt32(entry.ssrc)
        bytes.appendUInt32(UInt32(entry.sequenceNumber) << 24)
      }
    }
  }
}

/// Receiver estimated maximum bitrate, PSFB FMT 15 with identifier "REMB"
/// (draft-alvestrand-rmcat-remb-03 §2.2).
public struct RTCPReceiverEstimatedMaxBitrate: Equatable, Sendable {
  /// Feedback format value (application layer feedback).
  public static let format: UInt8 = 15
  /// The identifier 'R' 'E' 'M' 'B' = 0x52454D42.
  public static let identifier: UInt32 = 0x5245_4D42

  /// SSRC of the packet sender.
  public var senderSSRC: UInt32
  /// Media source SSRC of the common header (always 0 for REMB).
  public var mediaSSRC: UInt32
  /// Estimated total bitrate in bits per second: mantissa (18 bits) << exponent (6 bits).
  /// When written, it is rounded down to what the 18-bit mantissa can express.
  public var bitrate: UInt64
  /// SSRCs the estimate applies to, at most 255.
  public var ssrcs: [UInt32]

  /// Creates a REMB.
  public init(senderSSRC: UInt32, mediaSSRC: UInt32 = 0, bitrate: UInt64, ssrcs: [UInt32]) {
    self.senderSSRC = senderSSRC
    self.mediaSSRC = mediaSSRC
    self.bitrate = bitrate
    self.ssrcs = ssrcs
  }

  /// Splits `bitrate` into (exponent, mantissa) with the mantissa below 2^18 and the smallest
  /// exponent, rounding down.
  public static func exponentAndMantissa(for bitrate: UInt64) -> (exponent: UInt8, mantissa: UInt32)
  {
    var exponent: UInt8 = 0
    var mantissa = bitrate
    while mantissa > 0x3_FFFF {
      mantissa >>= 1
      exponent += 1
    }
    return (exponent, UInt32(mantissa))
  }

  /// Returns nil when the FCI does not start with "REMB" (another application layer feedback).
  static func parse(senderSSRC: UInt32, mediaSSRC: UInt32, fci: inout ByteReader) throws
    -> RTCPReceiverEstimatedMaxBitrate?
  {
    guard fci.remaining >= 8, fci.readUInt32() == identifier else { return nil }
    let count = Int(fci.readUInt8() ?? 0)
    let encoded = fci.readUInt24() ?? 0
    let exponent = encoded >> 18
    let mantissa = UInt64(encoded & 0x3_FFFF)
    // Saturate instead of overflowing for absurd exponents from the network.
    let bitrate: UInt64 =
      mantissa == 0
      ? 0 : (mantissa.leadingZeroBitCount >= Int(exponent) ? mantissa << exponent : .max)
    guard fci.remaining >= 4 * count else {
      throw RTCPParseError.invalidLength(
        packetType: RTCPPacketType.payloadSpecificFeedback,
        reason: "REMB announces \(count) SSRCs in \(fci.remaining) octets")
    }
    var ssrcs: [UInt32] = []
    for _ in 0..<count { ssrcs.append(fci.readUInt32() ?? 0) }
    return RTCPReceiverEstimatedMaxBitrate(
      senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, bitrate: bitrate, ssrcs: ssrcs)
  }

  func append(to bytes: inout [UInt8]) throws(RTCPWriteError) {
    guard ssrcs.count <= 255 else {
      throw .tooManyItems(packetType: RTCPPacketType.payloadSpecificFeedback, count: ssrcs.count)
    }
    let (exponent, mantissa) = Self.exponentAndMantissa(for: bitrate)
    try bytes.appendRTCPPacket(
      packetType: RTCPPacketType.payloadSpecificFeedback, count: Self.format
    ) { bytes throws(RTCPWriteError) in
      bytes.appendUInt32(senderSSRC)
      bytes.appendUInt32(mediaSSRC)
      bytes.appendUInt32(Self.identifier)
      bytes.append(UInt8(ssrcs.count))
      bytes.appendUInt24(UInt32(exponent) << 18 | mantissa)
      for ssrc in ssrcs { bytes.appendUInt32(ssrc) }
    }
  }
}

import WCSProtocols

/// Rewrites one publisher SSRC's RTP packets for one player (SFU relay): the player sees its own
/// SSRC, the payload type it offered for the codec, and sequence numbers / timestamps shifted by
/// fixed random offsets (RFC 3550 §5.1 asks for random initial values; fixed offsets keep the
/// publisher's gaps, so the player still detects loss and its NACKs map back exactly).
///
/// Also counts what it sent, for this leg's own RTCP sender reports (RFC 3550 §6.4.1).
struct RelayRTPRewriter {
  /// The SSRC the player sees.
  let ssrc: UInt32
  /// The player's payload type for each publisher payload type of this codec.
  let payloadTypes: [UInt8: UInt8]
  let sequenceOffset: UInt16
  let timestampOffset: UInt32
  /// Packets and payload octets sent, for the SR.
  private(set) var packetCount: UInt32 = 0
  private(set) var octetCount: UInt32 = 0
  /// The newest outgoing RTP timestamp and when (ms, caller's clock) it was sent.
  private(set) var lastTimestamp: UInt32?
  private(set) var lastSentAt = MediaInstant.distantPast
  /// The newest outgoing sequence number: a late packet (a retransmission forwarded) leaves
  /// `lastTimestamp` alone, so the SR timestamp does not step back.
  private var lastSequenceNumber: UInt16?

  init(
    ssrc: UInt32, payloadTypes: [UInt8: UInt8], sequenceOffset: UInt16, timestampOffset: UInt32
  ) {
    self.ssrc = ssrc
    self.payloadTypes = payloadTypes
    self.sequenceOffset = sequenceOffset
    self.timestampOffset = timestampOffset
  }

  /// A random rewriter (SSRC and offsets from `generator`).
  init<G: RandomNumberGenerator>(payloadTypes: [UInt8: UInt8], using generator: inout G) {
    self.init(
      ssrc: UInt32.random(in: 1...UInt32.max, using: &generator), payloadTypes: payloadTypes,
      sequenceOffset: UInt16.random(in: 0...UInt16.max, using: &generator),
      timestampOffset: UInt32.random(in: 0...UInt32.max, using: &generator))
  }

  /// The player's copy of `packet`, `nil` when it is shorter than its RTP header, not version
  /// 2, or its payload type has no mapping (a codec the player did not accept). A header
  /// extension (RFC 8285) is removed: its ids were negotiated with the publisher, not the player.
  /// `now`: for the SR bookkeeping; `countsAsSent` false for NACK retransmissions.
  mutating func rewrite(_ packet: [UInt8], now: MediaInstant, countsAsSent: Bool = true) -> [UInt8]?
  {
    guard packet.count >= 12, packet[0] >> 6 == 2 else { return nil }
    let marker = packet[1] & 0x80
    guard let payloadType = payloadTypes[packet[1] & 0x7F] else { return nil }
    let fixedAndCSRCs = 12 + 4 * Int(packet[0] & 0x0F)
    guard packet.count >= fixedAndCSRCs else { return nil }
    var out = packet
    if packet[0] & 0x10 != 0 {
      guard packet.count >= fixedAndCSRCs + 4 else { return nil }
      let words = Int(packet[fixedAndCSRCs + 2]) << 8 | Int(packet[fixedAndCSRCs + 3])
      let extensionEnd = fixedAndCSRCs + 4 + 4 * words
      guard packet.count >= extensionEnd else { return nil }
      out = Array(packet[..<fixedAndCSRCs]) + packet[extensionEnd...]
      out[0] &= ~0x10
    }
    out[1] = marker | payloadType
    let sequence = (UInt16(packet[2]) << 8 | UInt16(packet[3])) &+ sequenceOffset
    out[2] = UInt8(sequence >> 8)
    out[3] = UInt8(sequence & 0xFF)
    let timestamp = Self.read32(packet, 4) &+ timestampOffset
    Self.write32(&out, 4, timestamp)
    Self.write32(&out, 8, ssrc)
    if countsAsSent {
      packetCount &+= 1
      octetCount &+= UInt32(truncatingIfNeeded: out.count - fixedAndCSRCs)
      if lastSequenceNumber.map({ RTPSequenceNumber.isNewer(sequence, than: $0) }) ?? true {
        lastSequenceNumber = sequence
        lastTimestamp = timestamp
        lastSentAt = now
      }
    }
    return out
  }

  /// The publisher's sequence number behind a sequence number the player NACKed.
  func sourceSequenceNumber(_ playerSequenceNumber: UInt16) -> UInt16 {
    playerSequenceNumber &- sequenceOffset
  }

  static func read32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
    UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16
      | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
  }

  static func write32(_ bytes: inout [UInt8], _ offset: Int, _ value: UInt32) {
    bytes[offset] = UInt8(value >> 24)
    bytes[offset + 1] = UInt8((value >> 16) & 0xFF)
    bytes[offset + 2] = UInt8((value >> 8) & 0xFF)
    bytes[offset + 3] = UInt8(value & 0xFF)
  }
}

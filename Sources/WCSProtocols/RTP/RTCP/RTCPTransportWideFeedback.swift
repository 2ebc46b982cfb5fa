/// Transport-wide congestion control feedback, RTPFB FMT 15
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1).
///
/// Packets are listed one per transport-wide sequence number from `baseSequenceNumber`; the
/// chunk encoding (run-length or status vector) is chosen by the writer and expanded by the parser.
public struct RTCPTransportWideFeedback: Equatable, Sendable {
  /// Feedback format value in the FMT field.
  public static let format: UInt8 = 15

  /// The status of one packet and its receive delta (draft §3.1.1, §3.1.5).
  public enum PacketStatus: Equatable, Sendable {
    /// Symbol 00: not received.
    case notReceived
    /// Symbol 01: received; delta 0...255 in 250 µs ticks, one octet.
    case receivedSmallDelta(UInt8)
    /// Symbol 10: received; delta -32768...32767 in 250 µs ticks, two octets (signed).
    case receivedLargeOrNegativeDelta(Int16)

    /// The 2-bit status symbol.
    var symbol: UInt8 {
      switch self {
      case .notReceived: return 0
      case .receivedSmallDelta: return 1
      case .receivedLargeOrNegativeDelta: return 2
      }
    }

    /// Receive delta in microseconds from the previous received packet (or the reference
    /// time), or nil when not received.
    public var receiveDeltaMicroseconds: Int? {
      switch self {
      case .notReceived: return nil
      case .receivedSmallDelta(let ticks): return Int(ticks) * 250
      case .receivedLargeOrNegativeDelta(let ticks): return Int(ticks) * 250
      }
    }

    /// The status for a delta of `ticks` × 250 µs: small when 0...255, large otherwise;
    /// nil when it does not fit 16 bits signed.
    public static func received(deltaTicks ticks: Int) -> PacketStatus? {
      if (0...255).contains(ticks) { return .receivedSmallDelta(UInt8(ticks)) }
      guard let large = Int16(exactly: ticks) else { return nil }
      return .receivedLargeOrNegativeDelta(large)
    }
  }

  /// SSRC of the packet sender.
  public var senderSSRC: UInt32
  /// Media source SSRC (libwebrtc sends the first media SSRC; receivers ignore it).
  public var mediaSSRC: UInt32
  /// Transport-wide sequence number of the first packet in `packets`.
  public var baseSequenceNumber: UInt16
  /// Reference time, 24-bit signed, in multiples of 64 ms.
  public var referenceTime: Int32
  /// Feedback packet count, +1 per feedback packet sent (wraps at 256).
  public var feedbackPacketCount: UInt8
  /// One status per sequence number, `baseSequenceNumber` onwards (at most 65535).
  public var packets: [PacketStatus]

  /// Creates a feedback packet.
  public init(
    senderSSRC: UInt32, mediaSSRC: UInt32, baseSequenceNumber: UInt16, referenceTime: Int32,
    feedbackPacketCount: UInt8, packets: [PacketStatus]
  ) {
    self.senderSSRC = senderSSRC
    self.mediaSSRC = mediaSSRC
    self.baseSequenceNumber = baseSequenceNumber
    self.referenceTime = referenceTime
    self.feedbackPacketCount = feedbackPacketCount
    self.packets = packets
  }

  static func parse(senderSSRC: UInt32, mediaSSRC: UInt32, fci: inout ByteReader) throws
    -> RTCPTransportWideFeedback
  {
    guard let base = fci.readUInt16(), let statusCount = fci.readUInt16(),
      let reference = fci.readUInt24(), let feedbackCount = fci.readUInt8()
    else {
      throw RTCPParseError.invalidTransportFeedback("FCI shorter than its 8-octet header")
    }
    var symbols: [UInt8] = []
    symbols.reserveCapacity(Int(statusCount))
    while symbols.count < Int(statusCount) {
      guard let chunk = fci.readUInt16() else {
        throw RTCPParseError.invalidTransportFeedback(
          "chunks cover \(symbols.count) of \(statusCount) packets")
      }
      let left = Int(statusCount) - symbols.count
      if chunk & 0x8000 == 0 {
        let symbol = UInt8((chunk >> 13) & 0x3)
        let run = Int(chunk & 0x1FFF)
        symbols.append(contentsOf: repeatElement(symbol, count: min(run, left)))
      } else if chunk & 0x4000 == 0 {
        for index in 0..<min(14, left) { symbols.append(UInt8((chunk >> (13 - index)) & 0x1)) }
      } else {
        for index in 0..<min(7, left) {
          symbols.append(UInt8((chunk >> (12 - 2 * index)) & 0x3))
        }
      }
    }
    var packets: [PacketStatus] = []
    packets.reserveCapacity(symbols.count)
    for symbol in symbols {
      switch symbol {
      case 0: packets.append(.notReceived)
      case 1:
        guard let delta = fci.readUInt8() else {
          throw RTCPParseError.invalidTransportFeedback("receive deltas truncated")
        }
        packets.append(.receivedSmallDelta(delta))
      case 2:
        guard let delta = fci.readUInt16() else {
          throw RTCPParseError.invalidTransportFeedback("receive deltas truncated")
        }
        packets.append(.receivedLargeOrNegativeDelta(Int16(bitPattern: delta)))
      default:
        throw RTCPParseError.invalidTransportFeedback("reserved status symbol 11")
      }
    }
    return RTCPTransportWideFeedback(
      senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, baseSequenceNumber: base,
      referenceTime: Int32(bitPattern: reference << 8) >> 8, feedbackPacketCount: feedbackCount,
      packets: packets)
  }

  /// Packet status chunks for `packets`: a run-length chunk for runs of 14 or more (or a run
  /// that ends the list), else a 1-bit vector of 14 when none needs a large delta, else a run
  /// of 7 or more as run-length, else a 2-bit vector of 7.
  func chunks() -> [UInt16] {
    var chunks: [UInt16] = []
    var index = 0
    let symbols = packets.map(\.symbol)
    while index < symbols.count {
      let symbol = symbols[index]
      var run = 1
      while index + run < symbols.count, symbols[index + run] == symbol, run < 0x1FFF { run += 1 }
      let left = symbols.count - index
      if run >= 14 || run == left {
        chunks.append(UInt16(symbol) << 13 | UInt16(run))
        index += run
        continue
      }
      let oneBitWindow = min(14, left)
      if symbols[index..<index + oneBitWindow].allSatisfy({ $0 <= 1 }) {
        var chunk: UInt16 = 0x8000
        for offset in 0..<oneBitWindow {
          chunk |= UInt16(symbols[index + offset]) << (13 - offset)
        }
        chunks.append(chunk)
        index += oneBitWindow
        continue
      }
      if run >= 7 {
        chunks.append(UInt16(symbol) << 13 | UInt16(run))
        index += run
        continue
      }
      let twoBitWindow = min(7, left)
      var chunk: UInt16 = 0xC000
      for offset in 0..<twoBitWindow {
        chunk |= UInt16(symbols[index + offset]) << (12 - 2 * offset)
      }
      chunks.append(chunk)
      index += twoBitWindow
    }
    return chunks
  }

  func append(to bytes: inout [UInt8]) throws(RTCPWriteError) {
    guard packets.count <= 0xFFFF else {
      throw .tooManyItems(packetType: RTCPPacketType.transportFeedback, count: packets.count)
    }
    guard (-0x80_0000...0x7F_FFFF).contains(referenceTime) else {
      throw .invalidField("TWCC reference time does not fit 24 bits signed")
    }
    let chunks = chunks()
    try bytes.appendRTCPPacket(
      packetType: RTCPPacketType.transportFeedback, count: Self.format, paddingBit: true
    ) { bytes throws(RTCPWriteError) in
      bytes.appendUInt32(senderSSRC)
      bytes.appendUInt32(mediaSSRC)
      bytes.appendUInt16(baseSequenceNumber)
      bytes.appendUInt16(UInt16(packets.count))
      bytes.appendUInt24(UInt32(bitPattern: referenceTime) & 0xFF_FFFF)
      bytes.append(feedbackPacketCount)
      for chunk in chunks { bytes.appendUInt16(chunk) }
      for packet in packets {
        switch packet {
        case .notReceived: break
        case .receivedSmallDelta(let delta): bytes.append(delta)
        case .receivedLargeOrNegativeDelta(let delta): bytes.appendUInt16(UInt16(bitPattern: delta))
        }
      }
    }
  }
}

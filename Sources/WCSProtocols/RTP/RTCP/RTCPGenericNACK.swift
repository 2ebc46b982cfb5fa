/// One generic NACK FCI entry: a lost packet ID and a bitmask of the 16 following
/// (RFC 4585 §6.2.1).
public struct RTCPNACKItem: Equatable, Sendable {
  /// PID: sequence number of a lost packet.
  public var packetID: UInt16
  /// BLP: bit i set means `packetID + i + 1` is lost too.
  public var lostBitmask: UInt16

  /// Creates an FCI entry.
  public init(packetID: UInt16, lostBitmask: UInt16) {
    self.packetID = packetID
    self.lostBitmask = lostBitmask
  }

  /// The sequence numbers this entry reports lost, in order.
  public var lostSequenceNumbers: [UInt16] {
    var lost = [packetID]
    for bit in 0..<16 where lostBitmask & (1 << bit) != 0 {
      lost.append(packetID &+ UInt16(bit + 1))
    }
    return lost
  }

  /// Packs `sequenceNumbers` (ascending in wrap-aware order; duplicates ignored) into as few
  /// entries as the PID+BLP scheme allows.
  public static func items(lost sequenceNumbers: [UInt16]) -> [RTCPNACKItem] {
    var items: [RTCPNACKItem] = []
    for sequenceNumber in sequenceNumbers {
      if var last = items.last {
        let distance = RTPSequenceNumber.distance(from: last.packetID, to: sequenceNumber)
        if distance == 0 { continue }
        if (1...16).contains(distance) {
          last.lostBitmask |= 1 << (distance - 1)
          items[items.count - 1] = last
          continue
        }
      }
      items.append(RTCPNACKItem(packetID: sequenceNumber, lostBitmask: 0))
    }
    return items
  }
}

/// Generic NACK, RTPFB FMT 1 (RFC 4585 §6.2.1).
public struct RTCPGenericNACK: Equatable, Sendable {
  /// Feedback format value in the FMT field.
  public static let format: UInt8 = 1
  /// SSRC of the packet sender.
  public var senderSSRC: UInt32
  /// SSRC of the media source whose packets are lost.
  public var mediaSSRC: UInt32
  /// FCI entries.
  public var items: [RTCPNACKItem]

  /// Creates a NACK from FCI entries.
  public init(senderSSRC: UInt32, mediaSSRC: UInt32, items: [RTCPNACKItem]) {
    self.senderSSRC = senderSSRC
    self.mediaSSRC = mediaSSRC
    self.items = items
  }

  /// Creates a NACK for the lost `sequenceNumbers` (ascending, wrap-aware).
  public init(senderSSRC: UInt32, mediaSSRC: UInt32, lost sequenceNumbers: [UInt16]) {
    self.init(
      senderSSRC: senderSSRC, mediaSSRC: mediaSSRC,
      items: RTCPNACKItem.items(lost: sequenceNumbers))
  }

  /// Every sequence number reported lost, in FCI order.
  public var lostSequenceNumbers: [UInt16] { items.flatMap(\.lostSequenceNumbers) }

  static func parse(senderSSRC: UInt32, mediaSSRC: UInt32, fci: inout ByteReader) throws
    -> RTCPGenericNACK
  {
    guard fci.remaining % 4 == 0 else {
      throw RTCPParseError.invalidLength(
        packetType: RTCPPacketType.transportFeedback, reason: "NACK FCI not a multiple of 4")
    }
    var items: [RTCPNACKItem] = []
    while let pid = fci.readUInt16(), let blp = fci.readUInt16() {
      items.append(RTCPNACKItem(packetID: pid, lostBitmask: blp))
    }
    return RTCPGenericNACK(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, items: items)
  }

  func append(to bytes: inout [UInt8]) throws(RTCPWriteError) {
    try bytes.appendRTCPPacket(
      packetType: RTCPPacketType.transportFeedback, count: Self.format
    ) { bytes throws(RTCPWriteError) in
      bytes.appendUInt32(senderSSRC)
      bytes.appendUInt32(mediaSSRC)
      for item in items {
        bytes.appendUInt16(item.packetID)
        bytes.appendUInt16(item.lostBitmask)
      }
    }
  }
}

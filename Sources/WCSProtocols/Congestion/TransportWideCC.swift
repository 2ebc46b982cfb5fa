/// Transport-wide congestion control glue (draft-holmer-rmcat-transport-wide-cc-extensions-01):
/// the header extension carrying the transport sequence number, and conversions between the
/// RTCP feedback packet and the congestion module's `TransportFeedbackDescription`.
///
/// A namespace of pure functions (no state, no I/O); the play session and the send path call
/// them per packet. Nothing here throws: absent or malformed elements read as `nil`.
public enum TransportWideCC {
  /// The extension URI as SDP `a=extmap` names it (RFC 8285 §5; the draft's §2).
  public static let uri =
    "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"

  /// The negotiated extension id in `answer` (first section that maps the URI), `nil` when
  /// the answer did not accept it or the id does not fit a one-byte header (1...14).
  /// - Parameter answer: the negotiated SDP; rejected sections (port 0) are skipped.
  /// - Returns: the id, 1...14, or `nil`.
  public static func extensionID(in answer: SessionDescription) -> UInt8? {
    for section in answer.media where !section.isRejected {
      for attribute in section.attributes {
        guard case .extmap(let map) = attribute, map.uri == uri, (1...14).contains(map.id)
        else { continue }
        return UInt8(map.id)
      }
    }
    return nil
  }

  /// `header` with the transport sequence number as a one-byte extension element (RFC 8285
  /// §4.2), replacing any extension it had.
  /// - Parameters:
  ///   - header: the outgoing packet's header, changed in place.
  ///   - id: the negotiated id (`extensionID(in:)`), 1...14.
  ///   - sequenceNumber: the transport-wide sequence number, written big-endian in 2 octets.
  public static func stamp(_ header: inout RTPHeader, id: UInt8, sequenceNumber: UInt16) {
    header.headerExtension = .oneByte([
      RTPHeaderExtensionElement(
        id: id, value: [UInt8(sequenceNumber >> 8), UInt8(sequenceNumber & 0xFF)])
    ])
  }

  /// The transport sequence number in `header`, `nil` without a 2-byte element `id`.
  /// - Parameters:
  ///   - header: a received packet's header, parsed (wire octets) or built.
  ///   - id: the negotiated extension id.
  /// - Returns: the 16-bit sequence number (big-endian on the wire), or `nil` when the element
  ///   is absent or its value is not exactly 2 octets.
  public static func sequenceNumber(in header: RTPHeader, id: UInt8) -> UInt16? {
    // Per received packet: the elements are searched in place, without `elements`' copy, and
    // a parsed packet's wire octets without decoding them.
    switch header.extensionStorage {
    case .wire(let wire):
      return wire.twoOctetValue(id: id)
    case .decoded(.oneByte(let elements)), .decoded(.twoByte(_, let elements)):
      for element in elements where element.id == id {
        guard element.value.count == 2 else { return nil }
        return UInt16(element.value[0]) << 8 | UInt16(element.value[1])
      }
      return nil
    case .decoded(.generic), .none:
      return nil
    }
  }

  /// The description of a received feedback packet (reference time reduced to 24 bits).
  /// - Parameter feedback: a parsed RTCP transport-wide feedback packet (RTPFB FMT 15, the
  ///   draft's §3.1); delta ticks are 250 µs.
  /// - Returns: the statuses in sequence order from `baseSequenceNumber`.
  public static func description(of feedback: RTCPTransportWideFeedback)
    -> TransportFeedbackDescription
  {
    TransportFeedbackDescription(
      baseSequenceNumber: feedback.baseSequenceNumber,
      referenceTime: UInt32(bitPattern: feedback.referenceTime) & 0xFF_FFFF,
      feedbackPacketCount: feedback.feedbackPacketCount,
      packetStatuses: feedback.packets.map { status in
        switch status {
        case .notReceived: return .notReceived
        case .receivedSmallDelta(let ticks): return .received(deltaTicks: Int16(ticks))
        case .receivedLargeOrNegativeDelta(let ticks): return .received(deltaTicks: ticks)
        }
      })
  }

  /// The RTCP packet for a description the generator built.
  /// - Parameters:
  ///   - description: from `TransportFeedbackGenerator`; its reference time is 24-bit
  ///     (64 ms units), sign-extended here.
  ///   - senderSSRC: this endpoint's SSRC; `mediaSSRC`: the SSRC of the media fed back on.
  /// - Returns: the packet, with small deltas (0...255 ticks) as one octet and others as two.
  public static func feedback(
    _ description: TransportFeedbackDescription, senderSSRC: UInt32, mediaSSRC: UInt32
  ) -> RTCPTransportWideFeedback {
    // 24-bit signed reference time.
    let raw = Int32(bitPattern: description.referenceTime << 8) >> 8
    return RTCPTransportWideFeedback(
      senderSSRC: senderSSRC, mediaSSRC: mediaSSRC,
      baseSequenceNumber: description.baseSequenceNumber, referenceTime: raw,
      feedbackPacketCount: description.feedbackPacketCount,
      packets: description.packetStatuses.map { status in
        switch status {
        case .notReceived: return .notReceived
        case .received(let ticks):
          return RTCPTransportWideFeedback.PacketStatus.received(deltaTicks: Int(ticks))
            ?? .receivedLargeOrNegativeDelta(ticks)
        }
      })
  }
}

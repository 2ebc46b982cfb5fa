/// The RTX stream repairing a media source (RFC 4588 §8: `a=ssrc-group:FID`, `apt`).
public struct RTPRetransmission: Sendable, Equatable {
  /// SSRC of the RTX stream.
  public var ssrc: UInt32
  /// RTX payload type.
  public var payloadType: UInt8

  /// Creates an RTX description.
  public init(ssrc: UInt32, payloadType: UInt8) {
    self.ssrc = ssrc
    self.payloadType = payloadType
  }
}

/// The RTP retransmission payload format (RFC 4588 §4): the retransmitted packet travels on its
/// own SSRC and payload type, with the original sequence number ("OSN") in the first two octets of
/// the payload, then the original payload.
public enum RTXPacketFormat {
  /// Builds the RTX packet that retransmits `original`.
  ///
  /// - Parameters:
  ///   - original: the media packet as first sent.
  ///   - ssrc: the RTX stream's SSRC (`a=ssrc-group:FID` partner).
  ///   - payloadType: the RTX payload type (`a=fmtp:<rtx> apt=<media>`).
  ///   - sequenceNumber: the next sequence number of the RTX stream (its own numbering).
  /// Timestamp and marker are the original's (RFC 4588 §4).
  public static func wrap(
    _ original: RTPPacket, ssrc: UInt32, payloadType: UInt8, sequenceNumber: UInt16
  ) -> RTPPacket {
    var header = original.header
    header.ssrc = ssrc
    header.payloadType = payloadType
    header.sequenceNumber = sequenceNumber
    var payload: [UInt8] = []
    payload.reserveCapacity(original.payload.count + 2)
    payload.append(UInt8(original.header.sequenceNumber >> 8))
    payload.append(UInt8(original.header.sequenceNumber & 0xFF))
    payload += original.payload
    return RTPPacket(header: header, payload: payload)
  }

  /// Restores the original media packet from an RTX packet.
  ///
  /// - Parameters:
  ///   - rtx: the received RTX packet.
  ///   - ssrc: the media SSRC the RTX stream repairs.
  ///   - payloadType: the media payload type (`apt`).
  /// - Returns: the original packet, or nil for an RTX packet with no payload at all (padding-only
  ///   packets a sender uses for bandwidth probing).
  /// - Throws: `RTPStreamError.truncatedRetransmission` when the payload is 1 octet (no whole OSN).
  public static func unwrap(_ rtx: RTPPacket, ssrc: UInt32, payloadType: UInt8)
    throws(RTPStreamError)
    -> RTPPacket?
  {
    if rtx.payload.isEmpty { return nil }
    guard rtx.payload.count >= 2 else { throw .truncatedRetransmission(length: rtx.payload.count) }
    var header = rtx.header
    header.sequenceNumber = UInt16(rtx.payload[0]) << 8 | UInt16(rtx.payload[1])
    header.ssrc = ssrc
    header.payloadType = payloadType
    return RTPPacket(header: header, payload: Array(rtx.payload.dropFirst(2)))
  }
}

/// Why a packet given to a send or receive stream was not used.
public enum RTPStreamError: Error, Equatable, Sendable {
  /// The SSRC belongs to neither the media nor the RTX stream of this receive stream.
  case unknownSSRC(UInt32)
  /// The payload type is neither the media nor the RTX payload type.
  case unexpectedPayloadType(UInt8)
  /// An RTX payload shorter than its 2-octet original sequence number (RFC 4588 §4).
  case truncatedRetransmission(length: Int)
}

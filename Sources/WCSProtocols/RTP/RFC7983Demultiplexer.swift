/// What a datagram on a shared UDP socket carries, by its first octet (RFC 7983 §7).
public enum DemultiplexedProtocol: Equatable, Sendable {
  /// 0...3: STUN (RFC 8489).
  case stun
  /// 16...19: ZRTP, which WebRTC does not use: drop.
  case zrtp
  /// 20...63: DTLS record (RFC 6347).
  case dtls
  /// 64...79: TURN ChannelData (RFC 8656 §12).
  case turnChannel
  /// 128...191 and second octet outside 192...223: RTP.
  case rtp
  /// 128...191 and second octet 192...223: RTCP (RFC 5761 §4, rtcp-mux).
  case rtcp
  /// Reserved ranges, empty packets and RTP-range packets too short to classify: drop.
  case drop
}

/// Classifies datagrams on one UDP socket shared by STUN, DTLS, TURN and SRTP/SRTCP
/// (RFC 7983 §7, RFC 5761 §4).
public enum RFC7983Demultiplexer {
  /// The protocol range of `firstByte` alone: RTP and RTCP are not told apart (`.rtp` here
  /// means "RTP or RTCP").
  public static func protocolRange(firstByte: UInt8) -> DemultiplexedProtocol {
    switch firstByte {
    case 0...3: return .stun
    case 16...19: return .zrtp
    case 20...63: return .dtls
    case 64...79: return .turnChannel
    case 128...191: return .rtp
    default: return .drop
    }
  }

  /// Classifies the datagram `packet`; RTP and RTCP are split by the second octet
  /// (M bit + payload type): 192...223 is RTCP (RFC 5761 §4).
  public static func classify(_ packet: UnsafeRawBufferPointer) -> DemultiplexedProtocol {
    guard let first = packet.first else { return .drop }
    let range = protocolRange(firstByte: first)
    guard range == .rtp else { return range }
    guard packet.count >= 2 else { return .drop }
    return (192...223).contains(packet[1]) ? .rtcp : .rtp
  }

  /// Classifies the datagram `packet` (see `classify(_:)` on a raw buffer).
  public static func classify(_ packet: [UInt8]) -> DemultiplexedProtocol {
    packet.withUnsafeBytes { classify($0) }
  }
}

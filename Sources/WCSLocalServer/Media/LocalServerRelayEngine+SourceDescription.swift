import WCSProtocols

// SDES CNAME in every compound the relay sends (RFC 3550 §6.1, §6.5.1).
extension LocalServerRelayEngine {
  /// The CNAME of a stream's legs, `wcs-<stream name>`, as the player answers signal it in
  /// `a=ssrc ... cname:` (RFC 5576 §4.1): receivers tie the audio and video SSRCs for lip sync
  /// by it. Cut at a character boundary to the 255 octets an SDES item holds (a stream name
  /// may have 256).
  static func cname(streamName: String) -> String {
    var cname = "wcs-" + streamName
    while cname.utf8.count > 255 { cname.removeLast() }
    return cname
  }

  /// `packets` with an SDES CNAME chunk for the sender of the leading report inserted after it
  /// (a compound starts with SR or RR, then SDES: RFC 3550 §6.1). Packets that start with no
  /// report are returned as they are.
  static func withSourceDescription(_ packets: [RTCPPacket], cname: String) -> [RTCPPacket] {
    let sender: UInt32
    switch packets.first {
    case .senderReport(let report)?: sender = report.ssrc
    case .receiverReport(let report)?: sender = report.ssrc
    default: return packets
    }
    let description = RTCPPacket.sourceDescription(
      RTCPSourceDescription(chunks: [
        RTCPSourceDescriptionChunk(
          ssrc: sender,
          items: [RTCPSourceDescriptionItem(type: RTCPSourceDescriptionItem.cname, text: cname)])
      ]))
    var result = packets
    result.insert(description, at: 1)
    return result
  }
}

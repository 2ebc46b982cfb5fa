import WCSProtocols

/// The video of one gateway call between its WebRTC leg and its SIP leg, both VP8 (RFC 7741):
/// passed through, each direction with its own SSRC, payload type and fixed random sequence
/// and timestamp offsets (RFC 3550 §5.1; `RelayRTPRewriter`), so loss stays visible to the
/// receiver. Key frame requests cross over: a PLI or FIR for the video we send one side asks
/// the other side's sender for a key frame, as a PLI (RFC 4585 §6.3.1) or, toward a SIP end that
/// negotiated only `ccm fir`, a FIR (RFC 5104 §4.3.1). While `holding` no video goes either way.
/// Sans-I/O: packets in, packets out; the driver does the sockets.
struct CallVideoBridge {
  /// What went through, for statistics and tests.
  struct Statistics: Equatable, Sendable {
    var packetsToSIP = 0
    var packetsToWebRTC = 0
    /// Packets that were not RTP of the expected payload type.
    var packetsDropped = 0
    /// Key frame requests from the SIP side, and toward it.
    var keyFrameRequestsFromSIP = 0
    var keyFrameRequestsToSIP = 0
  }

  /// What the SIP far end understands as a key frame request.
  let sip: SIPVideoDescription
  /// Our SSRC in the RTCP we send the SIP side.
  let rtcpSSRC: UInt32
  var holding = false
  private(set) var statistics = Statistics()
  private var toWebRTC: RelayRTPRewriter
  private var toSIP: RelayRTPRewriter
  /// The SIP side's own video SSRC, once seen: the media source of requests toward it.
  private(set) var sipSourceSSRC: UInt32?
  private var firSequence: UInt8 = 0

  /// A bridge between the WebRTC leg's VP8 `webRTCPayloadType` and the SIP leg `sip`.
  init<G: RandomNumberGenerator>(
    webRTCPayloadType: UInt8, sip: SIPVideoDescription, using generator: inout G
  ) {
    self.sip = sip
    rtcpSSRC = UInt32.random(in: 1...UInt32.max, using: &generator)
    toWebRTC = RelayRTPRewriter(
      payloadTypes: [sip.payloadType: webRTCPayloadType], using: &generator)
    toSIP = RelayRTPRewriter(payloadTypes: [webRTCPayloadType: sip.payloadType], using: &generator)
  }

  /// Our SSRC toward the WebRTC client and toward the SIP far end.
  var webRTCSSRC: UInt32 { toWebRTC.ssrc }
  var sipSSRC: UInt32 { toSIP.ssrc }

  /// A VP8 packet from the SIP far end: the client's copy, or `nil` (held, not VP8).
  mutating func receiveFromSIP(_ packet: [UInt8], now: MediaInstant) -> [UInt8]? {
    guard !holding else { return nil }
    guard let out = toWebRTC.rewrite(packet, now: now) else {
      statistics.packetsDropped += 1
      return nil
    }
    sipSourceSSRC = RelayRTPRewriter.read32(packet, 8)
    statistics.packetsToWebRTC += 1
    return out
  }

  /// A VP8 packet from the WebRTC client: the SIP far end's copy, or `nil`.
  mutating func receiveFromWebRTC(_ packet: [UInt8], now: MediaInstant) -> [UInt8]? {
    guard !holding else { return nil }
    guard let out = toSIP.rewrite(packet, now: now) else {
      statistics.packetsDropped += 1
      return nil
    }
    statistics.packetsToSIP += 1
    return out
  }

  /// Whether RTCP from the SIP side asks for a key frame of the video we send it (a PLI or a
  /// FIR entry naming `sipSSRC`): the driver then asks the WebRTC client for one.
  mutating func sipAsksForKeyFrame(_ rtcp: [UInt8]) -> Bool {
    let asks = Self.asksForKeyFrame(rtcp, of: sipSSRC)
    if asks { statistics.keyFrameRequestsFromSIP += 1 }
    return asks
  }

  /// Whether RTCP from the WebRTC client asks for a key frame of the video we send it.
  func webRTCAsksForKeyFrame(_ rtcp: [UInt8]) -> Bool {
    Self.asksForKeyFrame(rtcp, of: webRTCSSRC)
  }

  /// The RTCP compound that asks the SIP far end for a key frame: RR, then a PLI when it
  /// negotiated `nack pli`, else a FIR (its sequence number one more each time) when it
  /// negotiated `ccm fir`, else a PLI anyway (most phones answer one); `nil` before its video
  /// arrived (no media source to name).
  mutating func keyFrameRequestForSIP() -> [UInt8]? {
    guard let source = sipSourceSSRC else { return nil }
    var packets: [RTCPPacket] = [.receiverReport(RTCPReceiverReport(ssrc: rtcpSSRC))]
    if sip.fullIntraRequest && !sip.pictureLossIndication {
      firSequence &+= 1
      packets.append(
        .fullIntraRequest(
          RTCPFullIntraRequest(
            senderSSRC: rtcpSSRC,
            entries: [RTCPFullIntraRequestEntry(ssrc: source, sequenceNumber: firSequence)])))
    } else {
      packets.append(
        .pictureLossIndication(
          RTCPPictureLossIndication(senderSSRC: rtcpSSRC, mediaSSRC: source)))
    }
    guard let bytes = try? RTCPPacket.serializeCompound(packets) else { return nil }
    statistics.keyFrameRequestsToSIP += 1
    return bytes
  }

  private static func asksForKeyFrame(_ rtcp: [UInt8], of ssrc: UInt32) -> Bool {
    RTCPPacket.parseCompoundLeniently(rtcp).packets.contains { packet in
      switch packet {
      case .pictureLossIndication(let pli): return pli.mediaSSRC == ssrc
      case .fullIntraRequest(let fir): return fir.entries.contains { $0.ssrc == ssrc }
      default: return false
      }
    }
  }
}

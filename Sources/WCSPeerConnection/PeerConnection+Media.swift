import Foundation
import WCSProtocols

extension PeerConnection {
  /// Protects one RTP packet (header + payload, RFC 3550 §5.1) with SRTP and sends it on the
  /// selected pair. Call on the loop.
  ///
  /// A selected pair with a relayed local candidate sends through its TURN server
  /// (`sendApplicationDatagram`).
  ///
  /// - Throws: `.notConnected` before `.connected`, after close/failure or the peer's DTLS
  ///   close, or when the selected pair's TURN allocation is lost; `.packetTooLarge` when it
  ///   cannot fit a datagram with the SRTP tag, `.srtp` when libsrtp refuses it (e.g. shorter
  ///   than an RTP header), `.socket` when the kernel refused the send.
  public func sendRTP(_ packet: UnsafeRawBufferPointer) throws(PeerConnectionError) {
    try sendProtected(packet, isRTCP: false)
  }

  /// `sendRTP` for an array.
  public func sendRTP(_ packet: [UInt8]) throws(PeerConnectionError) {
    let result: Result<Void, PeerConnectionError> = packet.withUnsafeBytes { raw in
      do throws(PeerConnectionError) {
        return .success(try sendProtected(raw, isRTCP: false))
      } catch {
        return .failure(error)
      }
    }
    try result.get()
  }

  /// Protects one compound RTCP packet (RFC 3550 §6.1) with SRTCP and sends it on the
  /// selected pair (rtcp-mux, RFC 5761). Errors as `sendRTP`.
  public func sendRTCP(_ packet: UnsafeRawBufferPointer) throws(PeerConnectionError) {
    try sendProtected(packet, isRTCP: true)
  }

  /// `sendRTCP` for an array.
  public func sendRTCP(_ packet: [UInt8]) throws(PeerConnectionError) {
    let result: Result<Void, PeerConnectionError> = packet.withUnsafeBytes { raw in
      do throws(PeerConnectionError) {
        return .success(try sendProtected(raw, isRTCP: true))
      } catch {
        return .failure(error)
      }
    }
    try result.get()
  }

  private func sendProtected(_ packet: UnsafeRawBufferPointer, isRTCP: Bool)
    throws(PeerConnectionError)
  {
    do {
      try protectAndSend(packet, isRTCP: isRTCP)
    } catch {
      // Counted here, so a caller that only logs (or ignores) the error still shows in `stats`.
      if isRTCP { counters.rtcpSendFailures += 1 } else { counters.rtpSendFailures += 1 }
      throw error
    }
  }

  private func protectAndSend(_ packet: UnsafeRawBufferPointer, isRTCP: Bool)
    throws(PeerConnectionError)
  {
    loop.assertInEventLoop()
    // While consent is merely late (`.disconnected`) media keeps going, as in WebRTC; the
    // keys are gone after a failure, a close or the peer's close_notify.
    guard state == .connected || state == .disconnected, let outbound = srtpOutbound,
      let pair = selectedPair, let source = packet.baseAddress
    else { throw .notConnected }
    let trailer = isRTCP ? outbound.profile.rtcpTrailerLength : outbound.profile.rtpTrailerLength
    guard packet.count + trailer <= sendBuffer.count else {
      throw .packetTooLarge(bytes: packet.count)
    }
    sendBuffer.baseAddress?.copyMemory(from: source, byteCount: packet.count)
    let length: Int
    do {
      length =
        isRTCP
        ? try outbound.protectRTCP(sendBuffer, length: packet.count)
        : try outbound.protectRTP(sendBuffer, length: packet.count)
    } catch {
      throw .srtp(error)
    }
    try sendApplicationDatagram(
      UnsafeRawBufferPointer(rebasing: sendBuffer[0..<length]), socket: pair.socket,
      to: pair.remote.address)
    if isRTCP {
      counters.rtcpPacketsSent += 1
    } else {
      counters.rtpPacketsSent += 1
      counters.rtpBytesSent += packet.count
      localSendSSRCs.insert(Self.ssrc(ofRTP: packet))
    }
  }

  /// RTT from report blocks about our SSRCs (`RTCPReportBlock.roundTripTime`, RFC 3550 §6.4.1),
  /// the arrival on the wall clock. Valid when our sender reports carry wall-clock NTP time.
  func updateRoundTripTime(_ packet: UnsafeRawBufferPointer) {
    guard !localSendSSRCs.isEmpty else { return }
    let packets = RTCPPacket.parseCompoundLeniently(packet).packets
    let arrival = Self.ntpMiddle32(Date())
    for item in packets {
      let blocks: [RTCPReportBlock]
      switch item {
      case .senderReport(let report): blocks = report.reports
      case .receiverReport(let report): blocks = report.reports
      default: continue
      }
      for block in blocks where localSendSSRCs.contains(block.ssrc) {
        guard let rtt = block.roundTripTime(arrival: arrival) else { continue }
        counters.roundTripTime = rtt.duration
      }
    }
  }

  /// The middle 32 bits of the NTP timestamp of `date` (RFC 3550 §4): 16.16 fixed point
  /// seconds since 1900.
  static func ntpMiddle32(_ date: Date) -> UInt32 {
    let seconds = date.timeIntervalSince1970 + 2_208_988_800
    let fixed = UInt64(seconds * 65_536)
    return UInt32(truncatingIfNeeded: fixed)
  }
}

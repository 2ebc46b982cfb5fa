import Foundation
import WCSProtocols

/// Publish path on the loop: the publish session's outputs to SRTP and the tracks, and the RTCP
/// it answers (NACK → retransmission, PLI/FIR → key frame, feedback and REMB → bitrate).
extension NativeMediaConnection {
  // MARK: - Media out

  /// Numbers and sends `payloads`; `audioCapturedAt`: when an audio payload's first sample was
  /// captured (`AudioSendTrack`), for the SR's clock mapping.
  func sendMedia(
    _ payloads: [PacketizedPayload], video: Bool, audioCapturedAt: MediaInstant? = nil
  ) {
    guard !closed, let peerConnection, peerConnection.state == .connected,
      let first = payloads.first
    else { return }
    let now = loop.mediaNow()
    // Without a capture time, an audio frame's first sample counts as captured a frame (20 ms)
    // before it could be encoded.
    let captureTime =
      video
      ? captureTime(of: first, now: now)
      : audioCapturedAt ?? now - .milliseconds(20)
    // In place (optional chaining): a copy would share the send streams' packet histories and
    // the pacer's queues, and copy them on the first write.
    guard
      let output = publishSession?.send(
        payloads, kind: video ? .video : .audio, now: now, captureTime: captureTime)
    else { return }
    perform(output)
    armPacerTimer(now: now)
  }

  /// When a video payload's picture was captured: every video source stamps pictures with
  /// `mediaClock`, so the timestamp's age is exact (anything else counts as captured now).
  func captureTime(of payload: PacketizedPayload, now: MediaInstant) -> MediaInstant {
    let ticks = Int64(Int32(bitPattern: mediaClock.videoTimestamp() &- payload.timestamp))
    guard ticks >= 0, ticks < 90_000 else { return now }
    return now - MediaTime(ticks: ticks, clockRate: 90_000).duration
  }

  /// Sends the session's RTP and RTCP and tells the tracks and statistics its events.
  func perform(_ output: RTPPublishSession.Output) {
    for bytes in output.packets { sendRTP(bytes) }
    for compound in output.rtcp { sendRTCP(compound) }
    for event in output.events {
      switch event {
      case .keyFrameRequested:
        videoTrack?.requestKeyFrame()
      case .targetBitrateChanged(let bitrate):
        videoTrack?.setBitrate(bitrate)
      case .roundTripTime(let rtt):
        extra.roundTripTime = rtt.seconds
      case .receptionReport(let block, let kind):
        if kind == .video || publishSession?.videoSend == nil {
          counters.packetsLost = Int64(block.packetsLost)
        }
      }
    }
  }

  func sendRTP(_ bytes: [UInt8]) {
    guard let peerConnection else { return }
    do {
      try peerConnection.sendRTP(bytes)
      counters.packetsSent += 1
      counters.bytesSent += UInt64(bytes.count)
    } catch {
      // `sendMedia` sends only when connected: this is a real loss (SRTP refused the packet,
      // the socket failed, or the connection went away since), counted for the statistics.
      extra.rtpSendFailures += 1
    }
  }

  /// Sends `packets` as one compound; feedback alone gets an empty RR in front, so the
  /// compound starts with a report as RFC 3550 §6.1 asks even when rtcp-rsize was not agreed.
  func sendRTCP(_ packets: [RTCPPacket]) {
    guard !packets.isEmpty, let peerConnection else { return }
    // A compound starts with a report (RFC 3550 §6.1): an empty RR ahead of feedback alone,
    // made first rather than inserted (no shift, no second allocation).
    let compound: [RTCPPacket]
    switch packets[0] {
    case .senderReport, .receiverReport: compound = packets
    default:
      var withReport: [RTCPPacket] = []
      withReport.reserveCapacity(packets.count + 1)
      withReport.append(.receiverReport(RTCPReceiverReport(ssrc: localSSRC)))
      withReport.append(contentsOf: packets)
      compound = withReport
    }
    do {
      try peerConnection.sendRTCP(try RTCPPacket.serializeCompound(compound))
    } catch {
      extra.rtcpSendFailures += 1
    }
  }

  func receiveRTCP(_ raw: UnsafeRawBufferPointer) {
    guard !closed else { return }
    // Lenient: one bad sub-packet (a peer's or a middlebox's) must not hide the feedback next
    // to it.
    let compound = RTCPPacket.parseCompoundLeniently(raw)
    extra.malformedRTCPPackets += compound.skipped.count + (compound.stoppedBy == nil ? 0 : 1)
    let packets = compound.packets
    // When it arrived, though the loop may have been busy since.
    let now = loop.datagramArrival ?? loop.mediaNow()
    for case .senderReport(let report) in packets {
      playSession.handleSenderReport(report, now: now)
      feedPlayoutSync(senderReportOf: report.ssrc)
    }
    // In place, as in `sendMedia`.
    guard let output = publishSession?.handle(packets, now: now) else { return }
    perform(output)
    // A key frame request deferred by the send stream's interval: poll when it ends.
    if publishSession?.keyFrameRequestPending == true { schedulePoll() }
  }
}

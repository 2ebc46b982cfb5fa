import Foundation
import WCSProtocols

/// Publish path on the loop: numbering, SRTP send, and the RTCP the send streams answer
/// (NACK → retransmission, PLI/FIR → key frame, REMB → bandwidth estimate).
extension NativeMediaConnection {
  // MARK: - Media out

  /// Numbers and sends `payloads`; `audioCapturedAt`: when an audio payload's first sample was
  /// captured (`AudioSendTrack`), for the SR's clock mapping.
  func sendMedia(
    _ payloads: [PacketizedPayload], video: Bool, audioCapturedAt: ContinuousClock.Instant? = nil
  ) {
    guard !closed, let peerConnection, peerConnection.state == .connected else { return }
    let now = loop.mediaNow()
    for payload in payloads {
      // The send streams are mutated in place (optional chaining): a copy would share the
      // packet history's storage, and the first write would then copy the whole history
      // (1024 packets) for every packet sent.
      let sent: RTPPacket?
      if video {
        sent = videoSend?.send(
          payload, now: now, captureTime: captureTime(of: payload, now: now))
      } else {
        // Without a capture time, the frame's first sample counts as captured a frame (20 ms)
        // before it could be encoded.
        sent = audioSend?.send(
          payload, now: now,
          captureTime: audioCapturedAt.map(MediaInstant.init) ?? now - .milliseconds(20))
      }
      guard let packet = sent else { return }
      if pacer != nil {
        enqueuePaced(packet, video: video, now: now)
      } else {
        stampAndSend(packet, video: video, now: now)
      }
    }
    if pacer != nil { drainPacer() }
  }

  /// When a video payload's picture was captured: every video source stamps pictures with
  /// `mediaClock`, so the timestamp's age is exact (anything else counts as captured now).
  func captureTime(of payload: PacketizedPayload, now: MediaInstant) -> MediaInstant {
    let ticks = Int64(Int32(bitPattern: mediaClock.videoTimestamp() &- payload.timestamp))
    guard ticks >= 0, ticks < 90_000 else { return now }
    return now - MediaTime(ticks: ticks, clockRate: 90_000).duration
  }

  /// Puts the transport-wide sequence number on `packet` (numbers follow the send order, so
  /// this runs when the packet leaves the pacer) and sends it.
  func stampAndSend(_ packet: RTPPacket, video: Bool, now: MediaInstant) {
    var stamped = packet
    let transportSequenceNumber = nextTransportSequenceNumber
    if let id = transportWideCCID {
      TransportWideCC.stamp(&stamped.header, id: id, sequenceNumber: transportSequenceNumber)
      nextTransportSequenceNumber &+= 1
    }
    guard let bytes = try? stamped.serialized() else { return }
    sendRTP(bytes)
    if transportWideCCID != nil {
      estimator?.onPacketSent(
        PacketSent(
          transportSequenceNumber: transportSequenceNumber, sendTime: now,
          size: bytes.count))
    }
    if video { videoBytesSent += UInt64(bytes.count) }
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
    for packet in packets {
      if case .transportWideFeedback(let feedback) = packet, let estimator {
        extra.transportFeedbackReceived += 1
        estimator.onTransportFeedback(
          TransportWideCC.description(of: feedback).packetFeedbacks(), now: now)
      }
      if case .senderReport(let report) = packet {
        playSession.handleSenderReport(report, now: now)
        feedPlayoutSync(senderReportOf: report.ssrc)
      }
      // In place, as in `sendMedia`.
      if let output = videoSend?.handle(packet, now: now) {
        process(output, video: true, now: now)
      }
      if let output = audioSend?.handle(packet, now: now) {
        process(output, video: false, now: now)
      }
    }
    // A key frame request deferred by the send stream's interval: poll when it ends.
    if videoSend?.keyFrameRequestPending == true { schedulePoll() }
  }

  func process(_ output: RTPSendStream.Output, video: Bool, now: MediaInstant) {
    for bytes in output.packets { sendRTP(bytes) }
    sendRTCP(output.rtcp)
    for event in output.events {
      switch event {
      case .keyFrameRequested:
        if video { videoTrack?.requestKeyFrame() }
      case .roundTripTime(let rtt):
        extra.roundTripTime = rtt
        estimator?.onRoundTripTime(.microseconds(Int(rtt * 1_000_000)))
      case .receiverEstimatedMaxBitrate(let bitrate):
        estimator?.onREMB(REMBUpdate(bitrate: Int(clamping: bitrate)), now: now)
      case .receptionReport(let block):
        if video || videoSend == nil { counters.packetsLost = Int64(block.packetsLost) }
      }
    }
  }
}

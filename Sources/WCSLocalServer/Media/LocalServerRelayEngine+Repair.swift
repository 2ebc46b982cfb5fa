import Foundation
import WCSProtocols

// Loss repair on both legs (RFC 4585 §6.2.1, RFC 4588): NACKs to the publisher for what the
// relay lost, and the players' NACKs answered from the packet cache.
extension LocalServerRelayEngine {
  /// Feeds one packet of a NACKed kind to the SSRC's loss tracker and arms the NACK timer when
  /// a new gap appeared.
  func trackLoss(
    _ publisher: RelayPublisher, ssrc: UInt32, sequenceNumber: UInt16, now: MediaInstant
  ) {
    var tracker =
      publisher.losses.removeValue(forKey: ssrc)
      ?? RelayLossTracker(generator: NACKGenerator(configuration: configuration.nack))
    let highest = tracker.sequence.highest
    let extended = tracker.sequence.extend(sequenceNumber)
    let recoveredBefore = tracker.generator.recoveredAfterRequest
    tracker.generator.packetArrived(Int64(extended), now: now)
    // A NACKed packet arriving: its resend (a merely reordered one was never asked for).
    if tracker.generator.recoveredAfterRequest > recoveredBefore {
      publisher.statistics.retransmissions += 1
    }
    let gap = highest.map { Int64(extended) - Int64($0) - 1 } ?? 0
    if gap > 0 { publisher.statistics.packetsLost += Int(gap) }
    let wantsKeyFrame = tracker.generator.takeKeyFrameRequest()
    let deadline = gap > 0 ? tracker.generator.nextDeadline(roundTripTime: nil) : nil
    publisher.losses[ssrc] = tracker
    if wantsKeyFrame { _ = requestKeyFrame(publisher) }
    if let deadline { scheduleNACKs(publisher, at: deadline) }
  }

  func scheduleNACKs(_ publisher: RelayPublisher, at deadline: MediaInstant) {
    if let current = publisher.nackTimerDeadline, current <= deadline { return }
    if let timer = publisher.nackTimer { loop.cancel(timer) }
    publisher.nackTimerDeadline = deadline
    publisher.nackTimer = loop.schedule(after: delay(until: deadline)) {
      [weak self, weak publisher] in
      guard let self, let publisher else { return }
      publisher.nackTimer = nil
      publisher.nackTimerDeadline = nil
      self.sendNACKs(publisher)
    }
  }

  /// Sends the NACKs due on the publisher's leg, one generic NACK per SSRC (RFC 4585 §6.2.1),
  /// and arms the timer for the next.
  func sendNACKs(_ publisher: RelayPublisher) {
    guard publishers[publisher.mediaSessionId] === publisher else { return }
    let now = loop.mediaNow()
    var feedback: [RTCPPacket] = []
    var next: MediaInstant?
    for ssrc in publisher.losses.keys.sorted() {
      guard var tracker = publisher.losses[ssrc] else { continue }
      let givenUpBefore = tracker.generator.givenUp
      let due = tracker.generator.due(now: now, roundTripTime: nil)
      publisher.statistics.packetsGivenUp += tracker.generator.givenUp - givenUpBefore
      if let deadline = tracker.generator.nextDeadline(roundTripTime: nil) {
        next = min(next ?? deadline, deadline)
      }
      publisher.losses[ssrc] = tracker
      guard !due.isEmpty else { continue }
      publisher.statistics.nackedPackets += due.count
      feedback.append(
        .genericNACK(
          RTCPGenericNACK(
            senderSSRC: publisher.rtcpSSRC, mediaSSRC: ssrc,
            lost: due.map { UInt16(truncatingIfNeeded: $0) })))
    }
    if !feedback.isEmpty {
      sendRTCP(
        [.receiverReport(RTCPReceiverReport(ssrc: publisher.rtcpSSRC))] + feedback,
        cname: publisher.cname, on: publisher.peerConnection,
        failures: &publisher.statistics.sendFailures)
    }
    if let next { scheduleNACKs(publisher, at: next) }
  }

  func playerRTCP(_ player: RelayPlayer, _ raw: UnsafeRawBufferPointer) {
    guard let publisher = publishers[player.sourceMediaSessionId] else { return }
    // Lenient: one malformed sub-packet must not hide the PLI or NACK next to it.
    let packets = RTCPPacket.parseCompoundLeniently(raw).packets
    let now = loop.mediaNow()
    for packet in packets {
      switch packet {
      case .pictureLossIndication, .fullIntraRequest:
        player.statistics.keyFrameRequests += 1
        switch requestKeyFrame(publisher) {
        case .forward: player.statistics.keyFrameRequestsForwarded += 1
        case .deferred: player.statistics.keyFrameRequestsDeferred += 1
        case nil: break
        }
      case .genericNACK(let nack):
        answer(nack, from: player, publisher: publisher, now: now)
      case .receiverReport(let report):
        for block in report.reports where player.ssrcs.values.contains(block.ssrc) {
          // Negative when duplicates outnumber losses (RFC 3550 §6.4.1): nothing was lost.
          player.lostBySSRC[block.ssrc] = max(0, Int(block.packetsLost))
        }
      default: break
      }
    }
  }

  /// Answers a player's generic NACK from the publisher's cache: RTX when the player
  /// negotiated it for the codec, else the packet as first sent (same sequence number: SRTP
  /// `allow_repeat_tx`). Each sequence number is resent at most once per 0.8 × the leg's RTT,
  /// and within the player's rate limit.
  func answer(
    _ nack: RTCPGenericNACK, from player: RelayPlayer, publisher: RelayPublisher, now: MediaInstant
  ) {
    guard
      let (sourceSSRC, rewriter) = player.rewriters.first(where: {
        $0.value.ssrc == nack.mediaSSRC
      })
    else { return }
    let rtt = player.peerConnection.stats.roundTripTime.map(MediaDuration.init) ?? .milliseconds(50)
    let minimumInterval = max(.milliseconds(5), rtt * 8 / 10)
    let kind = player.ssrcs.first { $0.value == nack.mediaSSRC }?.key
    for lost in nack.lostSequenceNumbers {
      player.statistics.nackedPackets += 1
      guard let cached = publisher.caches[sourceSSRC]?.packet(rewriter.sourceSequenceNumber(lost))
      else {
        player.statistics.nacksUnanswerable += 1
        continue
      }
      switch player.resends.admit(lost, now: now, minimumInterval: minimumInterval) {
      case .tooSoon:
        player.statistics.nacksUnanswerable += 1
        continue
      case .rateLimited:
        player.statistics.nacksRateLimited += 1
        continue
      case .send: break
      }
      guard var out = player.rewriters[sourceSSRC]?.rewrite(cached, now: now, countsAsSent: false)
      else { continue }
      if let kind, let rtxSSRC = player.retransmissionSSRCs[kind],
        let rtxPayloadType = player.retransmissionPayloadTypes[out[1] & 0x7F],
        let original = try? RTPPacket.parse(out),
        let sequenceNumber = player.retransmissionSequenceNumbers[kind]
      {
        let wrapped = RTXPacketFormat.wrap(
          original, ssrc: rtxSSRC, payloadType: rtxPayloadType, sequenceNumber: sequenceNumber)
        guard let bytes = try? wrapped.serialized() else { continue }
        player.retransmissionSequenceNumbers[kind] = sequenceNumber &+ 1
        out = bytes
      }
      if sendRTP(out, to: player) {
        player.statistics.nacksAnswered += 1
        player.statistics.retransmissions += 1
      }
    }
  }
}

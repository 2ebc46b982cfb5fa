import Foundation
import WCSPeerConnection
import WCSProtocols

/// The periodic RTCP/jitter-buffer poll and the counters.
extension NativeMediaConnection {
  // MARK: - Timers and statistics

  /// Play polls when something falls due (a jitter-buffer release, a NACK, a PLI, a receiver
  /// report, transport feedback), so a played stream wakes the loop about once per frame
  /// instead of 100 times a second. Publish polls when an SR (or anything a receive stream
  /// has) falls due, with a leeway, so the poll rides on the wake-ups the media hand-offs make
  /// anyway (the congestion controller works on feedback as it arrives, the pacer has a timer
  /// of its own; nothing else there has to be on time).
  ///
  /// - Parameter fromPoll: called by the poll timer's own action, which is then scheduled
  ///   again rather than made anew.
  func schedulePoll(fromPoll: Bool = false) {
    // A renderer called on the loop may have closed the connection during the poll.
    guard !closed else { return }
    let now = loop.mediaNow()
    let leeway = request.receives ? tuning.playPollLeeway : tuning.publishPollLeeway
    let deadline = max(nextPollDeadline(now: now), now + tuning.minimumPollInterval)
    if fromPoll, pollTimer == nil,
      let again = loop.scheduleFiringActionAgain(at: deadline, leeway: leeway)
    {
      pollDeadline = deadline
      pollTimer = again
      return
    }
    armPoll(at: deadline, leeway: leeway)
  }

  /// Play: re-arms the poll when `deadline` comes before the armed one. Call on the loop.
  func pollNoLaterThan(_ deadline: MediaInstant) {
    guard let pollDeadline, deadline < pollDeadline else { return }
    armPoll(at: deadline, leeway: tuning.playPollLeeway)
  }

  /// Arms the poll at `deadline`.
  private func armPoll(at deadline: MediaInstant, leeway: MediaDuration) {
    pollDeadline = deadline
    // Moved rather than cancelled and made anew: no closure to allocate (play re-arms the
    // poll for most packets).
    if let pollTimer, let moved = loop.reschedule(pollTimer, at: deadline, leeway: leeway) {
      self.pollTimer = moved
      return
    }
    pollTimer = loop.schedule(at: deadline, leeway: leeway) { [weak self] in
      guard let self, !self.closed else { return }
      self.pollTimer = nil
      self.pollDeadline = nil
      self.poll()
      self.schedulePoll(fromPoll: true)
    }
  }

  /// The earliest deadline of the receive streams, the send streams' SRs and (play) the
  /// transport-feedback generator, capped so the bitrate window and anything without a deadline
  /// of its own still advance. The generator is only polled on play, so publish leaves it out
  /// (a stale deadline there would make the publish poll spin).
  private func nextPollDeadline(now: MediaInstant) -> MediaInstant {
    var next = now + tuning.maximumPollInterval
    for entry in reception.routes {
      next = min(next, entry.nextDeadline)
    }
    if request.sends {
      // Only publish (and a call) has send streams (see `poll`).
      if let due = videoSend?.nextDeadline { next = min(next, due) }
      if let due = audioSend?.nextDeadline { next = min(next, due) }
    }
    if request.receives, transportWideCCID != nil,
      let due = reception.transportFeedbackGenerator.nextDeadline
    {
      next = min(next, mediaClockOrigin + .microseconds(Int(due)))
    }
    return next
  }

  /// The receive side's latency and wake-up knobs (`ReceiveTuning`), as configured.
  var tuning: ReceiveTuning { configuration.peerConnection.receiveTuning }
  /// The span `currentVideoBitrate` is measured over, at least.
  static let bitrateWindow = MediaDuration.seconds(1)

  func poll() {
    let mediaNow = loop.mediaNow()
    for entry in reception.routes {
      let output = entry.poll(now: mediaNow)
      deliver(output, isVideo: entry.isVideo, now: mediaNow)
      // The released packets' array serves the next release (decoded on the loop, the track
      // has let go of it).
      if output.packets.capacity > 0 { entry.video?.recycleReleased((consume output).packets) }
    }
    // Only publish has send streams (`setUpSendStreams`): play skips looking at them (each
    // look is an access and a resilient enum check).
    if request.sends {
      // In place (see `sendMedia`).
      if let output = videoSend?.poll(now: mediaNow) {
        process(output, video: true, now: mediaNow)
      }
      if let output = audioSend?.poll(now: mediaNow) {
        process(output, video: false, now: mediaNow)
      }
      if let rtt = videoSend?.roundTripTime ?? audioSend?.roundTripTime {
        for entry in receivers.values { entry.video?.roundTripTime = rtt }
      }
    }
    if request.receives, transportWideCCID != nil {
      let micros = (mediaNow - mediaClockOrigin).microseconds
      for description in reception.transportFeedbackGenerator.poll(now: micros) {
        extra.transportFeedbackSent += 1
        sendRTCP([
          .transportWideFeedback(
            TransportWideCC.feedback(
              description, senderSSRC: localSSRC, mediaSSRC: lowestReceivedSSRC()))
        ])
      }
    }
    updateBitrate(now: mediaNow)
  }

  /// The lowest SSRC received from (`receivers.keys.min()`, from the route list: no walk of
  /// the dictionary); 0 without any.
  private func lowestReceivedSSRC() -> UInt32 {
    var lowest: UInt32?
    for entry in reception.routes where lowest.map({ entry.ssrc < $0 }) ?? true {
      lowest = entry.ssrc
    }
    return lowest ?? 0
  }

  /// Measures `currentVideoBitrate` over windows of at least `bitrateWindow`.
  func updateBitrate(now: MediaInstant) {
    let bytes = videoBytes
    guard let window = rateWindow else {
      rateWindow = (now, bytes)
      return
    }
    let elapsed = now - window.start
    guard elapsed >= Self.bitrateWindow else { return }
    counters.currentVideoBitrate = Int(Double(bytes - window.bytes) * 8 / elapsed.seconds)
    rateWindow = (now, bytes)
  }

  func collectStatistics() -> DetailedStatistics {
    var result = extra
    result.summary = counters
    if let estimator { result.summary.availableOutgoingBitrate = estimator.targetBitrate }
    if let video = videoTrack?.statistics {
      result.framesEncoded = video.framesEncoded
      result.keyFramesEncoded = video.keyFramesEncoded
      result.videoEncoderBitrate = video.bitrate
      result.videoEncodeCPUTime = video.encodeCPUTime
      result.sourceCPUTime += video.sourceCPUTime
      result.encoderImplementation = video.encoderImplementation
      result.framesPassedThrough = video.framesPassedThrough
      result.keyFramesPassedThrough = video.keyFramesPassedThrough
      result.keyFrameRequestsAwaitingIDR = video.keyFrameRequestsAwaitingIDR
      result.passThroughRefusal = video.passThroughRefusal
    }
    if let audio = audioTrack?.statistics {
      result.audioFramesEncoded = audio.framesEncoded
      result.audioEncodeCPUTime = audio.encodeCPUTime
      result.sourceCPUTime += audio.sourceCPUTime
    }
    if let video = videoReceiveTrack?.statistics {
      result.framesDecoded = video.framesDecoded
      result.keyFramesDecoded = video.keyFramesDecoded
      result.videoDecodeCPUTime = video.decodeCPUTime
    }
    if let audio = audioReceiveTrack?.statistics {
      result.audioFramesDecoded = audio.decodedFrames
      result.audioDecodeCPUTime = audio.decodeCPUTime
    }
    if let audio = audioReceiveTrack {
      let delay = audio.playoutDelay
      result.audioPlayoutDelay = delay.current.seconds
      result.audioPlayoutTargetDelay = delay.target.seconds
    }
    for stream in [videoSend, audioSend].compactMap({ $0 }) {
      result.retransmissions += stream.counters.retransmissions
      result.retransmissionsSkipped += stream.counters.retransmissionsSkipped
      result.keyFrameRequests += stream.counters.keyFrameRequests
      result.keyFrameRequestsReceived +=
        stream.counters.keyFrameRequests + stream.counters.keyFrameRequestsSuppressed
      result.nackedPacketsReceived +=
        stream.counters.retransmissions + stream.counters.retransmissionsSkipped
      result.senderReports += stream.counters.senderReports
      if result.roundTripTime == nil { result.roundTripTime = stream.roundTripTime }
    }
    for entry in receivers.values {
      if let counters = entry.source?.counters {
        result.nacksSent += counters.nacksSent
        result.plisSent += counters.plisSent
        result.rtxPacketsReceived += counters.retransmittedPackets
        result.receiverReports += counters.receiverReportsSent
        result.malformedPackets += counters.malformedPackets
      }
      // Several video sources (a new sender after a restart) report the one holding longest.
      if let buffer = entry.video?.jitterBuffer,
        buffer.delay > result.videoJitterBufferDelay ?? -1
      {
        result.videoJitterBufferDelay = buffer.delay
        result.videoJitterBufferTargetDelay = buffer.targetDelay
      }
      if let nack = entry.video?.nackGenerator {
        result.nackedPacketsRequested += nack.requestsSent
        result.nackedPacketsRecovered += nack.recoveredAfterRequest
        result.nackedPacketsGivenUp += nack.givenUp
        result.packetsRecovered += nack.recovered
        result.packetsGivenUp += nack.givenUp
      }
      if request.receives, let lost = entry.source?.statistics.cumulativeLost {
        result.summary.packetsLost += Int64(lost)
      }
    }
    if let rtt = peerConnection?.stats.roundTripTime, result.roundTripTime == nil {
      let (seconds, attoseconds) = rtt.components
      result.roundTripTime = Double(seconds) + Double(attoseconds) * 1e-18
    }
    return result
  }
}

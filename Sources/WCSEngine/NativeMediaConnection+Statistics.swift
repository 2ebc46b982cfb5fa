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

  /// The earliest deadline of the play session (streams, transport feedback: play only) and the
  /// send streams' SRs, capped so the bitrate window and the rest still advance.
  private func nextPollDeadline(now: MediaInstant) -> MediaInstant {
    var next = min(now + tuning.maximumPollInterval, playSession.nextDeadline)
    if request.sends {
      // Only publish (and a call) has send streams (see `poll`).
      if let due = publishSession?.nextDeadline { next = min(next, due) }
    }
    return next
  }

  /// The receive side's latency and wake-up knobs (`ReceiveTuning`), as configured.
  var tuning: ReceiveTuning { configuration.peerConnection.receiveTuning }
  /// The span `currentVideoBitrate` is measured over, at least.
  static let bitrateWindow = MediaDuration.seconds(1)

  func poll() {
    let mediaNow = loop.mediaNow()
    let played = playSession.poll(now: mediaNow)
    deliver(played.video, isVideo: true, now: mediaNow)
    deliver(played.audio, isVideo: false, now: mediaNow)
    let feedback = played.transportFeedback
    // The released packets' array serves the next release (decoded on the loop, the track
    // has let go of it).
    playSession.recycle(consume played)
    // Only publish has send streams (`setUpSendStreams`): play skips looking at them (each
    // look is an access and a resilient enum check).
    if request.sends {
      // In place (see `sendMedia`).
      if let output = publishSession?.poll(now: mediaNow) { perform(output) }
      if let rtt = publishSession?.roundTripTime {
        playSession.setRoundTripTime(rtt)
      }
    }
    for packet in feedback { sendRTCP([packet]) }
    updateBitrate(now: mediaNow)
  }

  /// Measures `currentVideoBitrate` over windows of at least `bitrateWindow`.
  func updateBitrate(now: MediaInstant) {
    let bytes =
      (publishSession?.counters.videoBytesSent ?? 0) + playSession.counters.videoBytesReceived
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
    if let estimator = publishSession?.estimator {
      result.summary.availableOutgoingBitrate = estimator.targetBitrate
    }
    result.transportFeedbackReceived = publishSession?.counters.transportFeedbackReceived ?? 0
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
    for stream in [publishSession?.videoSend, publishSession?.audioSend].compactMap({ $0 }) {
      result.retransmissions += stream.counters.retransmissions
      result.retransmissionsSkipped += stream.counters.retransmissionsSkipped
      result.keyFrameRequests += stream.counters.keyFrameRequests
      result.keyFrameRequestsReceived +=
        stream.counters.keyFrameRequests + stream.counters.keyFrameRequestsSuppressed
      result.nackedPacketsReceived +=
        stream.counters.retransmissions + stream.counters.retransmissionsSkipped
      result.senderReports += stream.counters.senderReports
      if result.roundTripTime == nil { result.roundTripTime = stream.roundTripTime?.seconds }
    }
    let play = playSession
    result.summary.packetsReceived = play.counters.packetsReceived
    result.summary.bytesReceived = play.counters.bytesReceived
    result.malformedPackets += play.counters.malformedPackets
    result.transportFeedbackSent = play.counters.transportFeedbackSent
    for source in [play.video?.source, play.audio?.source].compactMap({ $0 }) {
      result.nacksSent += source.counters.nacksSent
      result.plisSent += source.counters.plisSent
      result.rtxPacketsReceived += source.counters.retransmittedPackets
      result.receiverReports += source.counters.receiverReportsSent
      result.malformedPackets += source.counters.malformedPackets
      if request.receives { result.summary.packetsLost += Int64(source.statistics.cumulativeLost) }
    }
    if let video = play.video {
      result.videoJitterBufferDelay = video.jitterBuffer.delay
      result.videoJitterBufferTargetDelay = video.jitterBuffer.targetDelay
      let nack = video.nackGenerator
      result.nackedPacketsRequested += nack.requestsSent
      result.nackedPacketsRecovered += nack.recoveredAfterRequest
      result.nackedPacketsGivenUp += nack.givenUp
      result.packetsRecovered += nack.recovered
      result.packetsGivenUp += nack.givenUp
    }
    if let rtt = peerConnection?.stats.roundTripTime, result.roundTripTime == nil {
      result.roundTripTime = MediaDuration(rtt).seconds
    }
    return result
  }
}

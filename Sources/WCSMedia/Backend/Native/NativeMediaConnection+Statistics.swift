import Foundation

/// The periodic RTCP/jitter-buffer poll and the counters.
extension NativeMediaConnection {
  // MARK: - Timers and statistics

  func schedulePoll() {
    pollTimer = loop.schedule(after: .milliseconds(10)) { [weak self] in
      guard let self, !self.closed else { return }
      self.poll()
      self.schedulePoll()
    }
  }

  func poll() {
    let now = loop.now()
    for key in Array(receivers.keys) {
      guard var entry = receivers[key] else { continue }
      let output = entry.stream.poll(now: now)
      receivers[key] = entry
      deliver(output, isVideo: entry.isVideo, now: now)
    }
    if var stream = videoSend {
      let output = stream.poll(now: now)
      videoSend = stream
      process(output, video: true, now: now)
    }
    if var stream = audioSend {
      let output = stream.poll(now: now)
      audioSend = stream
      process(output, video: false, now: now)
    }
    if let rtt = videoSend?.roundTripTime ?? audioSend?.roundTripTime {
      for key in Array(receivers.keys) { receivers[key]?.stream.roundTripTime = rtt }
    }
    if transportWideCCID != nil, request.direction == .play {
      let mediaSSRC = receivers.keys.min() ?? 0
      for description in transportFeedbackGenerator.poll(now: micros(now)) {
        extra.transportFeedbackSent += 1
        sendRTCP([
          .transportWideFeedback(
            TransportWideCC.feedback(description, senderSSRC: localSSRC, mediaSSRC: mediaSSRC))
        ])
      }
    }
    updateBitrate(now: now)
  }

  func updateBitrate(now: ContinuousClock.Instant) {
    let bytes = videoBytes
    guard let window = rateWindow else {
      rateWindow = (now, bytes)
      return
    }
    let elapsed = now - window.start
    guard elapsed >= .seconds(1) else { return }
    let seconds =
      Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    counters.currentVideoBitrate = Int(Double(bytes - window.bytes) * 8 / seconds)
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
    }
    result.audioFramesEncoded = audioTrack?.statistics.framesEncoded ?? 0
    result.framesDecoded = videoReceiveTrack?.statistics.framesDecoded ?? 0
    result.audioFramesDecoded = audioReceiveTrack?.statistics.decodedFrames ?? 0
    for stream in [videoSend, audioSend].compactMap({ $0 }) {
      result.retransmissions += stream.counters.retransmissions
      result.keyFrameRequests += stream.counters.keyFrameRequests
      result.senderReports += stream.counters.senderReports
      if result.roundTripTime == nil { result.roundTripTime = stream.roundTripTime }
    }
    for entry in receivers.values {
      result.nacksSent += entry.stream.counters.nacksSent
      result.plisSent += entry.stream.counters.plisSent
      result.receiverReports += entry.stream.counters.receiverReportsSent
      result.malformedPackets += entry.stream.counters.malformedPackets
      if request.direction == .play {
        result.summary.packetsLost += Int64(entry.stream.statistics.cumulativeLost)
      }
    }
    if let rtt = peerConnection?.stats.roundTripTime, result.roundTripTime == nil {
      let (seconds, attoseconds) = rtt.components
      result.roundTripTime = Double(seconds) + Double(attoseconds) * 1e-18
    }
    return result
  }
}

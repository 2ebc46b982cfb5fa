import Dispatch

/// Lip sync in the decode tracks: video frames wait in a `VideoRenderQueue` for the video's extra
/// delay, audio goes through an `AudioDelayLine` for the audio's; both report what they played
/// to the connection's `PlayoutSync`. Without a `PlayoutSync` frames pass straight through.
extension VideoReceiveTrack {
  /// Renders decoded `frames`, now or after the sync delay. On `queue`, or on the loop while
  /// nothing is queued (`VideoReceiveTrack`).
  func present(_ frames: [VideoDecodePipeline<VideoFrame>.Frame]) {
    guard let renderer else { return }
    guard let playoutSync else {
      for frame in frames { render(Self.videoFrame(frame), to: renderer) }
      return
    }
    let now = playoutSync.clock.now
    for frame in frames { renderQueue.push(frame, decodedAt: now) }
    releaseDueFrames()
  }

  /// Renders the held frames that are due and schedules the next release (a job on `queue`,
  /// counted in `queuedJobs` so the loop leaves the track to the queue until it ran). On `queue`,
  /// or on the loop while nothing is queued.
  func releaseDueFrames() {
    guard let renderer, let playoutSync, !isStopped else { return }
    let extraDelay = playoutSync.videoExtraDelay
    let now = playoutSync.clock.now
    // One at a time: no array of the due frames per release. A frame left in the queue when
    // the renderer stops the track is never rendered (nothing releases after `stop`).
    while let release = renderQueue.releaseNext(now: now, extraDelay: extraDelay) {
      // The renderer may have stopped the track (closed its connection) at the previous one.
      guard !isStopped else { return }
      render(Self.videoFrame(release.frame), to: renderer)
      playoutSync.videoRendered(rtpTimestamp: release.frame.rtpTimestamp, heldFor: release.heldFor)
    }
    guard !isStopped, !releaseScheduled, let next = renderQueue.nextDeadline(extraDelay: extraDelay)
    else {
      return
    }
    releaseScheduled = true
    let wait = max(next - now, .milliseconds(1))
    let nanoseconds =
      Int(wait.components.seconds) * 1_000_000_000
      + Int(wait.components.attoseconds / 1_000_000_000)
    queuedJobs.add(1, ordering: .relaxed)
    queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [weak self] in
      guard let self else { return }
      self.releaseScheduled = false
      self.releaseDueFrames()
      self.queuedJobs.subtract(1, ordering: .releasing)
    }
  }

  static func videoFrame(_ frame: VideoDecodePipeline<VideoFrame>.Frame) -> VideoFrame {
    var picture = frame.picture
    picture.timestampNs = Int64(frame.rtpTimestamp) * 100_000 / 9
    return picture
  }
}

extension AudioReceiveTrack {
  /// Passes pulled frames through the sync delay line and reports the played one. On the
  /// connection's event loop.
  func synchronized(_ frames: [PCMAudioFrame]) -> [PCMAudioFrame] {
    guard let playoutSync, !frames.isEmpty else { return frames }
    let output = delayLine.process(frames, target: syncTarget)
    syncTarget = playoutSync.audioPlayed(output, appliedExtraDelay: delayLine.delay)
    return output.frames
  }
}

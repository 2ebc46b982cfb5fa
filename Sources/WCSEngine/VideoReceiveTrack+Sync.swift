import Dispatch
import Foundation
import WCSCodecs
import WCSEventLoop
import WCSMediaSeam
import WCSProtocols

/// Lip sync in the decode tracks: video frames wait in a `VideoRenderQueue` for the video's extra
/// delay, audio goes through an `AudioDelayLine` for the audio's; both report what they played
/// to the connection's `PlayoutSync`. Without a `PlayoutSync` frames pass straight through.
extension VideoReceiveTrack {
  /// Renders decoded `frames`, now or after the sync delay, moving them out (`frames` is
  /// empty after). On the track's placement.
  func present(_ frames: inout [VideoDecodePipeline<VideoFrame>.Frame]) {
    // Taken from the end, in decode order, each handed on straight from `removeLast`: moved,
    // not copied (a copy, as binding an optional makes, retains and releases the three
    // planes), and no `removeAll`.
    if frames.count > 1 { frames.reverse() }
    guard let renderer else {
      while !frames.isEmpty { frames.removeLast() }
      return
    }
    guard playoutSync != nil else {
      while !frames.isEmpty { render(frames.removeLast(), to: renderer) }
      return
    }
    let now = MediaInstant.now()
    while !frames.isEmpty { renderQueue.push(frames.removeLast(), decodedAt: now) }
    releaseDueFrames()
  }

  /// Renders the held frames that are due and schedules the next release. On the track's
  /// placement.
  ///
  /// With a loop, the next release is a loop timer, so it rides on the loop's wake-ups: on a
  /// `.loop` placement it releases there, on `.queue` it hands the release to `queue` (one
  /// worker wake-up, as a decode). Without a loop it is a job on `queue` after the wait.
  func releaseDueFrames() {
    guard let renderer, let playoutSync, !isStopped else { return }
    let extraDelay = playoutSync.videoExtraDelay
    let now = MediaInstant.now()
    // One at a time: no array of the due frames per release, and each frame moved from the
    // queue into `render` (`releaseNext`'s optional would be copied out of). A frame left in
    // the queue when the renderer stops the track is never rendered (nothing releases after
    // `stop`).
    while renderQueue.hasDue(at: now, extraDelay: extraDelay) {
      // The renderer may have stopped the track (closed its connection) at the previous one.
      guard !isStopped else { return }
      var heldFor = MediaDuration.zero
      let rtpTimestamp = render(renderQueue.takeOldest(at: now, heldFor: &heldFor), to: renderer)
      playoutSync.videoRendered(
        rtpTimestamp: rtpTimestamp, heldFor: heldFor, at: MediaInstant.now())
    }
    guard !isStopped, !releaseScheduled, let next = renderQueue.nextDeadline(extraDelay: extraDelay)
    else {
      return
    }
    releaseScheduled = true
    let wait = max(next - now, .milliseconds(1))
    guard let loop else {
      queue.asyncAfter(deadline: .now() + .nanoseconds(Int(wait.nanoseconds))) { [weak self] in
        self?.release()
      }
      return
    }
    let deadline = now + wait
    if case .loop = placement {
      loop.schedule(at: deadline, leeway: .zero) { [weak self] in self?.release() }
      return
    }
    loop.execute { [weak self] in
      loop.schedule(at: deadline, leeway: .zero) {
        guard let self else { return }
        self.queue.async { self.release() }
      }
    }
  }

  /// The scheduled release, on the track's placement.
  private func release() {
    releaseScheduled = false
    releaseDueFrames()
  }

  /// Renders `frame`'s picture with its capture time, then hands it back to the pipeline to
  /// decode a later picture into (when the renderer kept no copy of it). Returns the frame's
  /// RTP timestamp.
  @discardableResult
  func render(
    _ frame: consuming VideoDecodePipeline<VideoFrame>.Frame, to renderer: any VideoRenderer
  ) -> UInt32 {
    let rtpTimestamp = frame.rtpTimestamp
    frame.picture.timestampNs = Int64(rtpTimestamp) * 100_000 / 9
    render(frame.picture, to: renderer)
    // Swapped out rather than read out of the frame (a copy of the planes, then the frame's
    // destroyed): the pipeline gets the only reference.
    var picture = VideoFrame(
      width: 0, height: 0, dataY: Data(), dataU: Data(), dataV: Data(), strideY: 0, strideU: 0,
      strideV: 0, timestampNs: 0)
    swap(&picture, &frame.picture)
    receiver.recycle(picture)
    return rtpTimestamp
  }
}

extension AudioReceiveTrack.State {
  /// Passes pulled `frames` through the sync delay line and reports the played one to `sync`;
  /// `frames` becomes what to play (unchanged, not copied, while no delay is held or grown).
  mutating func synchronize(
    _ frames: inout [PCMAudioFrame], sync playoutSync: PlayoutSync, now: MediaInstant
  ) {
    guard !frames.isEmpty else { return }
    let played = delayLine.process(&frames, target: syncTarget)
    syncTarget = playoutSync.audioPlayed(
      timestamp: played, appliedExtraDelay: delayLine.delay, at: now)
  }
}

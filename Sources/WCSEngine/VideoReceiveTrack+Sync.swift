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
  /// empty after). On `queue`, or on the loop while nothing is queued (`VideoReceiveTrack`).
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

  /// Renders the held frames that are due and schedules the next release. On `queue`, or on the
  /// loop while nothing is queued.
  ///
  /// With a loop (`decodesVideoOnLoop`), the next release is a loop timer (`releaseOnLoop`),
  /// armed through `execute` when this runs on the queue. As a job on `queue` it would be
  /// counted in `queuedJobs`, and the loop leaves the track to the queue while it has jobs: each
  /// release scheduling the next, with a picture held for lip sync nearly all the time, the
  /// track would never come back to the loop once one picture went to the queue, and every
  /// picture would cross to a worker thread. Without a loop it is a job on `queue`, counted in
  /// `queuedJobs`.
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
    if let loop {
      let deadline = (now + wait).continuousInstant
      if loop.inEventLoop {
        loop.schedule(at: deadline) { [weak self] in self?.releaseOnLoop() }
      } else {
        loop.execute { [weak self] in
          loop.schedule(at: deadline) { self?.releaseOnLoop() }
        }
      }
      return
    }
    queuedJobs.add(1, ordering: .relaxed)
    queue.asyncAfter(deadline: .now() + .nanoseconds(Int(wait.nanoseconds))) { [weak self] in
      guard let self else { return }
      self.releaseScheduled = false
      self.releaseDueFrames()
      self.queuedJobs.subtract(1, ordering: .releasing)
    }
  }

  /// The release timer scheduled on the loop. The queue may have taken the track over since (a
  /// picture decoded there, over the loop's budget): then the release is a job on `queue`, after
  /// the ones in flight, which own the held frames until they finish. So is it when releases
  /// took longer than `inlineCostLimit` on average (the renderer is slow: a held picture is
  /// rendered here, not in `decodeAndPresent`, whose cost leaves it out) or the loop's
  /// `workBudget` has no room, as for a decode. On the loop.
  private func releaseOnLoop() {
    guard let loop else { return }
    // Only the loop adds jobs, so none can start between this load and the release; the
    // acquiring load sees what the last finished job left (it decrements releasing).
    if queuedJobs.load(ordering: .acquiring) == 0,
      averageReleaseCost.map({
        $0 <= inlineCostLimit && loop.workBudget.allows($0, at: loop.mediaNow())
      }) ?? true
    {
      releaseScheduled = false
      let (spent, end) = timedRelease()
      loop.workBudget.record(spent, endingAt: end)
      return
    }
    queuedJobs.add(1, ordering: .relaxed)
    queue.async {
      self.releaseScheduled = false
      self.timedRelease()
      self.queuedJobs.subtract(1, ordering: .releasing)
    }
  }

  /// `releaseDueFrames`, its wall time folded into `averageReleaseCost` (an eighth of each new
  /// cost, as `averageCost`). Returns the time it took and when it ended. One thread at a time
  /// (see the type's comment).
  @discardableResult
  private func timedRelease() -> (spent: MediaDuration, end: MediaInstant) {
    let start = MediaInstant.now()
    releaseDueFrames()
    let end = MediaInstant.now()
    let spent = end - start
    averageReleaseCost = Self.averaged(averageReleaseCost, with: spent)
    return (spent, end)
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

extension AudioReceiveTrack {
  /// Passes pulled frames through the sync delay line and reports the played one. On the
  /// connection's event loop.
  func synchronized(_ frames: [PCMAudioFrame], now: MediaInstant) -> [PCMAudioFrame] {
    var frames = frames
    synchronize(&frames, now: now)
    return frames
  }

  /// `synchronized(_:now:)` in place: `frames` becomes what to play (unchanged, not copied,
  /// while no delay is held or grown).
  func synchronize(_ frames: inout [PCMAudioFrame], now: MediaInstant) {
    guard let playoutSync, !frames.isEmpty else { return }
    let played = delayLine.process(&frames, target: syncTarget)
    syncTarget = playoutSync.audioPlayed(
      timestamp: played, appliedExtraDelay: delayLine.delay, at: now)
  }
}

import Dispatch
import Foundation
import Synchronization
import WCSCodecs
import WCSEventLoop
import WCSMediaSeam
import WCSProtocols

/// The decode side of one played video track: RTP packets released by the receive stream's
/// jitter buffer → VP8 frame assembly and decoding (`VideoDecodePipeline`) → the stream's renderer.
///
/// Runs on its own serial queue, or on the connection's event loop when that is cheaper: a
/// hand-off to the queue costs the loop a wake-up of the worker and the worker its own, more than
/// the SDK's own work on a picture (docs/performance.md). So a picture decodes on the loop when
/// nothing of this track is queued, its pictures took at most `inlineCostLimit` (4 ms) on average, and
/// the loop's `workBudget` has room; otherwise on the queue, so a slow decode never holds the
/// packets and timers of other streams.
final class VideoReceiveTrack: @unchecked Sendable {
  // @unchecked Sendable: `receiver`, `h264` (set before the first packet), `averageCost` (and the A/V sync `renderQueue`,
  // `releaseScheduled`, `averageReleaseCost`) are used by one thread at a time: by jobs on `queue`, or on the loop
  // (inline decodes, the lip-sync release timer) only while `queuedJobs` is 0 — with a loop,
  // the loop is the only thread that queues jobs, and a job decrements the count (releasing)
  // after its last access, which the loop's acquiring load sees. Without a loop only the queue
  // uses them. `statistics` and `renderGate` sit behind mutexes.

  /// Pictures whose decoding and rendering took longer than this on average are never decoded
  /// on the loop (a 640x480 VP8 picture takes ≈ 1.5 ms here, a 1280x720 one ≈ 4 ms).
  static let defaultInlineCostLimit: Duration = .milliseconds(4)

  let queue = DispatchQueue(label: "WCSMedia.VideoReceiveTrack", qos: .userInitiated)
  let receiver: VideoDecodePipeline<VideoFrame>
  /// The H.264 pipeline used instead of `receiver` once the answer chose H.264 (`useH264`).
  private var h264: H264DecodePipeline?
  let renderer: (any VideoRenderer)?
  private let onKeyFrameNeeded: @Sendable () -> Void
  private let stats = Mutex(VideoDecodePipelineStatistics())
  /// Whether the track was stopped, and whether a `render` call is in progress: each picture
  /// is handed over only while not stopped, checked under the same lock `stop` sets it with.
  let renderGate = Mutex(RenderGate())
  /// The loop `handle` is called on, when pictures may be decoded on it.
  let loop: EventLoop?
  let inlineCostLimit: MediaDuration
  /// Jobs on `queue` not finished yet (decodes, and the lip-sync hold's next release).
  let queuedJobs = Atomic<Int>(0)
  /// Moving average of the wall time one `decodeAndPresent` took (nil before the first).
  private var averageCost: MediaDuration?
  /// Pictures decoded on the loop.
  private let decodedOnLoop = Atomic<Int>(0)
  /// The pipeline's output, kept between calls (taken out for the call and emptied), so a
  /// call makes no new array of frames.
  private var output = VideoDecodePipeline<VideoFrame>.Output()
  // A/V sync (VideoReceiveTrack+Sync.swift).
  let playoutSync: PlayoutSync?
  var renderQueue = VideoRenderQueue<VideoDecodePipeline<VideoFrame>.Frame>()
  var releaseScheduled = false
  /// Moving average of the wall time one lip-sync release (`releaseDueFrames` from its timer,
  /// mostly a held picture's rendering) took (nil before the first).
  var averageReleaseCost: MediaDuration?

  /// - Parameters:
  ///   - loop: the loop `handle` is called on, when pictures may be decoded on it (nil: always
  ///     on the track's queue).
  ///   - inlineCostLimit: the average cost per picture above which it never is.
  ///   - onKeyFrameNeeded: called (on the queue or the loop) when the picture is lost; the
  ///     owner asks the sender for a key frame (PLI).
  init(
    renderer: (any VideoRenderer)?, playoutSync: PlayoutSync? = nil, loop: EventLoop? = nil,
    inlineCostLimit: Duration = defaultInlineCostLimit,
    onKeyFrameNeeded: @escaping @Sendable () -> Void
  ) throws(VP8Error) {
    // Straight into the renderer's frame type: one copy out of libvpx per picture, into the
    // planes of the last picture rendered (handed back by `recycle`) when nothing kept it.
    receiver = try VideoDecodePipeline(decodeReusing: { decoder, data, spare throws(VP8Error) in
      try decoder.decodeVideoFrame(data, reusing: &spare)
    })
    self.renderer = renderer
    self.playoutSync = playoutSync
    self.loop = loop
    self.inlineCostLimit = MediaDuration(inlineCostLimit)
    self.onKeyFrameNeeded = onKeyFrameNeeded
  }

  /// Decodes H.264 (RFC 6184) instead of VP8: the answer chose it. Call before the first
  /// packet is handed over, on the loop given at `init` (any thread without one).
  /// - Throws: `H264Error.initialization` when libavcodec has no H.264 decoder.
  func useH264() throws(H264Error) {
    h264 = try H264DecodePipeline()
  }

  /// Decoder counters.
  var statistics: VideoDecodePipelineStatistics { stats.withLock { $0 } }

  /// How many pictures were decoded on the loop rather than the queue.
  var picturesDecodedOnLoop: Int { decodedOnLoop.load(ordering: .relaxed) }

  /// Stops rendering: pictures still queued for decoding are dropped and no `render` call
  /// begins once this returns. Returns once the decode queue is idle, unless a `render` call is
  /// in progress: that one may be what stops the track (a renderer closing its connection,
  /// inline on the loop or from the queue while it waits for the loop), and waiting for it
  /// would deadlock. On the loop (where inline decoding runs), or from `render`.
  func stop() {
    let rendering = renderGate.withLock { gate in
      gate.stopped = true
      return gate.rendering
    }
    if !rendering { queue.sync {} }
  }

  /// Whether `stop` ran.
  var isStopped: Bool { renderGate.withLock { $0.stopped } }

  /// Hands `frame` to `renderer` unless the track was stopped (before this picture or by the
  /// renderer during the previous one). One thread at a time (see the type's comment).
  func render(_ frame: VideoFrame, to renderer: any VideoRenderer) {
    let open = renderGate.withLock { gate in
      gate.rendering = !gate.stopped
      return gate.rendering
    }
    guard open else { return }
    renderer.render(frame)
    renderGate.withLock { $0.rendering = false }
  }

  /// Decodes packets released at `now`: on the loop when it is cheaper and allowed (see the
  /// type's comment), else queued. Call on the loop given at `init` (any thread without one).
  func handle(_ packets: [ReceivedRTPPacket], now: MediaInstant) {
    guard !packets.isEmpty else { return }
    if let loop, mayDecodeInline(on: loop, now: now) {
      if let work = decodeAndPresent(packets, now: now) {
        loop.workBudget.record(work.spent, endingAt: work.end)
      }
      decodedOnLoop.add(1, ordering: .relaxed)
      return
    }
    queuedJobs.add(1, ordering: .relaxed)
    queue.async {
      _ = self.decodeAndPresent(packets, now: now)
      self.queuedJobs.subtract(1, ordering: .releasing)
    }
  }

  /// A new source (SSRC) took over the played stream: its packets are numbered afresh, so the
  /// assembler starts over before the first of them (`VideoDecodePipeline.restartSource`), in
  /// order with the pictures handed over before — inline on the loop when nothing of the track
  /// is queued, else as a job on the queue. Call on the loop given at `init` (any thread
  /// without one), before handing over the new source's first packets.
  func sourceChanged() {
    if let loop, loop.inEventLoop, queuedJobs.load(ordering: .acquiring) == 0 {
      receiver.restartSource()
      h264?.restartSource()
      return
    }
    queuedJobs.add(1, ordering: .relaxed)
    queue.async {
      self.receiver.restartSource()
      self.h264?.restartSource()
      self.queuedJobs.subtract(1, ordering: .releasing)
    }
  }

  private func mayDecodeInline(on loop: EventLoop, now: MediaInstant) -> Bool {
    guard queuedJobs.load(ordering: .acquiring) == 0, let averageCost,
      averageCost <= inlineCostLimit, loop.inEventLoop
    else { return false }
    return loop.workBudget.allows(averageCost, at: now)
  }

  /// Assembles, decodes and renders; one thread at a time (see the type's comment). Returns
  /// the wall time it took and when it ended (nil when stopped: nothing ran).
  private func decodeAndPresent(_ packets: [ReceivedRTPPacket], now: MediaInstant)
    -> (spent: MediaDuration, end: MediaInstant)?
  {
    guard !isStopped else { return nil }
    let start = MediaInstant.now()
    var output = VideoDecodePipeline<VideoFrame>.Output()
    swap(&output, &self.output)
    if let h264 {
      h264.handle(packets, now: now, into: &output)
      stats.withLock { $0 = h264.statistics }
    } else {
      receiver.handle(packets, now: now, into: &output)
      stats.withLock { $0 = receiver.statistics }
    }
    if output.needsKeyFrame { onKeyFrameNeeded() }
    output.needsKeyFrame = false
    present(&output.frames)
    swap(&output, &self.output)
    let end = MediaInstant.now()
    let spent = end - start
    averageCost = Self.averaged(averageCost, with: spent)
    return (spent, end)
  }

  /// A moving average of costs, `average` moved an eighth of the way to `cost` (`cost` itself
  /// when there is none yet): a key frame (2–3 times a delta frame's) moves it little.
  static func averaged(_ average: MediaDuration?, with cost: MediaDuration) -> MediaDuration {
    average.map { $0 + (cost - $0) / 8 } ?? cost
  }
}

/// A video track's stop flag and whether its renderer is being called.
struct RenderGate {
  var stopped = false
  var rendering = false
}

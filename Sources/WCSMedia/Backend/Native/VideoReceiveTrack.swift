import Dispatch
import Foundation
import Synchronization

/// The decode side of one played video track: RTP packets released by the receive stream's
/// jitter buffer → VP8 frame assembly and decoding (`VideoReceiver`) → the stream's renderer.
/// Runs on its own serial queue, never on the event loop.
final class VideoReceiveTrack: @unchecked Sendable {
  // @unchecked Sendable: `receiver` (and the A/V sync `renderQueue`, `releaseScheduled`) is used
  // on `queue` only; `statistics` sits behind a mutex.

  let queue = DispatchQueue(label: "WCSMedia.VideoReceiveTrack", qos: .userInitiated)
  private let receiver: VideoDecodePipeline<VideoFrame>
  let renderer: (any VideoRenderer)?
  private let onKeyFrameNeeded: @Sendable () -> Void
  private let stats = Mutex(VideoReceiver.Statistics())
  let stopped = Mutex(false)
  // A/V sync (VideoReceiveTrack+Sync.swift).
  let playoutSync: PlayoutSync?
  var renderQueue = VideoRenderQueue<VideoDecodePipeline<VideoFrame>.Frame>()
  var releaseScheduled = false

  /// - Parameter onKeyFrameNeeded: called (on the queue) when the picture is lost; the owner
  ///   asks the sender for a key frame (PLI).
  init(
    renderer: (any VideoRenderer)?, playoutSync: PlayoutSync? = nil,
    onKeyFrameNeeded: @escaping @Sendable () -> Void
  ) throws(VP8Error) {
    // Straight into the renderer's frame type: one copy out of libvpx per picture.
    receiver = try VideoDecodePipeline { decoder, data throws(VP8Error) in
      try decoder.decodeVideoFrame(data)
    }
    self.renderer = renderer
    self.playoutSync = playoutSync
    self.onKeyFrameNeeded = onKeyFrameNeeded
  }

  /// Decoder counters.
  var statistics: VideoReceiver.Statistics { stats.withLock { $0 } }

  /// Stops rendering: pictures still queued for decoding are dropped; returns once the
  /// decode queue is idle, so nothing reaches the renderer afterwards. Not on `queue`.
  func stop() {
    stopped.withLock { $0 = true }
    queue.sync {}
  }

  /// Queues packets released at `now` for decoding. Callable from any thread.
  func handle(_ packets: [ReceivedRTPPacket], now: ContinuousClock.Instant) {
    guard !packets.isEmpty else { return }
    queue.async {
      guard !self.stopped.withLock({ $0 }) else { return }
      let output = self.receiver.handle(packets, now: now)
      self.stats.withLock { $0 = self.receiver.statistics }
      if output.needsKeyFrame { self.onKeyFrameNeeded() }
      self.present(output.frames)
    }
  }
}

/// Where a played stream's decoded audio goes: 20 ms blocks of 48 kHz PCM, on the track's
/// decode queue, in playout order.
public protocol PlayoutAudioSink: AnyObject, Sendable {
  /// Takes one block (960 samples per channel, interleaved).
  func play(_ frame: AudioFrame)
}

/// A `PlayoutAudioSink` that calls a closure.
public final class PlayoutAudioCallbackSink: PlayoutAudioSink {
  private let handler: @Sendable (AudioFrame) -> Void

  /// Calls `handler` with every block.
  public init(_ handler: @escaping @Sendable (AudioFrame) -> Void) { self.handler = handler }

  /// Hands `frame` to the closure.
  public func play(_ frame: AudioFrame) { handler(frame) }
}

/// The decode side of one played audio track: packets → Opus decode with FEC/PLC and 20 ms
/// playout (`AudioReceiver`) → the `PlayoutAudioSink`s. Runs on its own serial queue.
///
/// The owner's clock drives playout: packets wait in an inbox (no hop per packet) and each
/// `playDue()` runs one turn on the queue that takes them and plays every frame due. The owner
/// calls it at `nextTurn(after:)`, which follows the receiver's 20 ms frame schedule, so a
/// frame plays when it is due and the queue wakes once per frame (a free-running 10 ms tick
/// on its own timer woke it and Dispatch's timer thread 100 times a second, and every packet
/// woke it once more).
final class AudioReceiveTrack: @unchecked Sendable {
  // @unchecked Sendable: `receiver` (and the A/V sync `delayLine`, `syncTarget`) is used on
  // `queue` only; `stats`, `inbox`, `published` and `stopped` sit behind mutexes.

  let queue = DispatchQueue(label: "WCSMedia.AudioReceiveTrack", qos: .userInitiated)
  private let receiver: AudioReceiver
  private let sinks: @Sendable () -> [any PlayoutAudioSink]
  private let stats = Mutex(AudioReceiver.Statistics())
  /// Packets handed over since the last turn.
  private let inbox = Mutex<[ReceivedRTPPacket]>([])
  /// The receiver's next frame time after the last turn; nil while playout is stopped.
  private let published = Mutex<ContinuousClock.Instant?>(nil)
  private let stopped = Mutex(true)
  private let key = DispatchSpecificKey<Int>()
  private let clock = ContinuousClock()
  // A/V sync (VideoReceiveTrack+Sync.swift).
  let playoutSync: PlayoutSync?
  var delayLine = AudioDelayLine()
  var syncTarget: Duration = .zero

  /// One Opus frame (the receiver plays 20 ms frames).
  static let frameInterval: Duration = .milliseconds(20)
  /// Packets the inbox holds at most (10 s of 20 ms frames); older ones are dropped, as they
  /// would be late anyway.
  static let inboxLimit = 500

  /// - Parameter sinks: read for every turn, so muting or replacing the process sink or the
  ///   sound output applies at once; empty drops the blocks.
  init(
    channels: Int, playoutSync: PlayoutSync? = nil,
    sinks: @escaping @Sendable () -> [any PlayoutAudioSink]
  ) throws(OpusError) {
    receiver = try AudioReceiver(channels: channels)
    self.playoutSync = playoutSync
    self.sinks = sinks
    queue.setSpecific(key: key, value: 1)
  }

  /// Decoder counters.
  var statistics: AudioReceiver.Statistics { stats.withLock { $0 } }

  /// Starts playout: later turns play.
  func start() { stopped.withLock { $0 = false } }

  /// Stops playout; returns once a turn already running finished (unless called on the queue).
  func stop() {
    stopped.withLock { $0 = true }
    if DispatchQueue.getSpecific(key: key) == nil { queue.sync {} }
  }

  /// Hands packets over for the next turn. Callable from any thread.
  func handle(_ packets: [ReceivedRTPPacket]) {
    guard !packets.isEmpty else { return }
    inbox.withLock { inbox in
      inbox += packets
      if inbox.count > Self.inboxLimit { inbox.removeFirst(inbox.count - Self.inboxLimit) }
    }
  }

  /// Runs one turn on the queue: inserts the packets handed over and plays every frame due.
  /// Callable from any thread.
  func playDue() {
    queue.async { self.turn() }
  }

  /// When the next turn should run, seen at `now`: the receiver's next frame, or the first
  /// 20 ms slot of its schedule after `now` when that is past (the turn just started has not
  /// published yet); `now + 20 ms` while playout is stopped (to pick up the first packets).
  func nextTurn(after now: ContinuousClock.Instant) -> ContinuousClock.Instant {
    guard let due = published.withLock({ $0 }) else { return now + Self.frameInterval }
    guard due <= now else { return due }
    let slots = Int((now - due) / Self.frameInterval) + 1
    return due + Self.frameInterval * slots
  }

  private func turn() {
    guard !stopped.withLock({ $0 }) else { return }
    let packets = inbox.withLock { inbox -> [ReceivedRTPPacket] in
      defer { inbox.removeAll(keepingCapacity: true) }
      return inbox
    }
    for packet in packets { receiver.insert(packet) }
    let frames = synchronized(receiver.pull(now: clock.now))
    stats.withLock { $0 = receiver.statistics }
    published.withLock { $0 = receiver.nextDeadline }
    guard !frames.isEmpty else { return }
    let sinks = sinks()
    guard !sinks.isEmpty else { return }
    for frame in frames {
      let block = AudioFrame(
        sampleRate: PCMAudioFrame.sampleRate, channels: frame.channels, samples: frame.samples,
        timestampNs: Int64(frame.timestamp) * 1_000_000 / 48)
      for sink in sinks { sink.play(block) }
    }
  }
}

/// A `PlayoutAudioSink` writing a WAV file (48 kHz, 16-bit, the stream's channels); `close()`
/// finishes the header.
public final class WAVPlayoutSink: PlayoutAudioSink, @unchecked Sendable {
  // @unchecked Sendable: the writer is used under `lock` only.
  private let lock: Mutex<WAVWriter?>

  /// Creates the file at `url`; throws `MediaFileError` when it cannot be written.
  public init(url: URL, channels: Int = 1) throws(MediaFileError) {
    lock = Mutex(try WAVWriter(url: url, sampleRate: PCMAudioFrame.sampleRate, channels: channels))
  }

  /// Appends `frame`'s samples (blocks with another channel count are dropped).
  public func play(_ frame: AudioFrame) {
    lock.withLock { writer in
      guard let writer, writer.channels == frame.channels else { return }
      try? writer.write(samples: frame.samples)
    }
  }

  /// Finishes the file; later blocks are dropped. Throws `MediaFileError` on a write error.
  public func close() throws(MediaFileError) {
    let writer = lock.withLock { value -> WAVWriter? in
      defer { value = nil }
      return value
    }
    try writer?.close()
  }
}

import Synchronization
import WCSCodecs
import WCSDevices
import WCSMediaSeam
import WCSProtocols

/// The decode side of one played audio track: packets → Opus decode with FEC/PLC and 20 ms
/// playout (`AudioReceiver`) → the `PlayoutAudioSink`s, on the connection's event loop.
///
/// The owner inserts the packets its receive stream releases (`handle`) and runs a turn
/// (`playDue`) at `nextTurn(after:)`, which follows the receiver's 20 ms frame schedule; a turn
/// decodes and plays every frame due. It runs on the loop rather than on a queue of its own: a
/// turn's Opus decoding costs less than the thread wake-up a hop to a queue would need
/// (docs/performance.md, `PipelineBench idle-loop`), and the loop schedules turns with a leeway
/// so they share the wake-ups of the packets arriving every 20 ms.
final class AudioReceiveTrack: @unchecked Sendable {
  // @unchecked Sendable: everything but `stats` (behind a mutex) is used on the owner's event
  // loop only.

  private let receiver: AudioReceiver
  private let sinks: @Sendable () -> Sinks
  /// The frames of the running turn, kept between turns (taken out for the turn and emptied
  /// with its capacity kept) so a turn makes no new array.
  private var pulled: [PCMAudioFrame] = []
  private let stats = Mutex(AudioReceiver.Statistics())
  private var running = false
  // A/V sync (VideoReceiveTrack+Sync.swift).
  let playoutSync: PlayoutSync?
  var delayLine = AudioDelayLine()
  var syncTarget = MediaDuration.zero

  /// One Opus frame (the receiver plays 20 ms frames).
  static let frameInterval = AudioReceiver.frameDuration
  /// How early a turn may hand a frame to the sinks. With the owner's leeway of twice this, a
  /// turn runs anywhere from this much before a frame is due to this much after: a 20 ms
  /// window, so it always finds the wake-up of a packet arriving (every 20 ms) instead of
  /// waking the loop with a timer of its own; the frame's play-out instant moves by at most
  /// this much, and the lip sync sees the instant it really went.
  static let playoutAdvance = MediaDuration.milliseconds(10)

  /// The sinks a turn plays to, in order: the process sink (or the app's) and the sound
  /// output. Two optionals rather than an array: no array made for every turn.
  struct Sinks {
    var first: (any PlayoutAudioSink)?
    var second: (any PlayoutAudioSink)?
  }

  /// - Parameter sinks: read for every turn, so muting or replacing the process sink or the
  ///   sound output applies at once; none drops the blocks.
  init(
    channels: Int, playoutSync: PlayoutSync? = nil,
    sinks: @escaping @Sendable () -> Sinks
  ) throws(OpusError) {
    receiver = try AudioReceiver(channels: channels)
    self.playoutSync = playoutSync
    self.sinks = sinks
  }

  /// Decoder counters. Callable from any thread.
  var statistics: AudioReceiver.Statistics { stats.withLock { $0 } }

  /// Arrival-to-playout delay now (the receiver's fixed playout delay plus the lip-sync delay
  /// line) and its target (with the delay the sync asks for). On the loop.
  var playoutDelay: (current: MediaDuration, target: MediaDuration) {
    let base = MediaDuration(receiver.playoutDelay)
    return (base + delayLine.delay, base + (playoutSync == nil ? .zero : syncTarget))
  }

  /// Starts playout: later turns play. On the loop.
  func start() { running = true }

  /// Stops playout: no block reaches a sink afterwards, not even from the turn that is
  /// running (a sink may stop or close the connection from `play`). On the loop.
  func stop() { running = false }

  /// Whether playout runs (started and not stopped). On the loop.
  var isRunning: Bool { running }

  /// Takes packets released by the receive stream. On the loop.
  func handle(_ packets: [ReceivedRTPPacket]) {
    receiver.insert(contentsOf: packets)
  }

  /// When the next turn may run, seen at `now`: `playoutAdvance` before the receiver's next
  /// frame, or the first 20 ms slot of its schedule after `now` when that is past; `now + 20 ms`
  /// while playout has not begun (to pick up the first packets).
  func nextTurn(after now: MediaInstant) -> MediaInstant {
    Self.nextTurn(frameDue: receiver.nextDeadline, after: now)
  }

  /// `nextTurn(after:)` for a receiver whose next frame is due at `frameDue` (nil: playout has
  /// not begun).
  static func nextTurn(frameDue: MediaInstant?, after now: MediaInstant) -> MediaInstant {
    guard let frameDue else { return now + Self.frameInterval }
    let due = frameDue - Self.playoutAdvance
    guard due <= now else { return due }
    let slots = (now - due) / Self.frameInterval + 1
    return due + Self.frameInterval * slots
  }

  /// Plays every frame due within `playoutAdvance` from `now`. On the loop.
  func playDue(now: MediaInstant) {
    guard running else { return }
    // Taken out of the property for the turn: one access, and the array stays unique for the
    // next turn to empty in place.
    var due: [PCMAudioFrame] = []
    swap(&due, &pulled)
    // Last turn's frames (usually one), from the end: no shift, and none of the generic
    // `replaceSubrange` that `removeAll(keepingCapacity:)` goes through.
    while due.popLast() != nil {}
    receiver.pull(now: now + Self.playoutAdvance, into: &due)
    synchronize(&due, now: now)
    let frames = due
    pulled = due
    stats.withLock { $0 = receiver.statistics }
    guard !frames.isEmpty else { return }
    let sinks = sinks()
    // No sink (none set, or muted): no block to make.
    guard sinks.first != nil || sinks.second != nil else { return }
    for frame in frames {
      let block = AudioFrame(
        sampleRate: PCMAudioFrame.sampleRate, channels: frame.channels, samples: frame.samples,
        timestampNs: Int64(frame.timestamp) * 1_000_000 / 48)
      // `play` runs on the loop, so a sink may have stopped playout (closed the connection).
      if let sink = sinks.first {
        guard running else { return }
        sink.play(block)
      }
      if let sink = sinks.second {
        guard running else { return }
        sink.play(block)
      }
    }
  }
}

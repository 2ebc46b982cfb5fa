import Synchronization
import WCSCodecs
import WCSDevices
import WCSEventLoop
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
final class AudioReceiveTrack: Sendable {
  /// What a turn works on, used on the owner's loop only (checked: `LoopBoundBox`).
  struct State {
    let receiver: AudioReceiver
    /// The frames of the running turn, kept between turns (taken out for the turn and emptied
    /// with its capacity kept) so a turn makes no new array.
    var pulled: [PCMAudioFrame] = []
    var running = false
    // A/V sync (VideoReceiveTrack+Sync.swift).
    var delayLine = AudioDelayLine()
    var syncTarget = MediaDuration.zero
  }

  let state: LoopBoundBox<State>
  private let sinks: @Sendable () -> Sinks
  private let stats = Mutex(AudioReceiver.Statistics())
  let playoutSync: PlayoutSync?

  /// One Opus frame (the receiver plays 20 ms frames).
  static let frameInterval = AudioReceiver.frameDuration
  /// How early a turn may hand a frame to the sinks (`ReceiveTuning.audioPlayoutAdvance`, there
  /// with its reason); the frame's play-out instant moves by at most this much, and the lip
  /// sync sees the instant it really went.
  let playoutAdvance: MediaDuration

  /// The sinks a turn plays to, in order: the process sink (or the app's) and the sound
  /// output. Two optionals rather than an array: no array made for every turn.
  struct Sinks {
    var first: (any PlayoutAudioSink)?
    var second: (any PlayoutAudioSink)?
  }

  /// - Parameters:
  ///   - loop: the owner's loop, the only one that may use the track (but `statistics`).
  ///   - playoutAdvance: `ReceiveTuning.audioPlayoutAdvance`.
  ///   - sinks: read for every turn, so muting or replacing the process sink or the sound
  ///     output applies at once; none drops the blocks.
  init(
    channels: Int, loop: EventLoop, playoutAdvance: MediaDuration,
    playoutSync: PlayoutSync? = nil, sinks: @escaping @Sendable () -> Sinks
  ) throws(OpusError) {
    state = LoopBoundBox(State(receiver: try AudioReceiver(channels: channels)), loop: loop)
    self.playoutAdvance = playoutAdvance
    self.playoutSync = playoutSync
    self.sinks = sinks
  }

  /// Decoder counters. Callable from any thread.
  var statistics: AudioReceiver.Statistics { stats.withLock { $0 } }

  /// Arrival-to-playout delay now (the receiver's fixed playout delay plus the lip-sync delay
  /// line) and its target (with the delay the sync asks for). On the loop.
  var playoutDelay: (current: MediaDuration, target: MediaDuration) {
    let state = state.value
    let base = MediaDuration(state.receiver.playoutDelay)
    return (
      base + state.delayLine.delay, base + (playoutSync == nil ? .zero : state.syncTarget)
    )
  }

  /// Starts playout: later turns play. On the loop.
  func start() { state.value.running = true }

  /// Stops playout: no block reaches a sink afterwards, not even from the turn that is
  /// running (a sink may stop or close the connection from `play`). On the loop.
  func stop() { state.value.running = false }

  /// Whether playout runs (started and not stopped). On the loop.
  var isRunning: Bool { state.value.running }

  /// Takes packets released by the receive stream. On the loop.
  func handle(_ packets: [ReceivedRTPPacket]) {
    state.value.receiver.insert(contentsOf: packets)
  }

  /// When the next turn may run, seen at `now`: `playoutAdvance` before the receiver's next
  /// frame, or the first 20 ms slot of its schedule after `now` when that is past; `now + 20 ms`
  /// while playout has not begun (to pick up the first packets).
  func nextTurn(after now: MediaInstant) -> MediaInstant {
    Self.nextTurn(
      frameDue: state.value.receiver.nextDeadline, after: now, advance: playoutAdvance)
  }

  /// `nextTurn(after:)` for a receiver whose next frame is due at `frameDue` (nil: playout has
  /// not begun), turns running `advance` early.
  static func nextTurn(
    frameDue: MediaInstant?, after now: MediaInstant, advance: MediaDuration
  ) -> MediaInstant {
    guard let frameDue else { return now + Self.frameInterval }
    let due = frameDue - advance
    guard due <= now else { return due }
    let slots = (now - due) / Self.frameInterval + 1
    return due + Self.frameInterval * slots
  }

  /// Plays every frame due within `playoutAdvance` from `now`. On the loop.
  func playDue(now: MediaInstant) {
    guard let frames = pullDue(now: now) else { return }
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
        guard isRunning else { return }
        sink.play(block)
      }
      if let sink = sinks.second {
        guard isRunning else { return }
        sink.play(block)
      }
    }
  }

  /// Decodes the frames due within `playoutAdvance` from `now` and passes them through the
  /// lip sync; nil when playout is stopped. One access to the state: the sinks, which may stop
  /// the track, are called after it.
  private func pullDue(now: MediaInstant) -> [PCMAudioFrame]? {
    let until = now + playoutAdvance
    let sync = playoutSync
    return state.value.pullDue(now: now, until: until, sync: sync, into: stats)
  }
}

extension AudioReceiveTrack.State {
  /// `AudioReceiveTrack.pullDue`: the receiver's frames due by `until`, synchronized, with the
  /// counters copied to `stats`.
  mutating func pullDue(
    now: MediaInstant, until: MediaInstant, sync: PlayoutSync?,
    into stats: borrowing Mutex<AudioReceiver.Statistics>
  ) -> [PCMAudioFrame]? {
    guard running else { return nil }
    // Taken out of the property for the turn: one access, and the array stays unique for the
    // next turn to empty in place.
    var due: [PCMAudioFrame] = []
    swap(&due, &pulled)
    // Last turn's frames (usually one), from the end: no shift, and none of the generic
    // `replaceSubrange` that `removeAll(keepingCapacity:)` goes through.
    while due.popLast() != nil {}
    receiver.pull(now: until, into: &due)
    if let sync { synchronize(&due, sync: sync, now: now) }
    let frames = due
    pulled = due
    let counters = receiver.statistics
    stats.withLock { $0 = counters }
    return frames
  }
}

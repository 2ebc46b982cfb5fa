import Dispatch
import Synchronization

/// Bounds of an `rtmpUrl` re-publication (issue 28).
struct RTMPPushLimits: Sendable, Equatable {
  /// Connect and write timeouts of the RTMP connection.
  var timeouts = RTMPPushTimeouts()
  /// RTP packets waiting for the push thread at most (about 4 s of 1 Mbit/s video with its
  /// audio); past it, packets are dropped and counted, the relay never waits.
  var maxQueuedPackets = 1024
  /// Consecutive failures (a refused or timed-out connect, a broken connection) before the push
  /// gives up; a connection that reached PUBLISHING starts the count again.
  var maxAttempts = 3
  /// Wait before the first retry; each further one waits twice as long.
  var retryDelay: Duration = .seconds(1)
  /// Longest time without a key frame in the pushed stream: past it the publisher is asked
  /// for one (a GOP of 2 s, as RTMP and HLS services recommend).
  var keyFrameInterval: Duration = .seconds(2)
}

/// The connect and write bounds (`RTMPOutput.Timeouts` without importing it here).
struct RTMPPushTimeouts: Sendable, Equatable {
  var connect: Duration = .seconds(5)
  var write: Duration = .seconds(3)
}

/// One RTP packet for the push thread: its fields and when the relay received it.
struct RTMPPushPacket: Sendable {
  enum Kind: Sendable { case video, audio }
  var kind: Kind
  var sequenceNumber: UInt16
  var timestamp: UInt32
  var marker: Bool
  var payload: [UInt8]
  /// Receive time on the relay loop's clock, nanoseconds.
  var arrival: Int64
}

/// The hand-off between the relay loop (producer) and one push thread (consumer): a bounded
/// FIFO under a mutex and a semaphore to wake the thread. `push` never blocks.
final class RTMPPushQueue: Sendable {
  private struct State {
    var packets: [RTMPPushPacket] = []
    var dropped = 0
    var stopped = false
  }

  let capacity: Int
  private let state = Mutex(State())
  private let wakeUp = DispatchSemaphore(value: 0)

  init(capacity: Int) { self.capacity = max(1, capacity) }

  /// Queues `packet`; false (and counted) when the queue is full or stopped.
  @discardableResult
  func push(_ packet: RTMPPushPacket) -> Bool {
    let (queued, wasEmpty) = state.withLock { state -> (Bool, Bool) in
      guard !state.stopped, state.packets.count < capacity else {
        state.dropped += 1
        return (false, false)
      }
      state.packets.append(packet)
      return (true, state.packets.count == 1)
    }
    // One wake-up per batch: the thread takes everything queued when it runs.
    if wasEmpty { wakeUp.signal() }
    return queued
  }

  /// Asks the thread to finish; queued packets are still handed out.
  func stop() {
    state.withLock { $0.stopped = true }
    wakeUp.signal()
  }

  var isStopped: Bool { state.withLock { $0.stopped } }

  /// Waits up to `timeout` for packets and takes all of them with the count dropped since the
  /// last call; empty when the wait ended without any.
  func take(timeout: Duration) -> (packets: [RTMPPushPacket], dropped: Int) {
    let taken = takeNow()
    if !taken.packets.isEmpty || taken.dropped > 0 || isStopped { return taken }
    let (seconds, attoseconds) = timeout.components
    _ = wakeUp.wait(
      timeout: .now()
        + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
    return takeNow()
  }

  private func takeNow() -> (packets: [RTMPPushPacket], dropped: Int) {
    state.withLock { state in
      defer {
        state.packets.removeAll(keepingCapacity: true)
        state.dropped = 0
      }
      return (state.packets, state.dropped)
    }
  }
}

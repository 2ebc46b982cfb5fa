import Foundation
import Synchronization

/// The example's status output: every line is printed at once with the seconds since the
/// example started (`[  1.234] session ESTABLISHED`), and named events ("ESTABLISHED",
/// "publish PUBLISHING", "first frame") are timed so the main thread can wait for them and the
/// summary can report them.
///
/// Thread-safe: callbacks of the SDK call it on their own queues.
public final class ExampleLog: Sendable {
  private struct State {
    var lines: [String] = []
    var events: [String: Double] = [:]
    var details: [String: String] = [:]
  }

  private let start = ContinuousClock.now
  private let state = Mutex(State())

  /// Starts the clock.
  public init() {}

  /// Seconds since the log was created.
  public var elapsed: Double {
    let duration = ContinuousClock.now - start
    return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
  }

  /// Prints `text` with the elapsed time.
  public func line(_ text: String) {
    let stamped = "[" + Self.format(elapsed, width: 7) + "] " + text
    state.withLock { state in
      state.lines.append(stamped)
      FileHandle.standardOutput.write(Data((stamped + "\n").utf8))
    }
  }

  /// Every line printed so far, as printed (`[  1.234] text` for `line(_:)`).
  public var printedLines: [String] { state.withLock { $0.lines } }

  /// Prints `text` as is (summaries, listings).
  public func plain(_ text: String) {
    state.withLock { state in
      state.lines.append(text)
      FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
  }

  /// Records that `event` happened now (only its first time is kept).
  public func mark(_ event: String) {
    let now = elapsed
    state.withLock { state in
      if state.events[event] == nil { state.events[event] = now }
    }
  }

  /// Records that `event` happened now, with the line that says why (`play stream1 FAILED:
  /// Stream not found`); only its first time and text are kept.
  public func mark(_ event: String, detail: String) {
    let now = elapsed
    state.withLock { state in
      if state.events[event] == nil {
        state.events[event] = now
        state.details[event] = detail
      }
    }
  }

  /// The text given with the first `event` (see `mark(_:detail:)`), `nil` if none.
  public func detail(of event: String) -> String? {
    state.withLock { $0.details[event] }
  }

  /// The first of `events` (in the given order) that has happened, `nil` if none has.
  public func happened(_ events: [String]) -> String? {
    state.withLock { state in events.first { state.events[$0] != nil } }
  }

  /// Seconds from the start to the first `event`, `nil` if it has not happened.
  public func time(of event: String) -> Double? {
    state.withLock { $0.events[event] }
  }

  /// Waits until one of `events` has happened; returns it, or `nil` after `timeout` seconds.
  public func wait(for events: [String], timeout: Double) -> String? {
    let deadline = elapsed + timeout
    while true {
      let happened = state.withLock { state in events.first { state.events[$0] != nil } }
      if let happened { return happened }
      if elapsed >= deadline { return nil }
      Thread.sleep(forTimeInterval: 0.005)
    }
  }

  /// Every line printed so far.
  public var lines: [String] { state.withLock { $0.lines } }

  /// `value` with three decimals, right-aligned to `width` characters.
  static func format(_ value: Double, width: Int) -> String {
    let text = String(format: "%.3f", value)
    return String(repeating: " ", count: max(0, width - text.count)) + text
  }
}

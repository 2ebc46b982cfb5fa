import FPWCSApi2Swift
import Foundation
import Synchronization

/// The `data` stream events a player received (a publisher's `sendData`, relayed by the server
/// as `notifyStreamEvent` type `data`, wcs-protocol.md §3.1, §4.6), as a program prints and
/// counts them.
public final class StreamDataEvents: Sendable {
  /// Payloads kept at most (the count goes on).
  public static let maxKept = 100

  private struct State {
    var count = 0
    var payloads: [String] = []
  }
  private let state = Mutex(State())

  /// Nothing received yet.
  public init() {}

  /// Takes one stream event: a `data` event is logged (`data event from NAME: {json}`),
  /// counted and kept; any other type is left to the caller. Returns whether it was data.
  @discardableResult
  public func receive(_ event: FPWCSApi2StreamEvent?, stream name: String, log: ExampleLog) -> Bool
  {
    guard let event,
      event.type == FPWCSApi2Model.streamEventType(toString: .fpwcsStreamEventTypeData)
    else { return false }
    let text = Self.json(event.payload ?? [:])
    state.withLock { state in
      state.count += 1
      if state.payloads.count < Self.maxKept { state.payloads.append(text) }
    }
    log.line("data event from \(name): \(text)")
    return true
  }

  /// Data events received.
  public var count: Int { state.withLock { $0.count } }

  /// The payloads received (the first `maxKept`), as compact JSON with sorted keys.
  public var payloads: [String] { state.withLock { $0.payloads } }

  /// Waits up to `timeout` seconds for `count` to reach `expected`; returns the count.
  public func wait(for expected: Int, timeout: Double) -> Int {
    let deadline = Date().addingTimeInterval(timeout)
    while count < expected, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
    return count
  }

  /// `object` as compact JSON with sorted keys (`{}` for what JSON cannot hold).
  public static func json(_ object: [String: Any]) -> String {
    guard JSONSerialization.isValidJSONObject(object),
      let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    else { return "{}" }
    return String(decoding: data, as: UTF8.self)
  }
}

/// The answer to `available` (wcs-protocol.md §3.1 `availableStream`, §4.7): whether a stream
/// name can be played now and the server's reason.
public struct StreamAvailability: Sendable, Equatable, CustomStringConvertible {
  /// `true` when the server would play the name now.
  public var available: Bool
  /// The server's text (`"Available"`, `"Stream not found"`), `nil` when it gave none.
  public var info: String?

  /// An answer.
  public init(available: Bool, info: String?) {
    self.available = available
    self.info = info
  }

  /// `"yes (Available)"`, `"no (Stream not found)"`.
  public var description: String {
    (available ? "yes" : "no") + (info.map { " (\($0))" } ?? "")
  }

  /// Asks `session` about `name` with a stream object of its own, as the iOS example does (a
  /// played stream's object cannot ask, WCS-3742), logs the answer (`available NAME: yes
  /// (Available)`) and passes it on (`nil` when the SDK refused to make the stream, logged).
  /// The object stays in `session.getStreams()`, in NEW: find played streams by their status
  /// or keep them, not by position.
  public static func ask(
    _ name: String, on session: FPWCSApi2Session, log: ExampleLog,
    then answered: @escaping (StreamAvailability?) -> Void
  ) {
    let options = FPWCSApi2StreamOptions()
    options.name = name
    do {
      let stream = try session.createStream(options)
      stream.available { available, info in
        let result = StreamAvailability(available: available, info: info)
        log.line("available \(name): \(result)")
        answered(result)
      }
    } catch {
      log.line("available \(name): \(error)")
      answered(nil)
    }
  }
}

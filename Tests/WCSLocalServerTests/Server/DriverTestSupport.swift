import Foundation
import Synchronization
import WCSLocalServer
import WCSTransport
import XCTest

/// Collects values from any thread; tests wait for a condition with a deadline.
final class Collector<Value: Sendable>: @unchecked Sendable {
  // @unchecked Sendable: `values` is only touched while holding `condition`.
  private let condition = NSCondition()
  private var values: [Value] = []

  func append(_ value: Value) {
    condition.lock()
    values.append(value)
    condition.broadcast()
    condition.unlock()
  }

  var all: [Value] {
    condition.lock()
    defer { condition.unlock() }
    return values
  }

  /// Waits until `predicate(all)` holds or `timeout` seconds passed; returns the values then.
  @discardableResult
  func wait(
    timeout: Double = 10, file: StaticString = #filePath, line: UInt = #line,
    until predicate: ([Value]) -> Bool
  ) -> [Value] {
    let deadline = Date().addingTimeInterval(timeout)
    condition.lock()
    defer { condition.unlock() }
    while !predicate(values) {
      if !condition.wait(until: deadline), !predicate(values) {
        XCTFail("timed out after \(timeout) s with \(values.count) values", file: file, line: line)
        break
      }
    }
    return values
  }
}

/// A media engine safe to inspect from the test thread (the server calls it on its queue).
/// Answers every offer with `FakeMediaEngine.answerSDP`; reports `connected` at once unless
/// `deferConnected`, in which case the test calls `connectLater(_:)`, which wakes the driver
/// through `LocalServerMediaEngineHooks`.
final class SharedFakeMediaEngine: LocalServerMediaEngineHooks, Sendable {
  private struct State {
    var requests: [LocalServerMediaRequest] = []
    var events: [LocalServerMediaEvent] = []
    var wakeUp: (@Sendable () -> Void)?
    var shutdownCalls = 0
  }
  private let state = Mutex(State())
  let deferConnected: Bool

  init(deferConnected: Bool = false) { self.deferConnected = deferConnected }

  var requests: [LocalServerMediaRequest] { state.withLock { $0.requests } }
  var shutdownCalls: Int { state.withLock { $0.shutdownCalls } }

  func perform(_ request: LocalServerMediaRequest) {
    state.withLock { state in
      state.requests.append(request)
      let id: String
      switch request {
      case .createPublisher(let publisher): id = publisher.mediaSessionId
      case .createPlayer(let player): id = player.mediaSessionId
      case .releaseMedia(let released, let recordName?):
        state.events.append(.recordingFinished(mediaSessionId: released, recordName: recordName))
        return
      case .releaseMedia, .requestKeyFrame, .snapshot: return
      }
      state.events.append(.answerReady(mediaSessionId: id, sdp: FakeMediaEngine.answerSDP))
      if !deferConnected {
        state.events.append(.connected(mediaSessionId: id, codecs: FakeMediaEngine.codecs))
      }
    }
  }

  func takeEvents() -> [LocalServerMediaEvent] {
    state.withLock { state in
      defer { state.events.removeAll() }
      return state.events
    }
  }

  func attach(wakeUp: @escaping @Sendable () -> Void) { state.withLock { $0.wakeUp = wakeUp } }

  func shutdown() { state.withLock { $0.shutdownCalls += 1 } }

  /// Reports `connected` for `id` from the test thread, as an engine's I/O thread would.
  func connectLater(_ id: String) {
    let wakeUp = state.withLock { state in
      state.events.append(.connected(mediaSessionId: id, codecs: FakeMediaEngine.codecs))
      return state.wakeUp
    }
    wakeUp?()
  }
}

/// One `WebSocketTransport` client and what it received, decoded.
final class TestClient: Sendable {
  let transport = WebSocketTransport()
  let events = Collector<SignalingEvent>()

  init(_ url: String, options: SignalingConnectOptions = .init(connectTimeout: 10)) {
    transport.connect(to: url, options: options) { [events] in events.append($0) }
  }

  /// Every text message decoded (frames that are not WCS messages are left out).
  var messages: [WCSMessage] {
    events.all.compactMap { event in
      guard case .text(let text) = event else { return nil }
      return try? WCSMessageCodec.decode(text)
    }
  }

  var closeEvent: SignalingEvent? { events.all.first { $0.isTerminal } }

  func send(_ name: String, _ argument: JSONValue = .null) {
    XCTAssertNoThrow(
      try transport.send(WCSMessageCodec.encode(WCSMessage(name: name, data: [argument]))).get())
  }

  func sendRaw(_ text: String) { XCTAssertNoThrow(try transport.send(text).get()) }

  /// Waits until some message satisfies `predicate` and returns it.
  @discardableResult
  func waitFor(
    timeout: Double = 10, file: StaticString = #filePath, line: UInt = #line,
    _ predicate: @escaping (WCSMessage) -> Bool
  ) -> WCSMessage? {
    events.wait(timeout: timeout, file: file, line: line) { events in
      events.contains { event in
        guard case .text(let text) = event, let message = try? WCSMessageCodec.decode(text)
        else { return false }
        return predicate(message)
      }
    }
    return messages.first(where: predicate)
  }

  /// Waits for a stream status of `mediaSessionId`.
  @discardableResult
  func waitForStatus(
    _ mediaSessionId: String, _ status: String, file: StaticString = #filePath, line: UInt = #line
  ) -> WCSMessage? {
    waitFor(file: file, line: line) {
      $0.name == "notifyStreamStatusEvent"
        && $0.object["mediaSessionId"] == .string(mediaSessionId)
        && $0.object["status"] == .string(status)
    }
  }

  /// Waits for `opened`, sends `connection` and waits for `getUserData` (ESTABLISHED).
  func establish(timeout: Double = 10, file: StaticString = #filePath, line: UInt = #line) {
    events.wait(timeout: timeout, file: file, line: line) {
      $0.contains { $0 == .opened || $0.isTerminal }
    }
    send("connection", ["appKey": "defaultApp", "mediaProviders": ["WebRTC"]])
    waitFor(timeout: timeout, file: file, line: line) { $0.name == "getUserData" }
  }

  func closeAndWait(file: StaticString = #filePath, line: UInt = #line) {
    transport.close()
    events.wait(file: file, line: line) { $0.contains { $0.isTerminal } }
    XCTAssertTrue(transport.waitUntilStopped(timeout: 10), file: file, line: line)
  }
}

extension SignalingEvent {
  var isTerminal: Bool {
    switch self {
    case .closed, .failed: return true
    default: return false
    }
  }
}

/// A fresh empty directory under the temporary directory.
func makeTemporaryDirectory(_ prefix: String) throws -> URL {
  let url = FileManager.default.temporaryDirectory
    .appendingPathComponent("\(prefix)-\(UUID().uuidString)")
  try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  return url
}

/// A configuration on free ports with `engine`, a temporary records directory and logs
/// collected in `logs`.
func testConfiguration(
  engine: any LocalServerMediaEngine, records: URL, logs: Collector<String>
) -> WCSLocalServer.Configuration {
  var configuration = WCSLocalServer.Configuration()
  configuration.wsPort = 0
  configuration.httpPort = 0
  configuration.recordsDirectory = records.path
  configuration.mediaEngine = engine
  configuration.logSink = { logs.append($0) }
  return configuration
}

/// `{mediaSessionId, name, published, ...}` as SDKs send with publishStream / playStream.
func streamArgument(_ mediaSessionId: String, name: String, published: Bool, record: Bool = false)
  -> JSONValue
{
  ServerHarness.streamObject(
    .string(mediaSessionId), name: name, published: published, record: record)
}

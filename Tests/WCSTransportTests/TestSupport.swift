import Foundation
import XCTest

@testable import WCSTransport

/// Collects values from any thread; tests wait for a condition with a deadline (no polling).
final class Recorder<Value: Sendable>: @unchecked Sendable {
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
      if !condition.wait(until: deadline) {
        if !predicate(values) {
          XCTFail(
            "timed out after \(timeout) s; have \(values.count) values", file: file, line: line)
        }
        break
      }
    }
    return values
  }
}

extension SignalingEvent {
  var isTerminal: Bool {
    switch self {
    case .closed, .failed: return true
    default: return false
    }
  }
  var text: String? {
    if case .text(let text) = self { return text }
    return nil
  }
}

extension WebSocketServer.Event {
  var connection: WebSocketServer.Connection {
    switch self {
    case .connected(let c), .text(let c, _), .closed(let c, _, _): return c
    }
  }
  var text: String? {
    if case .text(_, let text) = self { return text }
    return nil
  }
  var closeInfo: (code: Int, reason: String)? {
    if case .closed(_, let code, let reason) = self { return (code, reason) }
    return nil
  }
}

/// A started server that records its events; `echo` sends every text back.
func startServer(
  _ configuration: WebSocketServer.Configuration = .init(), echo: Bool = true
) throws -> (WebSocketServer, Recorder<WebSocketServer.Event>) {
  let recorder = Recorder<WebSocketServer.Event>()
  let server = WebSocketServer(configuration: configuration) { event in
    recorder.append(event)
    if echo, case .text(let connection, let text) = event { connection.send(text) }
  }
  try server.start()
  return (server, recorder)
}

/// Connects a client and returns it with its event recorder (not waiting for `opened`).
func connectClient(
  _ url: String, options: SignalingConnectOptions = .init(connectTimeout: 5)
) -> (WebSocketTransport, Recorder<SignalingEvent>) {
  let recorder = Recorder<SignalingEvent>()
  let transport = WebSocketTransport()
  transport.connect(to: url, options: options) { recorder.append($0) }
  return (transport, recorder)
}

/// Waits for the terminal event and the end of the service thread.
func closeAndWait(
  _ transport: WebSocketTransport, _ recorder: Recorder<SignalingEvent>,
  file: StaticString = #filePath, line: UInt = #line
) {
  transport.close()
  recorder.wait(file: file, line: line) { $0.contains { $0.isTerminal } }
  XCTAssertTrue(transport.waitUntilStopped(timeout: 10), file: file, line: line)
}

/// Waits for `opened` (or an early terminal event) and asserts the connection opened.
func waitOpened(
  _ recorder: Recorder<SignalingEvent>, file: StaticString = #filePath, line: UInt = #line
) {
  let events = recorder.wait(file: file, line: line) {
    $0.contains { $0 == .opened || $0.isTerminal }
  }
  XCTAssertEqual(events.first, .opened, file: file, line: line)
}

import Foundation
import Synchronization
import WCSTransport

/// One run: serves the page directory over HTTP and a WebSocket on 127.0.0.1, starts Chromium
/// at the page, routes page messages to the scenario, and builds the JSON summary once the page
/// has sent its result, Chromium has exited, or the timeout has passed.
final class InteropSession: Sendable {
  private struct State {
    var hello: JSONValue?
    var result: JSONValue?
    var logs: [JSONValue] = []
    var messagesFromPage = 0
  }

  let options: InteropOptions
  let scenario: any InteropScenario
  private let state = Mutex(State())
  private let resultArrived = DispatchSemaphore(value: 0)

  init(options: InteropOptions, scenario: any InteropScenario) {
    self.options = options
    self.scenario = scenario
  }

  /// Runs the page to its end and returns the summary (`ok` is the page's own verdict).
  func run() -> JSONValue {
    let started = Date()
    let server = WebSocketServer(
      configuration: WebSocketServer.Configuration(
        files: WebSocketServer.FileMount(mountPoint: "/", directory: options.pagesDirectory))
    ) { [self] event in handle(event) }
    do {
      try server.start()
    } catch {
      return failure("cannot start the WebSocket/HTTP server: \(error)", started: started)
    }
    defer { server.stop() }
    guard let httpPort = server.httpPort else {
      return failure("the HTTP file server did not start", started: started)
    }
    let pageParameters: [String: String]
    do {
      pageParameters = try scenario.prepare()
    } catch {
      return failure("scenario set-up failed: \(error)", started: started)
    }
    var query = URLComponents()
    query.queryItems =
      [
        URLQueryItem(name: "ws", value: "\(server.port)"),
        URLQueryItem(name: "scenario", value: options.scenario),
      ]
      + pageParameters.sorted { $0.key < $1.key }.map {
        URLQueryItem(name: $0.key, value: $0.value)
      }
    let url = "http://127.0.0.1:\(httpPort)/harness.html?\(query.percentEncodedQuery ?? "")"
    let profile = FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-chromium-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: profile) }
    let chromium: ChromiumProcess
    do {
      chromium = try ChromiumProcess(
        executable: options.chromiumPath,
        arguments: ChromiumProcess.arguments(url: url, userDataDirectory: profile.path),
        logPath: profile.path + ".log")
    } catch {
      return failure("\(error)", started: started)
    }
    defer { try? FileManager.default.removeItem(atPath: chromium.logPath) }

    let deadline = started.addingTimeInterval(options.timeout)
    var outcome = "result"
    while resultArrived.wait(timeout: .now() + .milliseconds(100)) == .timedOut {
      if chromium.hasExited {
        outcome = "chromium exited"
        break
      }
      if Date() > deadline {
        outcome = "timeout"
        break
      }
    }
    let runSeconds = Date().timeIntervalSince(started)
    chromium.terminate()
    server.stop()
    let collected = state.withLock { $0 }
    let pageOK = collected.result?["ok"]?.boolValue ?? false
    var summary: [String: JSONValue] = [
      "scenario": .string(options.scenario),
      "ok": .bool(pageOK),
      "outcome": .string(outcome),
      "page": collected.result ?? .null,
      "hello": collected.hello ?? .null,
      "logs": .array(collected.logs),
      "peer": scenario.finish(),
      "runSeconds": .number((runSeconds * 1000).rounded() / 1000),
      "totalSeconds": .number((Date().timeIntervalSince(started) * 1000).rounded() / 1000),
    ]
    if !pageOK {
      summary["chromiumLog"] = .array(chromium.logTail(40).map { .string($0) })
    }
    return .object(summary)
  }

  private func failure(_ reason: String, started: Date) -> JSONValue {
    .object([
      "scenario": .string(options.scenario), "ok": false, "outcome": "harness error",
      "error": .string(reason), "peer": scenario.finish(),
      "totalSeconds": .number(Date().timeIntervalSince(started)),
    ])
  }

  private func handle(_ event: WebSocketServer.Event) {
    guard case .text(let connection, let text) = event else { return }
    guard let message = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) else {
      state.withLock { $0.logs.append(.string("unparsable message from the page")) }
      return
    }
    let type = message["type"]?.stringValue
    state.withLock { $0.messagesFromPage += 1 }
    switch type {
    case "hello": state.withLock { $0.hello = message }
    case "log": state.withLock { $0.logs.append(message["text"] ?? .null) }
    case "result":
      state.withLock { $0.result = message }
      resultArrived.signal()
    default:
      scenario.handle(message) { reply in
        guard let data = try? JSONEncoder().encode(reply) else { return }
        connection.send(String(decoding: data, as: UTF8.self))
      }
    }
  }
}

import TestSupport
import WCSLocalServer
import WCSTransport
import XCTest

/// Drives a `WCSServerCore` like the real driver would, with `FakeMediaEngine` and a virtual
/// clock, and records what each connection received.
final class ServerHarness {
  let core: WCSServerCore
  let engine = FakeMediaEngine()
  var now: Int64 = 1_702_900_000_000
  private(set) var inbox: [WCSConnectionID: [WCSMessage]] = [:]
  private(set) var closes: [(WCSConnectionID, Int, String)] = []
  private(set) var logs: [String] = []
  /// Access checks asked for and not yet answered with `decide`.
  var checks: [WCSAccessCheck] = []
  /// What the core asked the SIP side of the gateway to do, in order.
  private(set) var sipCommands: [SIPGatewayCommand] = []

  init(configuration: WCSServerConfiguration = WCSServerConfiguration()) {
    core = WCSServerCore(configuration: configuration)
  }

  func run(_ actions: [WCSServerAction], file: StaticString = #filePath, line: UInt = #line) {
    for action in actions {
      switch action {
      case .send(let id, let text):
        do {
          inbox[id, default: []].append(try WCSMessageCodec.decode(text))
        } catch {
          XCTFail("server sent a frame that is not a WCS message: \(text)", file: file, line: line)
        }
      case .close(let id, let code, let reason): closes.append((id, code, reason))
      case .log(let line): logs.append(line)
      case .authorize(let check): checks.append(check)
      case .sip(let command): sipCommands.append(command)
      case .media(let request):
        engine.perform(request)
        for event in engine.takeEvents() { run(core.mediaEvent(event, now: now)) }
      }
    }
  }

  func open(_ id: WCSConnectionID, remote: String = "127.0.0.1:50000") {
    run(core.connectionOpened(id, remoteAddress: remote, now: now))
  }

  func receive(_ id: WCSConnectionID, _ text: String) {
    run(core.textReceived(id, text, now: now))
  }

  func receive(_ id: WCSConnectionID, _ name: String, _ argument: JSONValue) {
    receive(id, WCSMessageCodec.encode(WCSMessage(name: name, data: [argument])))
  }

  func close(_ id: WCSConnectionID) { run(core.connectionClosed(id, now: now)) }

  /// Answers the oldest open access check with `decision`; returns what it asked.
  @discardableResult
  func decide(_ decision: WCSAccessDecision) -> WCSAccessRequest? {
    guard !checks.isEmpty else { return nil }
    let check = checks.removeFirst()
    run(core.accessDecided(check.id, decision, now: now))
    return check.request
  }

  func advance(to time: Int64) {
    now = time
    run(core.tick(now: now))
  }

  /// Opens `id` and completes the handshake, discarding `getUserData`/`getVersion`.
  func connect(_ id: WCSConnectionID, remote: String = "127.0.0.1:50000") {
    open(id, remote: remote)
    receive(id, "connection", ["appKey": "defaultApp", "mediaProviders": ["WebRTC"]])
    _ = take(id)
  }

  /// Everything `id` received since the last `take`, oldest first.
  func take(_ id: WCSConnectionID) -> [WCSMessage] {
    defer { inbox[id] = [] }
    return inbox[id] ?? []
  }

  func publish(_ id: WCSConnectionID, _ mediaSessionId: String, name: String, record: Bool = false)
  {
    receive(
      id, "publishStream",
      Self.streamObject(.string(mediaSessionId), name: name, published: true, record: record))
  }

  func play(_ id: WCSConnectionID, _ mediaSessionId: String, name: String) {
    receive(
      id, "playStream", Self.streamObject(.string(mediaSessionId), name: name, published: false))
  }

  static func streamObject(
    _ mediaSessionId: JSONValue, name: String, published: Bool, record: Bool = false
  ) -> JSONValue {
    [
      "mediaSessionId": mediaSessionId, "name": .string(name), "published": .bool(published),
      "hasVideo": true, "hasAudio": true, "status": "PENDING", "record": .bool(record),
      "mediaProvider": "WebRTC", "bitrate": 0, "minBitrate": 0, "maxBitrate": 0,
      "sdp": "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n",
    ]
  }
}

extension WCSMessage {
  /// `data[0]` as an object (empty when it is not one), for terse assertions.
  var object: [String: JSONValue] { self[0]?.objectValue ?? [:] }
}

/// Asserts `messages` are a status update of `mediaSessionId` with `status` (and `info`).
func assertStatus(
  _ message: WCSMessage?, _ mediaSessionId: String?, _ status: String, info: String? = nil,
  file: StaticString = #filePath, line: UInt = #line
) {
  guard let message else {
    XCTFail("no message, expected \(status)", file: file, line: line)
    return
  }
  XCTAssertEqual(message.name, "notifyStreamStatusEvent", file: file, line: line)
  XCTAssertEqual(
    message.object["mediaSessionId"], mediaSessionId.map { .string($0) } ?? .null, file: file,
    line: line)
  XCTAssertEqual(message.object["status"], .string(status), file: file, line: line)
  XCTAssertEqual(message.object["info"], info.map { .string($0) }, file: file, line: line)
}

/// `../shared/corpus` next to the package root, when present.
func corpusURL(_ relativePath: String) -> URL? { SharedCorpus.url(relativePath) }

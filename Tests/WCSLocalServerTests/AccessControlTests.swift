import Foundation
import WCSTransport
import XCTest

@testable import WCSLocalServer

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `WCSServerHooks.authorize`: connect, publish, play and room join wait for the hook, which
/// allows, refuses with a reason or rewrites; the shared-secret token mode built on it.
final class AccessControlTests: XCTestCase {
  private func harness() -> ServerHarness {
    var configuration = WCSServerConfiguration()
    // The harness answers the checks itself (`decide`); the closure only turns them on.
    configuration.hooks.authorize = { _ in .allow }
    return ServerHarness(configuration: configuration)
  }

  private func connect(_ server: ServerHarness, _ id: WCSConnectionID, token: String = "t") {
    server.open(id)
    server.receive(
      id, "connection",
      ["appKey": "defaultApp", "custom": ["login": "alice", "token": .string(token)]])
  }

  func testConnectWaitsForTheHookAndLaterMessagesKeepTheirOrder() throws {
    let server = harness()
    connect(server, 1)
    server.publish(1, "pub-1", name: "cam")
    XCTAssertEqual(server.take(1), [], "nothing answered before the hook decides")
    XCTAssertEqual(server.checks.count, 1, "the publish waits behind the connect check")

    let asked = try XCTUnwrap(server.decide(.allow))
    XCTAssertEqual(asked.action, .connect)
    XCTAssertEqual(asked.token, "t")
    XCTAssertEqual(asked.login, "alice")
    XCTAssertEqual(asked.appKey, "defaultApp")
    XCTAssertEqual(server.take(1).map(\.name), ["getUserData", "getVersion"])

    let publish = try XCTUnwrap(server.decide(.allow))
    XCTAssertEqual(publish.action, .publish)
    XCTAssertEqual(publish.token, "t", "later questions carry the session's token")
    XCTAssertEqual(publish.fields["name"], "cam")
    XCTAssertEqual(server.core.streamCount, 1)
    XCTAssertEqual(server.take(1).map(\.name), ["setRemoteSDP", "notifyStreamStatusEvent"])
  }

  func testARefusedConnectFailsWithTheReasonAndCloses() throws {
    let server = harness()
    connect(server, 1, token: "wrong")
    server.decide(.refuse(reason: "Invalid token"))
    let fail = try XCTUnwrap(server.take(1).first)
    XCTAssertEqual(fail.name, "fail")
    XCTAssertEqual(fail.object["info"], "Invalid token")
    XCTAssertEqual(server.closes.first?.1, 1008)
    XCTAssertEqual(server.closes.first?.2, "Invalid token")
    XCTAssertEqual(server.core.sessionCount, 0)
  }

  func testARefusedPublishFailsThatStreamOnly() throws {
    let server = harness()
    connect(server, 1)
    server.decide(.allow)
    _ = server.take(1)
    server.publish(1, "pub-1", name: "cam")
    server.decide(.refuse(reason: "Publishing cam is not allowed"))
    assertStatus(server.take(1).last, "pub-1", "FAILED", info: "Publishing cam is not allowed")
    XCTAssertEqual(server.core.streamCount, 0)
    // The session goes on: the next publish is asked about and may pass.
    server.publish(1, "pub-2", name: "cam2")
    XCTAssertEqual(server.decide(.allow)?.fields["name"], "cam2")
    XCTAssertEqual(server.core.streamCount, 1)
  }

  func testARewriteMapsThePlayedName() throws {
    let server = harness()
    for id: WCSConnectionID in [1, 2] {
      connect(server, id)
      server.decide(.allow)
    }
    server.publish(1, "pub-1", name: "camera-7")
    server.decide(.allow)
    server.play(2, "play-1", name: "lobby")
    let asked = try XCTUnwrap(server.checks.first?.request)
    XCTAssertEqual(asked.action, .play)
    var fields = asked.fields
    fields["name"] = "camera-7"
    server.decide(.rewrite(fields))
    XCTAssertEqual(server.core.playerCount, 1, "the player plays the publisher of camera-7")
    XCTAssertFalse(
      server.take(2).contains { $0.object["info"] == .string(WCSStreamInfo.streamNotFound) })
  }

  func testARoomJoinIsAskedAndARefusalFailsTheCommand() throws {
    let server = harness()
    server.open(1)
    server.receive(1, "connection", ["appKey": "roomApp", "custom": ["login": "bob"]])
    server.decide(.allow)
    _ = server.take(1)
    server.receive(
      1, "sendData",
      ["operationId": "op-1", "payload": ["command": "join", "options": ["name": "r1"]]])
    let asked = try XCTUnwrap(server.checks.first?.request)
    XCTAssertEqual(asked.action, .roomJoin)
    XCTAssertNil(asked.token)
    XCTAssertEqual(asked.fields["command"], "join")
    server.decide(.refuse(reason: "Room r1 is closed"))
    let reply = try XCTUnwrap(server.take(1).first)
    XCTAssertEqual(reply.name, "DataStatusEvent")
    XCTAssertEqual(reply.object["status"], "FAILED")
    XCTAssertEqual(reply.object["info"], "Room r1 is closed")
    XCTAssertEqual(server.core.roomCount, 0)
  }

  func testHeldMessagesAreBounded() throws {
    let server = harness()
    connect(server, 1)
    for _ in 0..<WCSServerCore.maxHeldMessagesPerSession { server.receive(1, "pong", .null) }
    XCTAssertEqual(server.take(1), [])
    server.receive(1, "pong", .null)
    XCTAssertEqual(server.take(1).first?.object["info"], .string(WCSServerCore.accessQueueFull))
  }

  func testTheSharedSecretModeChecksAndStripsTheToken() async throws {
    let hooks = WCSServerHooks.sharedSecret("s3cret")
    let authorize = try XCTUnwrap(hooks.authorize)
    var connect = WCSAccessRequest(
      action: .connect, remoteAddress: "10.0.0.2:5000", token: "s3cret",
      fields: ["appKey": "defaultApp", "custom": ["login": "a", "token": "s3cret"]])
    let decision = await authorize(connect)
    XCTAssertEqual(decision, .rewrite(["appKey": "defaultApp", "custom": ["login": "a"]]))
    connect.token = "s3cres"
    let refused = await authorize(connect)
    XCTAssertEqual(refused, .refuse(reason: WCSServerHooks.invalidToken))
    connect.token = nil
    let missing = await authorize(connect)
    XCTAssertEqual(missing, .refuse(reason: WCSServerHooks.invalidToken))
    let download = try XCTUnwrap(hooks.authorizeRecordDownload)
    XCTAssertEqual(
      download(WCSAccessRequest(action: .recordDownload, remoteAddress: "", token: "s3cret")),
      .allow)
    XCTAssertEqual(
      download(WCSAccessRequest(action: .recordDownload, remoteAddress: "", token: "s3cret2")),
      .refuse(reason: WCSServerHooks.invalidToken))
  }

  func testTokenModeThroughTheServerConnectionsAndDownloads() throws {
    let records = try makeTemporaryDirectory("wcs-access")
    defer { try? FileManager.default.removeItem(at: records) }
    try Data("webm".utf8).write(to: records.appendingPathComponent("r.webm"))
    let logs = Collector<String>()
    var configuration = testConfiguration(
      engine: SharedFakeMediaEngine(), records: records, logs: logs)
    configuration.signaling.hooks = .sharedSecret("s3cret")
    let server = try WCSLocalServer.start(configuration)
    defer { server.stop() }

    let good = TestClient(server.wsURL)
    good.events.wait { $0.contains { $0 == .opened } }
    good.send("connection", ["appKey": "defaultApp", "custom": ["token": "s3cret"]])
    let userData = try XCTUnwrap(good.waitFor { $0.name == "getUserData" })
    XCTAssertNil(userData.object["custom"]?["token"], "the token is not echoed back")
    good.closeAndWait()

    let bad = TestClient(server.wsURL)
    bad.events.wait { $0.contains { $0 == .opened } }
    bad.send("connection", ["appKey": "defaultApp", "custom": ["token": "guess"]])
    XCTAssertEqual(
      bad.waitFor { $0.name == "fail" }?.object["info"], .string(WCSServerHooks.invalidToken))
    bad.events.wait { $0.contains { $0.isTerminal } }
    XCTAssertFalse(bad.messages.contains { $0.name == "getUserData" })

    let url = server.httpBaseURL + "/client/records/r.webm"
    XCTAssertEqual(try status(url), 403)
    XCTAssertEqual(try status(url + "?token=guess"), 403)
    XCTAssertEqual(try status(url + "?token=s3cret"), 200)
    XCTAssertFalse(logs.all.contains { $0.hasPrefix("warning:") }, "loopback: no warning")
  }

  func testANonLoopbackBindWithoutAccessControlIsWarnedAbout() {
    var configuration = WCSLocalServer.Configuration()
    XCTAssertNil(WCSLocalServer.exposureWarning(configuration))
    configuration.bindAddress = "0.0.0.0"
    let warning = WCSLocalServer.exposureWarning(configuration)
    XCTAssertTrue(warning?.contains("without access control") == true, warning ?? "none")
    configuration.signaling.hooks = .sharedSecret("x")
    XCTAssertNil(WCSLocalServer.exposureWarning(configuration))
  }

  func testTokenFileOnTheCommandLine() throws {
    let directory = try makeTemporaryDirectory("wcs-token-file")
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("token").path
    try Data("  s3cret\n".utf8).write(to: URL(fileURLWithPath: file))
    guard case .run(let configuration) = try LocalServerCommandLine.parse(["--token-file", file])
    else { return XCTFail("expected a configuration") }
    XCTAssertNotNil(configuration.signaling.hooks.authorize)
    XCTAssertEqual(
      configuration.signaling.hooks.authorizeRecordDownload?(
        WCSAccessRequest(action: .recordDownload, remoteAddress: "", token: "s3cret")), .allow)
    let empty = directory.appendingPathComponent("empty").path
    try Data("\n".utf8).write(to: URL(fileURLWithPath: empty))
    XCTAssertThrowsError(try LocalServerCommandLine.parse(["--token-file", empty])) { error in
      XCTAssertEqual("\(error)", "--token-file: \(empty) is empty")
    }
  }

  private func status(_ url: String) throws -> Int {
    let request = URLRequest(url: try XCTUnwrap(URL(string: url)), timeoutInterval: 10)
    let result = Collector<Int>()
    URLSession.shared.dataTask(with: request) { _, response, _ in
      result.append((response as? HTTPURLResponse)?.statusCode ?? 0)
    }.resume()
    return try XCTUnwrap(result.wait { !$0.isEmpty }.first)
  }
}

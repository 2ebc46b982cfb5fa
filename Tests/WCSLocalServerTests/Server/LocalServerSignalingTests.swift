import Foundation
import WCSLocalServer
import WCSTransport
import XCTest

/// Real `WebSocketTransport` clients against an in-process `WCSLocalServer` on free ports.
final class LocalServerSignalingTests: XCTestCase {
  private var records: URL?
  private let logs = Collector<String>()

  override func setUpWithError() throws {
    records = try makeTemporaryDirectory("wcs-local-server-test")
  }

  override func tearDown() {
    if let records { try? FileManager.default.removeItem(at: records) }
  }

  private func startServer(_ engine: any LocalServerMediaEngine) throws -> WCSLocalServer {
    let records = try XCTUnwrap(records)
    return try WCSLocalServer.start(testConfiguration(engine: engine, records: records, logs: logs))
  }

  func testConnectionGetsUserDataThenVersion() throws {
    let server = try startServer(SharedFakeMediaEngine())
    defer { server.stop() }
    XCTAssertTrue(server.wsURL.hasPrefix("ws://127.0.0.1:"))
    let port = try XCTUnwrap(URLComponents(string: server.wsURL)?.port)
    XCTAssertNotEqual(port, 0, "the actual port, not the configured 0")
    let client = TestClient(server.wsURL)
    client.establish()
    client.waitFor { $0.name == "getVersion" }
    let messages = client.messages
    XCTAssertEqual(messages.map(\.name), ["getUserData", "getVersion"])
    let userData = messages[0].object
    XCTAssertEqual(userData["status"], "ESTABLISHED")
    XCTAssertEqual(userData["appKey"], "defaultApp")
    let token = try XCTUnwrap(userData["authToken"]?.stringValue)
    XCTAssertTrue(token.hasPrefix("/127.0.0.1/127.0.0.1:\(port)-"), token)
    XCTAssertEqual(messages[1][0], .string(WCSServerConfiguration().serverVersion))
    XCTAssertEqual(server.sessionCount, 1)
    client.closeAndWait()
    logs.wait { $0.contains { $0.hasSuffix("closed") } }
    XCTAssertEqual(server.sessionCount, 0)
    XCTAssertTrue(logs.all.contains { $0.contains("established: appKey=defaultApp") })
  }

  func testPublishAndPlayOnTwoConnectionsThenUnpublishStopsThePlayer() throws {
    let engine = SharedFakeMediaEngine()
    let server = try startServer(engine)
    defer { server.stop() }
    let publisher = TestClient(server.wsURL)
    let player = TestClient(server.wsURL)
    publisher.establish()
    player.establish()

    publisher.send("publishStream", streamArgument("pub-1", name: "cam", published: true))
    let sdp = publisher.waitFor { $0.name == "setRemoteSDP" }
    XCTAssertEqual(sdp?.data, ["pub-1", .string(FakeMediaEngine.answerSDP), true])
    let publishing = publisher.waitForStatus("pub-1", "PUBLISHING")
    XCTAssertEqual(publishing?.object["name"], "cam")
    XCTAssertEqual(publishing?.object["videoCodec"], "VP8")

    player.send("playStream", streamArgument("play-1", name: "cam", published: false))
    player.waitForStatus("play-1", "PLAYING")
    XCTAssertEqual(
      player.messages.map(\.name).filter { $0 != "ping" },
      ["getUserData", "getVersion", "setRemoteSDP", "notifyStreamStatusEvent"])

    publisher.send("unPublishStream", ["mediaSessionId": "pub-1", "name": "cam"])
    publisher.waitForStatus("pub-1", "UNPUBLISHED")
    let stopped = player.waitForStatus("play-1", "STOPPED")
    XCTAssertEqual(stopped?.object["info"], "Stopped by publisher stop")
    XCTAssertEqual(server.streamCount, 0)

    // The engine saw the publisher, the player, the key frame request and both releases.
    let requests = engine.requests
    guard requests.count == 5, case .createPublisher(let created) = requests[0],
      case .createPlayer(let played) = requests[1]
    else { return XCTFail("unexpected media requests \(requests)") }
    XCTAssertEqual(created.streamName, "cam")
    XCTAssertEqual(played.sourceMediaSessionId, "pub-1")
    XCTAssertEqual(requests[2], .requestKeyFrame(mediaSessionId: "pub-1"))
    XCTAssertEqual(
      Set(requests[3...].map { "\($0)" }),
      Set(
        [
          LocalServerMediaRequest.releaseMedia(mediaSessionId: "pub-1", recordName: nil),
          .releaseMedia(mediaSessionId: "play-1", recordName: nil),
        ].map { "\($0)" }))
    publisher.closeAndWait()
    player.closeAndWait()
  }

  func testMalformedFramesGetFailAndTheServerLives() throws {
    let server = try startServer(SharedFakeMediaEngine())
    defer { server.stop() }
    let client = TestClient(server.wsURL)
    client.establish()
    let garbage = [
      "not json", "{", "[1,2]", #"{"message":5}"#, #"{"message":"publishStream","data":5}"#,
      String(repeating: "[", count: 10_000),
    ]
    for frame in garbage { client.sendRaw(frame) }
    client.events.wait {
      $0.compactMap { event -> WCSMessage? in
        guard case .text(let text) = event else { return nil }
        return try? WCSMessageCodec.decode(text)
      }.filter { $0.name == "fail" }.count == garbage.count
    }
    for fail in client.messages.filter({ $0.name == "fail" }) {
      XCTAssertEqual(fail.object["status"], "FAILED")
      XCTAssertNotNil(fail.object["info"]?.stringValue)
    }
    // Same session still serves requests, and a new client still gets in.
    client.send("publishStream", streamArgument("pub-ok", name: "ok", published: true))
    client.waitForStatus("pub-ok", "PUBLISHING")
    let other = TestClient(server.wsURL)
    other.establish()
    XCTAssertNil(client.closeEvent)
    XCTAssertEqual(server.sessionCount, 2)
    client.closeAndWait()
    other.closeAndWait()
  }

  func testLateConnectedEventWakesTheDriver() throws {
    let engine = SharedFakeMediaEngine(deferConnected: true)
    let server = try startServer(engine)
    defer { server.stop() }
    let client = TestClient(server.wsURL)
    client.establish()
    client.send("publishStream", streamArgument("pub-late", name: "late", published: true))
    client.waitFor { $0.name == "setRemoteSDP" }
    XCTAssertFalse(client.messages.contains { $0.name == "notifyStreamStatusEvent" })
    engine.connectLater("pub-late")
    client.waitForStatus("pub-late", "PUBLISHING")
    client.closeAndWait()
  }

  func testStopEndsSessionsAndReleasesRecordings() throws {
    let engine = SharedFakeMediaEngine()
    let server = try startServer(engine)
    let client = TestClient(server.wsURL)
    client.establish()
    client.send(
      "publishStream", streamArgument("pub-rec", name: "rec", published: true, record: true))
    client.waitForStatus("pub-rec", "PUBLISHING")
    server.stop()
    client.events.wait { $0.contains { $0.isTerminal } }
    XCTAssertEqual(client.closeEvent, .closed(code: 1001, reason: "server stopped"))
    guard case .releaseMedia(let id, let recordName)? = engine.requests.last else {
      return XCTFail("no releaseMedia: \(engine.requests)")
    }
    XCTAssertEqual(id, "pub-rec")
    let name = try XCTUnwrap(recordName)
    XCTAssertTrue(name.hasPrefix("stream-") && name.hasSuffix(".webm"), name)
    XCTAssertEqual(engine.shutdownCalls, 1)
    XCTAssertTrue(logs.all.contains { $0.contains("recording finished: \(name)") })
    XCTAssertEqual(server.sessionCount, 0)
    server.stop()
    XCTAssertEqual(engine.shutdownCalls, 1, "a second stop does nothing")
  }

  func testWithTheUnavailableEngineStreamsFailWithAClearReason() throws {
    let records = try XCTUnwrap(records)
    let configuration = testConfiguration(
      engine: UnavailableMediaEngine(), records: records, logs: logs)
    let server = try WCSLocalServer.start(configuration)
    defer { server.stop() }
    let client = TestClient(server.wsURL)
    client.establish()
    client.send("publishStream", streamArgument("pub-x", name: "x", published: true))
    let failed = client.waitForStatus("pub-x", "FAILED")
    XCTAssertEqual(failed?.object["info"], .string(UnavailableMediaEngine.reason))
    client.closeAndWait()
  }

  func testBusyPortFailsToStartAndLeavesNothingListening() throws {
    let records = try XCTUnwrap(records)
    let first = try startServer(SharedFakeMediaEngine())
    defer { first.stop() }
    var configuration = testConfiguration(
      engine: SharedFakeMediaEngine(), records: records, logs: logs)
    configuration.wsPort = try XCTUnwrap(URLComponents(string: first.wsURL)?.port)
    XCTAssertThrowsError(try WCSLocalServer.start(configuration)) { error in
      guard case .listen(let failure)? = error as? WCSLocalServerStartError else {
        return XCTFail("unexpected \(error)")
      }
      XCTAssertEqual(failure.listener, "ws")
    }
    configuration.wsPort = 0
    configuration.wssPort = 0
    XCTAssertThrowsError(try WCSLocalServer.start(configuration)) { error in
      XCTAssertEqual(error as? WCSLocalServerStartError, .missingCertificate)
    }
  }
}

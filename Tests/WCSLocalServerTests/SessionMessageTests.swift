import WCSLocalServer
import WCSTransport
import XCTest

/// `sendStreamEvent`, `sendData`, `availableStream` (wcs-protocol.md §3.1–3.2, §4.6–4.7).
final class SessionMessageTests: XCTestCase {
  let publisher: WCSConnectionID = 1
  let viewerA: WCSConnectionID = 2
  let viewerB: WCSConnectionID = 3

  func testStreamEventIsRelayedWithEachPlayersOwnId() {
    let server = ServerHarness()
    for id in [publisher, viewerA, viewerB] { server.connect(id) }
    server.publish(publisher, "pub-1", name: "cam")
    server.play(viewerA, "play-a", name: "cam")
    server.play(viewerB, "play-b", name: "cam")
    for id in [publisher, viewerA, viewerB] { _ = server.take(id) }

    server.receive(
      publisher, "sendStreamEvent",
      ["mediaSessionId": "pub-1", "type": "data", "payload": ["text": "hi", "n": 3]])
    XCTAssertEqual(server.take(publisher), [])
    XCTAssertEqual(
      server.take(viewerA),
      [
        WCSMessage(
          name: "notifyStreamEvent",
          data: [["mediaSessionId": "play-a", "type": "data", "payload": ["text": "hi", "n": 3]]])
      ])
    XCTAssertEqual(
      server.take(viewerB),
      [
        WCSMessage(
          name: "notifyStreamEvent",
          data: [["mediaSessionId": "play-b", "type": "data", "payload": ["text": "hi", "n": 3]]])
      ])

    // A player cannot send events for the publisher's stream.
    server.receive(viewerA, "sendStreamEvent", ["mediaSessionId": "pub-1", "type": "data"])
    XCTAssertEqual(server.take(viewerA).map(\.name), ["fail"])
    XCTAssertEqual(server.take(viewerB), [])
  }

  func testMuteStateReachesALatePlayer() {
    let server = ServerHarness()
    for id in [publisher, viewerA, viewerB] { server.connect(id) }
    server.publish(publisher, "pub-1", name: "cam")
    server.play(viewerA, "play-a", name: "cam")
    _ = server.take(viewerA)
    server.receive(publisher, "sendStreamEvent", ["mediaSessionId": "pub-1", "type": "audioMuted"])
    XCTAssertEqual(
      server.take(viewerA),
      [
        WCSMessage(
          name: "notifyStreamEvent", data: [["mediaSessionId": "play-a", "type": "audioMuted"]])
      ])

    server.play(viewerB, "play-b", name: "cam")
    let playing = server.take(viewerB).last
    assertStatus(playing, "play-b", "PLAYING")
    XCTAssertEqual(playing?.object["audioState"], ["muted": true])
    XCTAssertEqual(playing?.object["videoState"], ["muted": false])

    server.receive(
      publisher, "sendStreamEvent", ["mediaSessionId": "pub-1", "type": "audioUnmuted"])
    server.receive(publisher, "sendStreamEvent", ["mediaSessionId": "pub-1", "type": "videoMuted"])
    server.receive(viewerB, "stopStream", ["mediaSessionId": "play-b"])
    let stopped = server.take(viewerB).last
    assertStatus(stopped, "play-b", "STOPPED", info: "Stopped by user")
    XCTAssertEqual(stopped?.object["videoState"], ["muted": true])
    server.play(viewerB, "play-c", name: "cam")
    let again = server.take(viewerB).last
    assertStatus(again, "play-c", "PLAYING")
    XCTAssertEqual(again?.object["audioState"], ["muted": false])
    XCTAssertEqual(again?.object["videoState"], ["muted": true])

    // The player's final STOPPED still shows the state the publisher left.
    server.receive(publisher, "unPublishStream", ["mediaSessionId": "pub-1"])
    let last = server.take(viewerB).last
    assertStatus(last, "play-c", "STOPPED", info: "Stopped by publisher stop")
    XCTAssertEqual(last?.object["videoState"], ["muted": true])
  }

  func testSendDataIsAccepted() {
    let server = ServerHarness()
    server.connect(publisher)
    server.receive(
      publisher, #"{"message":"sendData","data":[{"operationId":"op-1","payload":{"a":1}}]}"#)
    XCTAssertEqual(
      server.take(publisher),
      [WCSMessage(name: "DataStatusEvent", data: [["operationId": "op-1", "status": "ACCEPTED"]])])
    server.receive(publisher, "sendData", ["payload": 1])
    let fail = server.take(publisher)
    XCTAssertEqual(fail.map(\.name), ["fail"])
    XCTAssertEqual(fail.first?.object["info"], "Bad request: operationId is missing")
  }

  func testAvailableStreamTrueOnlyWhilePublishing() {
    let server = ServerHarness()
    server.connect(publisher)
    server.connect(viewerA)
    let ask = { () -> [String: JSONValue] in
      server.receive(self.viewerA, "availableStream", ["mediaSessionId": "probe-1", "name": "cam"])
      let out = server.take(self.viewerA)
      XCTAssertEqual(out.map(\.name), ["availableStream"])
      return out.first?.object ?? [:]
    }
    XCTAssertEqual(ask(), ["status": "false", "info": "Stream not found", "id": "probe-1"])

    server.engine.autoConnect = false
    server.publish(publisher, "pub-1", name: "cam")
    XCTAssertEqual(ask()["status"], "false", "not available before media is up")
    server.run(server.core.mediaConnected(mediaSessionId: "pub-1", now: server.now))
    let available = ask()
    XCTAssertEqual(available["status"], "true")
    XCTAssertEqual(available["id"], "probe-1")
    XCTAssertNotNil(available["info"])

    server.receive(publisher, "unPublishStream", ["mediaSessionId": "pub-1"])
    XCTAssertEqual(ask()["status"], "false")
  }

  func testSnapshotAnswersSnapshotFailed() {
    let server = ServerHarness()
    server.connect(publisher)
    server.receive(publisher, "snapshot", ["name": "cam", "mediaSessionId": "snap-1"])
    let out = server.take(publisher)
    XCTAssertEqual(out.map(\.name), ["notifyStreamEvent"])
    XCTAssertEqual(out.first?.object["mediaSessionId"], "snap-1")
    XCTAssertEqual(out.first?.object["type"], "snapshotFailed")
  }
}

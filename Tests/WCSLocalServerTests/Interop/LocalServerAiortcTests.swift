import Foundation
import WCSLocalServer
import WCSMedia
import WCSTransport
import XCTest

/// aiortc publishes to the local server and another aiortc plays: its VP8 and Opus go through
/// our ICE-lite/DTLS-SRTP answerers and the SFU relay and are decoded by aiortc; the recording
/// of the aiortc publisher reads back.
final class LocalServerAiortcTests: XCTestCase {
  func testAiortcPublisherToAiortcPlayerThroughTheRelay() throws {
    guard AiortcClient.isAvailable else { throw XCTSkip("python3 with aiortc not installed") }
    let records = try makeTemporaryDirectory("wcs-aiortc")
    defer { try? FileManager.default.removeItem(at: records) }
    let logs = Collector<String>()
    var configuration = testConfiguration(
      engine: UnavailableMediaEngine(), records: records, logs: logs)
    configuration.mediaEngine = nil
    let server = try WCSLocalServer.start(configuration)
    defer { server.stop() }

    let publisherPeer = try AiortcClient(role: "publisher", directory: records)
    defer { publisherPeer.stop() }
    let publisherOffer = try XCTUnwrap(publisherPeer.offer())
    let publisher = TestClient(server.wsURL)
    publisher.establish()
    publisher.send(
      "publishStream",
      LocalServerRelayTests.stream(
        "pub-aiortc", name: "aiortc", published: true, record: true, sdp: publisherOffer))
    let publisherAnswer = try XCTUnwrap(
      publisher.waitFor { $0.name == "setRemoteSDP" }?[1]?.stringValue)
    publisherPeer.send(["answer": .string(publisherAnswer)])
    publisher.waitForStatus("pub-aiortc", "PUBLISHING")

    let playerPeer = try AiortcClient(role: "player", directory: records)
    defer { playerPeer.stop() }
    let playerOffer = try XCTUnwrap(playerPeer.offer())
    let player = TestClient(server.wsURL)
    player.establish()
    player.send(
      "playStream",
      LocalServerRelayTests.stream(
        "play-aiortc", name: "aiortc", published: false, sdp: playerOffer))
    let playerAnswer = try XCTUnwrap(player.waitFor { $0.name == "setRemoteSDP" }?[1]?.stringValue)
    playerPeer.send(["answer": .string(playerAnswer)])
    player.waitForStatus("play-aiortc", "PLAYING")

    let report = playerPeer.lines.wait(timeout: 30) {
      $0.contains { $0["event"] == "frames" }
    }.first { $0["event"] == "frames" }
    XCTAssertEqual(report?["width"], 640, "aiortc's test pattern, decoded after the relay")
    XCTAssertEqual(report?["height"], 480)

    publisher.send("unPublishStream", ["mediaSessionId": "pub-aiortc", "name": "aiortc"])
    let unpublished = publisher.waitForStatus("pub-aiortc", "UNPUBLISHED")
    let recordName = try XCTUnwrap(unpublished?.object["recordName"]?.stringValue)
    player.waitForStatus("play-aiortc", "STOPPED")
    logs.wait { $0.contains { $0.contains("recording finished: \(recordName)") } }
    let reader = try MediaFileReader(path: records.appendingPathComponent(recordName).path)
    var videoFrames = 0
    while let sample = try reader.nextSample() {
      if case .video(let frame) = sample {
        videoFrames += 1
        XCTAssertEqual(frame.width, 640)
      }
    }
    XCTAssertGreaterThan(videoFrames, 5)
    publisher.closeAndWait()
    player.closeAndWait()
  }
}

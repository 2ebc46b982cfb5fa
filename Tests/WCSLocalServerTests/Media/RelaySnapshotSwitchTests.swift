import Dispatch
import Foundation
import WCSLocalServer
import WCSMedia
import XCTest

/// `LocalServerRelayEngine.Configuration.snapshots`: on (the default), a publisher's held video
/// answers `snapshot` with a PNG; off, the same request is refused with its own reason (what
/// RelayBench's `--snapshots off` measures against).
final class RelaySnapshotSwitchTests: XCTestCase {
  /// The engine's answer to a snapshot of a publisher that sent 30 VP8 frames (a key frame
  /// first), with `snapshots` set as given.
  private func snapshotAnswer(snapshots: Bool) throws -> LocalServerMediaEvent? {
    let records = try makeTemporaryDirectory("wcs-relay-snapshot-switch")
    defer { try? FileManager.default.removeItem(at: records) }
    var configuration = LocalServerRelayEngine.Configuration(recordsDirectory: records.path)
    configuration.snapshots = snapshots
    let engine = LocalServerRelayEngine(configuration: configuration)
    defer { engine.shutdown() }
    let wake = DispatchSemaphore(value: 0)
    engine.attach { wake.signal() }
    var events: [LocalServerMediaEvent] = []
    func waitFor(_ seconds: Double, _ condition: ([LocalServerMediaEvent]) -> Bool) -> Bool {
      let deadline = DispatchTime.now() + seconds
      while true {
        events += engine.takeEvents()
        if condition(events) { return true }
        if wake.wait(timeout: deadline) == .timedOut {
          events += engine.takeEvents()
          return condition(events)
        }
      }
    }

    let loop = EventLoop(label: "relay-snapshot-switch")
    defer { loop.shutdown() }
    let ssrc: UInt32 = 0x5A5A_0001
    let publisher = PeerConnection(configuration: .loopback, loop: loop)
    defer { loop.submit { publisher.close() } }
    let offer = try loop.submit {
      try publisher.createOffer(
        audio: nil, video: .init(ssrc: ssrc, trackId: "v"), mode: .publish)
    }
    engine.perform(
      .createPublisher(
        .init(
          mediaSessionId: "pub", streamName: "cam", offerSDP: offer, record: false,
          hasAudio: false, hasVideo: true, minBitrate: 0, maxBitrate: 0)))
    var answer: String?
    XCTAssertTrue(
      waitFor(10) { events in
        for case .answerReady("pub", let sdp) in events { answer = sdp }
        return answer != nil
      }, "the relay answered the publisher")
    let sdp = try XCTUnwrap(answer)
    try loop.submit { try publisher.setRemoteDescription(answer: sdp) }
    XCTAssertTrue(
      waitFor(10) { events in
        events.contains { if case .connected("pub", _) = $0 { return true } else { return false } }
      }, "the publisher connected")
    let packets = try LocalServerRelayTests.vp8Packets(ssrc: ssrc, firstSequence: 100)
    try loop.submit { for packet in packets { try publisher.sendRTP(packet) } }
    // The packets are on the relay's loop once a request queued after them has run.
    Thread.sleep(forTimeInterval: 0.5)
    engine.perform(.snapshot(sourceMediaSessionId: "pub", requestId: "shot-1"))
    var result: LocalServerMediaEvent?
    _ = waitFor(10) { events in
      result = events.first {
        switch $0 {
        case .snapshotTaken("shot-1", _), .snapshotFailed("shot-1", _): return true
        default: return false
        }
      }
      return result != nil
    }
    return result
  }

  func testSnapshotsOnAnswerWithAPNGOfThePublishersPicture() throws {
    guard case .snapshotTaken(_, let png) = try snapshotAnswer(snapshots: true) else {
      return XCTFail("no snapshotTaken")
    }
    XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    let picture = try PictureFile.decodePNG(png)
    XCTAssertEqual(picture.width, 160)
    XCTAssertEqual(picture.height, 120)
  }

  func testSnapshotsOffRefuseTheRequestWithTheirReason() throws {
    let answer = try snapshotAnswer(snapshots: false)
    XCTAssertEqual(
      answer,
      .snapshotFailed(requestId: "shot-1", reason: LocalServerRelayEngine.snapshotsOffReason))
    XCTAssertEqual(LocalServerRelayEngine.snapshotsOffReason, "Snapshots are off on this server")
  }
}

import Foundation
import WCSProtocols
import WCSTransport
import XCTest

@testable import WCSLocalServer

/// `inboundVideoRate`/`outboundVideoRate` (wcs-protocol.md §4.7): the media engine's leg rates
/// go to the stream's owner only, named by the leg's direction; the upgrade headers' log line
/// never shows a password.
final class VideoRateReportTests: XCTestCase {
  let publisher: WCSConnectionID = 1
  let viewer: WCSConnectionID = 2

  func testRatesGoToTheOwnerOfEachLeg() {
    let server = ServerHarness()
    for id in [publisher, viewer] { server.connect(id) }
    server.publish(publisher, "pub-1", name: "cam")
    server.play(viewer, "play-1", name: "cam")
    for id in [publisher, viewer] { _ = server.take(id) }

    server.run(
      server.core.mediaEvent(
        .videoRate(mediaSessionId: "pub-1", inbound: true, bitsPerSecond: 812_344),
        now: server.now))
    server.run(
      server.core.mediaEvent(
        .videoRate(mediaSessionId: "play-1", inbound: false, bitsPerSecond: 790_112),
        now: server.now))
    let toPublisher = server.take(publisher)
    XCTAssertEqual(toPublisher.map(\.name), ["inboundVideoRate"])
    XCTAssertEqual(toPublisher.first?.object["mediaSessionId"], "pub-1")
    XCTAssertEqual(toPublisher.first?.object["videoRate"], 812_344)
    let toViewer = server.take(viewer)
    XCTAssertEqual(toViewer.map(\.name), ["outboundVideoRate"])
    XCTAssertEqual(toViewer.first?.object["mediaSessionId"], "play-1")
    XCTAssertEqual(toViewer.first?.object["videoRate"], 790_112)

    // A stream that has gone is skipped.
    server.run(
      server.core.mediaEvent(
        .videoRate(mediaSessionId: "gone", inbound: true, bitsPerSecond: 1), now: server.now))
    XCTAssertEqual(server.take(publisher).map(\.name), [])
    XCTAssertEqual(server.take(viewer).map(\.name), [])
  }

  func testVideoRateIsTheBytesOverTheTimeBetweenSamples() {
    let start = MediaInstant(nanoseconds: 5_000_000_000)
    XCTAssertNil(LocalServerRelayEngine.videoRate(bytes: 1000, since: nil, now: start))
    XCTAssertNil(
      LocalServerRelayEngine.videoRate(bytes: 1000, since: (1000, start), now: start + .seconds(1)),
      "no video since the sample")
    XCTAssertEqual(
      LocalServerRelayEngine.videoRate(
        bytes: 101_000, since: (1000, start), now: start + .milliseconds(800)),
      1_000_000)
  }

  func testUpgradeHeadersAreLoggedWithoutThePassword() throws {
    let header = "Basic " + Data("alice:s3cret".utf8).base64EncodedString()
    let line = try XCTUnwrap(
      LocalServerUpgradeLog.line(
        session: 7, headers: ["authorization": header, "user-agent": "test"]))
    XCTAssertEqual(line, "session #7 headers: authorization=Basic alice:***, user-agent=test")
    XCTAssertFalse(line.contains("s3cret"))
    XCTAssertEqual(
      LocalServerUpgradeLog.redacted(authorization: "Bearer abcdef"), "Bearer (6 characters)")
    XCTAssertEqual(LocalServerUpgradeLog.redacted(authorization: "Basic %%%"), "Basic (not base64)")
    XCTAssertNil(LocalServerUpgradeLog.line(session: 7, headers: [:]))
    let long = try XCTUnwrap(
      LocalServerUpgradeLog.line(
        session: 7, headers: ["origin": String(repeating: "x", count: 500)]))
    XCTAssertEqual(long.count, "session #7 headers: origin=".count + 200 + 1)
  }
}

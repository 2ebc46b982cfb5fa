import ExampleSupport
import Foundation
import XCTest

/// MediaDevices' transport, stripped codecs, connection-quality callback and Basic-auth
/// headers end to end against the local server, whose log (`--server-log`) says what it
/// received: the upgrade headers (password hidden), each stream's transport, and whether RTX
/// was negotiated.
final class MediaDevicesConnectionTests: XCTestCase {
  func testTransportStrippedCodecsQualityAndAuthorizationReachTheServer() throws {
    let out = try ExampleRunner.temporaryDirectory("media-devices-connection")
    let result = try ExampleRunner.run(
      "MediaDevices",
      [
        "--duration", "4", "--width", "320", "--height", "240", "--publish", "md-conn",
        "--transport", "tcp", "--strip-codecs", "rtx", "--auth", "alice:s3cret",
        "--server-log", "--out", out,
      ])
    XCTAssertEqual(result.status, 0, result.output)
    XCTAssertEqual(result.summary["Result"], "OK", result.output)
    XCTAssertEqual(result.summary["Transport"], "TCP")
    XCTAssertEqual(result.summary["Stripped codecs"], "rtx")
    XCTAssertEqual(result.summary["Authorization"], "Basic, user alice")
    XCTAssertTrue(
      result.output.contains("headers: authorization=Basic alice:***"), result.output)
    XCTAssertFalse(result.output.contains("s3cret"), "the password is never printed")
    XCTAssertTrue(
      result.output.contains("publish ")
        && result.output.contains("name=md-conn record=false transport=TCP"),
      result.output)
    XCTAssertTrue(result.output.contains("source="), result.output)
    XCTAssertFalse(result.output.contains("transport=UDP"), result.output)
    // RTX stripped from both offers: neither leg negotiated it.
    let legs = result.output.split(separator: "\n").filter { $0.contains("'md-conn':") }
    XCTAssertEqual(legs.count, 2, result.output)
    XCTAssertTrue(legs.allSatisfy { $0.contains("rtx off") }, result.output)
    // The server's inboundVideoRate reports drive the published stream's quality callback.
    let quality = try XCTUnwrap(result.summary["Connection quality"])
    XCTAssertFalse(quality.hasPrefix("no report"), quality)
    XCTAssertGreaterThanOrEqual(
      ExampleSummary.number(quality.components(separatedBy: "(").last) ?? 0, 2, quality)
    XCTAssertTrue(result.output.contains("] connection quality: "), result.output)
  }

  func testDefaultsAreUDPWithRTXAndNoAuthorization() throws {
    let out = try ExampleRunner.temporaryDirectory("media-devices-defaults")
    let result = try ExampleRunner.run(
      "MediaDevices", ["--duration", "2", "--publish", "md-default", "--server-log", "--out", out])
    XCTAssertEqual(result.status, 0, result.output)
    XCTAssertEqual(result.summary["Transport"], "UDP")
    XCTAssertEqual(result.summary["Stripped codecs"], "none")
    XCTAssertEqual(result.summary["Authorization"], "none")
    XCTAssertFalse(result.output.contains("authorization="), result.output)
    let legs = result.output.split(separator: "\n").filter { $0.contains("'md-default':") }
    XCTAssertEqual(legs.count, 2, result.output)
    XCTAssertTrue(legs.allSatisfy { $0.contains("rtx on") }, result.output)
  }

  func testCredentialsInTheURLBecomeTheHeaderAndLeaveTheURL() {
    let fromURL = BasicAuthorization(url: "ws://bob:pa%3Ass@127.0.0.1:8080/cam", credentials: nil)
    XCTAssertEqual(fromURL.url, "ws://127.0.0.1:8080/cam")
    XCTAssertEqual(fromURL.user, "bob")
    XCTAssertEqual(fromURL.header, "Basic " + Data("bob:pa:ss".utf8).base64EncodedString())
    let given = BasicAuthorization(url: "ws://127.0.0.1:8080", credentials: "carol")
    XCTAssertEqual(given.url, "ws://127.0.0.1:8080")
    XCTAssertEqual(given.header, "Basic " + Data("carol:".utf8).base64EncodedString())
    let none = BasicAuthorization(url: "ws://127.0.0.1:8080", credentials: nil)
    XCTAssertNil(none.header)
    XCTAssertNil(none.user)
  }

  func testAnUnknownTransportIsAUsageError() throws {
    let result = try ExampleRunner.run("MediaDevices", ["--transport", "sctp"])
    XCTAssertEqual(result.status, 64, result.output)
    XCTAssertTrue(result.output.contains("--transport wants udp or tcp, got sctp"), result.output)
  }
}

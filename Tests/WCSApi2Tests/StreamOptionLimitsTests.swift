import Foundation
import WCSTransport
import XCTest

@testable import WCSApi2

/// `createStream` and `publish()`/`play()` refuse names and constraints outside
/// `FPWCSApi2StreamLimits` with a `WCSError` naming the field; nothing is sent and the session
/// and its other streams go on.
final class StreamOptionLimitsTests: XCTestCase {
  private func options(_ name: String, _ constraints: FPWCSApi2MediaConstraints? = nil)
    -> FPWCSApi2StreamOptions
  {
    let options = FPWCSApi2StreamOptions()
    options.name = name
    options.constraints = constraints
    return options
  }

  private func video(_ change: (FPWCSApi2VideoConstraints) -> Void) -> FPWCSApi2MediaConstraints {
    let constraints = FPWCSApi2MediaConstraints(audio: true, video: true)
    if let video = constraints?.video { change(video) }
    return constraints ?? FPWCSApi2MediaConstraints()
  }

  func testBadNamesAndConstraintsThrowWithTheFieldName() throws {
    let h = try Harness()
    h.establish()
    let audio = FPWCSApi2MediaConstraints(audio: true, video: false)
    audio?.audio?.bitrate = -64_000
    var cases: [(FPWCSApi2StreamOptions, WCSError, String)] = [
      (
        options(String(repeating: "a", count: 257)),
        .invalidOption(field: "name", reason: "must be at most 256 UTF-8 bytes, got 257"),
        "invalid options: name must be at most 256 UTF-8 bytes, got 257"
      ),
      (
        options("cam\u{0}1"),
        .invalidOption(field: "name", reason: "must not contain control characters"),
        "invalid options: name must not contain control characters"
      ),
      (
        options("cam", video { $0.maxBitrate = -1 }),
        .invalidOption(
          field: "constraints.video.maxBitrate",
          reason: "must be between 0 and 100000 kbit/s, got -1"),
        "invalid options: constraints.video.maxBitrate must be between 0 and 100000 kbit/s, got -1"
      ),
      (
        options("cam", video { $0.minBitrate = 200_000 }),
        .invalidOption(
          field: "constraints.video.minBitrate",
          reason: "must be between 0 and 100000 kbit/s, got 200000"),
        "invalid options: constraints.video.minBitrate must be between 0 and 100000 kbit/s, got 200000"
      ),
      (
        options("cam", video { $0.maxWidth = 100_000 }),
        .invalidOption(
          field: "constraints.video.maxWidth",
          reason: "must be between 0 and 16384 pixels, got 100000"),
        "invalid options: constraints.video.maxWidth must be between 0 and 16384 pixels, got 100000"
      ),
      (
        options("cam", video { $0.minHeight = -480 }),
        .invalidOption(
          field: "constraints.video.minHeight",
          reason: "must be between 0 and 16384 pixels, got -480"),
        "invalid options: constraints.video.minHeight must be between 0 and 16384 pixels, got -480"
      ),
      (
        options("cam", video { $0.maxFrameRate = 1000 }),
        .invalidOption(
          field: "constraints.video.maxFrameRate", reason: "must be between 0 and 240 fps, got 1000"
        ),
        "invalid options: constraints.video.maxFrameRate must be between 0 and 240 fps, got 1000"
      ),
      (
        options("cam", audio),
        .invalidOption(
          field: "constraints.audio.bitrate",
          reason: "must be between 0 and 100000000 bit/s, got -64000"),
        "invalid options: constraints.audio.bitrate must be between 0 and 100000000 bit/s, got -64000"
      ),
    ]
    // The local server refuses a quality outside 0...100; the SDK says so before sending.
    cases.append(
      (
        options("cam", video { $0.quality = 101 }),
        .invalidOption(
          field: "constraints.video.quality", reason: "must be between 0 and 100, got 101"),
        "invalid options: constraints.video.quality must be between 0 and 100, got 101"
      ))
    cases.append(
      (
        options("cam", FPWCSApi2MediaConstraints()),
        .invalidOption(field: "constraints", reason: "must ask for audio or video (both are nil)"),
        "invalid options: constraints must ask for audio or video (both are nil)"
      ))
    for (options, expected, text) in cases {
      XCTAssertThrowsError(try h.session.createStream(options), text) { error in
        XCTAssertEqual(error as? WCSError, expected)
        XCTAssertEqual(error.localizedDescription, text)
      }
    }
    XCTAssertTrue(h.session.getStreams().isEmpty)
    XCTAssertEqual(h.session.getStatus(), .fpwcsSessionStatusEstablished)

    // The limits themselves and a 256-byte name are accepted.
    let (stream, _) = try h.makeStream(
      String(repeating: "é", count: 128),
      constraints: video {
        $0.maxWidth = 16_384
        $0.maxHeight = 16_384
        $0.maxFrameRate = 240
        $0.maxBitrate = 100_000
        $0.quality = 100
      })
    try stream.publish()
    h.settle()
    XCTAssertEqual(h.sent("publishStream").count, 1)
  }

  /// Constraints changed after `createStream` are checked again by `play()`.
  func testPlayRechecksConstraintsChangedAfterCreateStream() throws {
    let h = try Harness()
    h.establish()
    let constraints = video { _ in }
    let (stream, _) = try h.makeStream("cam", constraints: constraints)
    constraints.video?.bitrate = -5
    XCTAssertThrowsError(try stream.play()) { error in
      XCTAssertEqual(
        error as? WCSError,
        .invalidOption(
          field: "constraints.video.bitrate", reason: "must be between 0 and 100000 kbit/s, got -5")
      )
    }
    h.settle()
    XCTAssertEqual(h.sent("playStream").count, 0)
    XCTAssertEqual(stream.getStatus(), .fpwcsStreamStatusNew)
    constraints.video?.bitrate = 500
    try stream.play()
    h.settle()
    XCTAssertEqual(h.sent("playStream").count, 1)
  }
}

import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// The receive stream converts arrival instants to seconds from the attoseconds instead of
/// `Duration.components`: the same Double, bit for bit.
final class RTPReceiveStreamSecondsTests: XCTestCase {
  func testSecondsFromAttosecondsMatchStreamSeconds() {
    var state: UInt64 = 0x0DD_BA11
    func next() -> UInt64 {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return state
    }
    var durations: [Duration] = [
      .zero, .nanoseconds(1), .nanoseconds(-1), .seconds(1), .seconds(-1), .milliseconds(999),
      Duration(attoseconds: 1), Duration(attoseconds: -1),
      Duration(attoseconds: 999_999_999_999_999_999), .seconds(86_400 * 365),
    ]
    for _ in 0..<50_000 {
      let scale = Int128(1) << Int(next() % 90)
      let magnitude = Int128(next() >> 1) * Int128(next() % 1024) % scale
      durations.append(Duration(attoseconds: next() & 1 == 0 ? magnitude : -magnitude))
    }
    for duration in durations {
      let expected = duration.streamSeconds
      XCTAssertEqual(
        RTPReceiveStream.seconds(of: duration).bitPattern, expected.bitPattern, "\(duration)")
    }
  }
}

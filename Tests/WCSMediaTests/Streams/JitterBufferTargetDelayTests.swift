import XCTest

@testable import WCSProtocols

/// `JitterBuffer.targetDelay` is what the delay moves towards: the clamped
/// `jitterFactor × jitter + extraDelay` of the last update, reached a tenth at a time.
final class JitterBufferTargetDelayTests: XCTestCase {
  func testTargetIsTheClampedFormulaAndTheDelayMovesATenthTowardsIt() {
    let configuration = JitterBuffer.Configuration(
      minDelay: .milliseconds(10), maxDelay: .milliseconds(500), jitterFactor: 3)
    var buffer = JitterBuffer(clockRate: 90_000, configuration: configuration)
    XCTAssertEqual(buffer.targetDelay, 0.010, accuracy: 1e-12, "minDelay before any update")
    XCTAssertEqual(buffer.delay, 0.010, accuracy: 1e-12)

    // 3 × 20 ms jitter + 100 ms retransmission allowance.
    buffer.updateTargetDelay(jitterSeconds: 0.020, extraDelay: 0.100)
    XCTAssertEqual(buffer.targetDelay, 0.160, accuracy: 1e-12)
    XCTAssertEqual(buffer.delay, 0.010 + (0.160 - 0.010) * 0.1, accuracy: 1e-12)
    for _ in 0..<200 { buffer.updateTargetDelay(jitterSeconds: 0.020, extraDelay: 0.100) }
    XCTAssertEqual(buffer.delay, 0.160, accuracy: 1e-6, "converged on the target")

    // Clamped both ways.
    buffer.updateTargetDelay(jitterSeconds: 1, extraDelay: 1)
    XCTAssertEqual(buffer.targetDelay, 0.500, accuracy: 1e-12)
    buffer.updateTargetDelay(jitterSeconds: 0, extraDelay: 0)
    XCTAssertEqual(buffer.targetDelay, 0.010, accuracy: 1e-12)
    XCTAssertGreaterThan(buffer.delay, buffer.targetDelay, "the delay lags the target")
  }
}

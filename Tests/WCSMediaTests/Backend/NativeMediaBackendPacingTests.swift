import Foundation
import XCTest

@testable import WCSEngine
@testable import WCSMedia
@testable import WCSMediaSeam

/// The publish path goes through the pacer: pictures still arrive, the pacer runs at 2.5 × the
/// video target and empties.
final class NativeMediaBackendPacingTests: XCTestCase {
  func testPublishedMediaLeavesThroughThePacer() throws {
    let call = try LoopbackCall(
      publish: MediaConnectionRequest(
        direction: .publish, audio: .init(),
        video: .init(maxWidth: 320, maxHeight: 240, maxFrameRate: 25)))
    defer { call.close() }
    try call.connectPublisher(self)
    try call.connectPlayer(self)
    waitForBackend("paced pictures and sound") {
      call.frameNumbers.count >= 10 && call.audio.value.count >= 10
    }
    let publisher = call.publisher
    let (rate, target, hasPacer) = call.loop.submit {
      (
        publisher.publishSession?.pacer?.pacingRate ?? 0,
        publisher.publishSession?.videoSend?.targetBitrate ?? 0,
        publisher.publishSession?.pacer != nil
      )
    }
    XCTAssertTrue(hasPacer)
    XCTAssertGreaterThan(target, 0)
    XCTAssertEqual(rate, 2.5 * Double(target), accuracy: 1)
    waitForBackend("the pacer empties between pictures") {
      call.loop.submit { publisher.publishSession?.pacer?.queuedPackets ?? -1 } == 0
    }
    let numbers = call.frameNumbers
    XCTAssertEqual(numbers, numbers.sorted(), "paced video keeps its order")
  }
}

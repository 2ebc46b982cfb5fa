import Foundation
import XCTest

@testable import WCSEngine
@testable import WCSMedia
@testable import WCSMediaSeam

/// A second answer given to a connected native media connection (a server repeating
/// `setRemoteSDP`): refused with a typed error, and nothing the refused answer said is taken.
final class RepeatedAnswerTests: XCTestCase {
  func testARefusedSecondAnswerLeavesTheNegotiatedTransportWideCCAlone() throws {
    let call = try LoopbackCall(
      publish: MediaConnectionRequest(
        direction: .publish, audio: .init(),
        video: .init(maxWidth: 320, maxHeight: 240, maxFrameRate: 30)))
    defer { call.close() }
    let offer = try offer(of: call.publisher)
    let answer = try call.relay.answerPublisher(offer)
    XCTAssertTrue(answer.contains("transport-wide-cc"), "the relay mirrors the offer's extmaps")
    try apply(answer: answer, to: call.publisher)
    waitForBackend("publisher connected") { call.publishStates.value.last == .connected }
    let negotiated = call.loop.submit { call.publisher.transportWideCCID }
    XCTAssertEqual(negotiated, 3)

    let withoutTransportCC =
      answer.split(separator: "\r\n", omittingEmptySubsequences: false)
      .filter { !$0.contains("transport-wide-cc") }.joined(separator: "\r\n")
    XCTAssertThrowsError(try apply(answer: withoutTransportCC, to: call.publisher)) { error in
      guard case .answerRejected = error as? MediaBackendError else {
        return XCTFail("\(error)")
      }
    }
    XCTAssertEqual(
      call.loop.submit { call.publisher.transportWideCCID }, negotiated,
      "the refused answer's extmaps were taken")
    XCTAssertEqual(call.publishStates.value.last, .connected)
  }
}

import Foundation
import XCTest

@testable import WCSEngine
@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSMediaSeam

/// A call's media connection (`MediaConnectionRequest.receivesToo`) offers two-way media.
final class CallMediaOfferTests: XCTestCase {
  func testCallConnectionOffersSendRecvAudioWithItsSSRCAndOneWayRequestsStayOneWay() throws {
    let loop = EventLoop(label: "CallMediaOfferTests")
    let backend = NativeMediaBackend(
      configuration: NativeMediaBackend.Configuration(loop: loop, peerConnection: .loopback))
    var call = MediaConnectionRequest(direction: .publish, audio: .init(), video: nil)
    call.receivesToo = true
    XCTAssertTrue(call.sends)
    XCTAssertTrue(call.receives)
    let connection = try backend.makeConnection(call) { _ in }
    defer { connection.close() }
    let offer = try self.offer(of: connection)
    XCTAssertTrue(offer.contains("m=audio"))
    XCTAssertTrue(offer.contains("a=sendrecv"), offer)
    XCTAssertFalse(offer.contains("a=sendonly"))
    XCTAssertFalse(offer.contains("a=recvonly"))
    XCTAssertTrue(offer.contains("a=ssrc:"), "the sent stream is signalled")

    let publish = try backend.makeConnection(
      MediaConnectionRequest(direction: .publish, audio: .init(), video: nil)
    ) { _ in }
    defer { publish.close() }
    let publishOffer = try self.offer(of: publish)
    XCTAssertTrue(publishOffer.contains("a=sendonly"))
    XCTAssertFalse(publishOffer.contains("a=sendrecv"))
  }

  func testAudioOutputOfACallConnectionIsAcceptedAndOfAPublishIsRefused() throws {
    let loop = EventLoop(label: "CallMediaOfferTests.output")
    let backend = NativeMediaBackend(
      configuration: NativeMediaBackend.Configuration(loop: loop, peerConnection: .loopback))
    var call = MediaConnectionRequest(direction: .publish, audio: .init(), video: nil)
    call.receivesToo = true
    let connection = try backend.makeConnection(call) { _ in }
    defer { connection.close() }
    XCTAssertNoThrow(try connection.setAudioOutput(.none))
    let publish = try backend.makeConnection(
      MediaConnectionRequest(direction: .publish, audio: .init(), video: nil)
    ) { _ in }
    defer { publish.close() }
    XCTAssertThrowsError(try publish.setAudioOutput(.none))
  }
}

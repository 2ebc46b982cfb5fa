import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSPeerConnection

/// A connection whose peer never starts ICE, or stops sending checks, releases its sockets.
final class PeerConnectionTimeoutTests: XCTestCase {
  func testLiteAnswererWithoutPeerChecksFailsAfterTheConnectTimeout() throws {
    let loop = EventLoop(label: "PeerConnectionTimeoutTests")
    let offerer = PeerConnection(configuration: .loopback, loop: loop)
    var configuration = PeerConnectionConfiguration.loopback
    configuration.iceLite = true
    configuration.connectTimeout = .milliseconds(300)
    let answerer = PeerConnection(configuration: configuration, loop: loop)
    let recorder = PeerRecorder()
    try loop.submit {
      recorder.attach(to: answerer)
      // The offerer never gets the answer, so nobody ever sends the answerer a check.
      _ = try answerer.setRemoteOffer(try offerer.localDescriptionForOffer())
    }
    XCTAssertTrue(eventually { recorder.lastState?.isFinal == true })
    XCTAssertEqual(recorder.states, [.connecting, .failed(.iceFailed)])
    let socketsClosed = loop.submit { answerer.sockets.allSatisfy(\.isClosed) }
    XCTAssertTrue(socketsClosed, "the failed connection released its sockets")
    loop.submit {
      offerer.close()
      answerer.close()
    }
    loop.shutdown()
  }

  func testLiteAnswererFailsWhenThePeerStopsSendingChecks() throws {
    let loop = EventLoop(label: "PeerConnectionTimeoutTests")
    var offerConfiguration = PeerConnectionConfiguration.loopback
    offerConfiguration.iceConsentInterval = .milliseconds(100)
    let offerer = PeerConnection(configuration: offerConfiguration, loop: loop)
    var configuration = PeerConnectionConfiguration.loopback
    configuration.iceLite = true
    configuration.iceConsentTimeout = .seconds(1)
    let answerer = PeerConnection(configuration: configuration, loop: loop)
    let offererRecorder = PeerRecorder()
    let recorder = PeerRecorder()
    try loop.submit {
      offererRecorder.attach(to: offerer)
      recorder.attach(to: answerer)
      let answer = try answerer.setRemoteOffer(try offerer.localDescriptionForOffer())
      try offerer.setRemoteAnswer(answer)
    }
    XCTAssertTrue(
      eventually { recorder.lastState == .connected && offererRecorder.lastState == .connected })
    loop.submit { offerer.close() }
    XCTAssertTrue(eventually { recorder.lastState?.isFinal == true })
    XCTAssertEqual(recorder.lastState, .failed(.iceFailed))
    XCTAssertTrue(recorder.states.contains(.connected))
    loop.submit { answerer.close() }
    loop.shutdown()
  }
}

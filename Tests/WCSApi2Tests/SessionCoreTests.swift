import Foundation
import WCSTransport
import XCTest

@testable import WCSApi2

/// The Sans-I/O session core on its own: inputs in, effects out, no queues or sockets.
final class SessionCoreTests: XCTestCase {
  private func established(probes: Int = 0) -> SessionCore {
    var config = SessionConnectionConfig()
    config.receiveProbes = probes
    let core = SessionCore(config: config)
    _ = core.connect()
    _ = core.transportOpened()
    _ = core.receive(
      #"{"message":"getUserData","data":[{"status":"ESTABLISHED","authToken":"t"}]}"#)
    return core
  }

  private func names(_ effects: [SessionEffect]) -> [String] {
    effects.map { effect in
      switch effect {
      case .send(let message): return "send \(message.name)"
      case .sessionStatus(let s): return "session \(FPWCSApi2Model.sessionStatus(toString: s))"
      case .streamStatus(let s, _): return "stream \(FPWCSApi2Model.streamStatus(toString: s))"
      case .closeTransport: return "close"
      case .openTransport: return "open"
      case .releaseMedia: return "release"
      case .createOffer: return "offer"
      case .applyAnswer: return "answer"
      case .skipped: return "skipped"
      default: return "other"
      }
    }
  }

  func testHandshakeEffects() {
    let core = SessionCore(config: SessionConnectionConfig())
    XCTAssertEqual(names(core.connect()), ["session PENDING", "open"])
    XCTAssertEqual(names(core.connect()), [], "connect while pending does nothing")
    XCTAssertEqual(names(core.transportOpened()), ["send connection"])
    XCTAssertEqual(names(core.receive(#"{"message":"ping","data":[]}"#)), ["send pong"])
    XCTAssertEqual(
      names(core.receive(#"{"message":"getUserData","data":[{"authToken":"abc"}]}"#)),
      ["session ESTABLISHED"])
    XCTAssertEqual(core.authToken, "abc")
    XCTAssertEqual(
      names(core.receive(#"{"message":"registered","data":[{}]}"#)), ["session REGISTERED"])
    XCTAssertEqual(names(core.disconnect()), ["close", "session DISCONNECTED"])
    XCTAssertEqual(names(core.transportClosed(code: 1000, reason: "")), [], "already disconnected")
    XCTAssertEqual(
      names(core.connect()), ["session PENDING", "open"], "a session may connect again")
  }

  func testMissedPingsFailTheSession() {
    let core = established(probes: 3)
    XCTAssertEqual(names(core.probeTick()), [])
    XCTAssertEqual(names(core.probeTick()), [])
    XCTAssertEqual(names(core.receive(#"{"message":"ping","data":[null]}"#)), ["send pong"])
    XCTAssertEqual(core.missedProbes, 0, "a ping resets the counter")
    XCTAssertEqual(names(core.probeTick()), [])
    XCTAssertEqual(names(core.probeTick()), [])
    XCTAssertEqual(names(core.probeTick()), ["close", "session FAILED"])
    XCTAssertEqual(core.failureReason, "no ping from the server in 3 probe intervals")
    XCTAssertEqual(names(established(probes: 0).probeTick()), [], "off by default")
  }

  func testStreamLifecycleEffects() throws {
    let core = established()
    core.addStream(id: "s1", name: "cam")
    let request = MediaRequestBuilder.streamRequest(
      name: "cam", published: true,
      constraints: FPWCSApi2MediaConstraints(audio: true, video: true),
      record: false, rtmpUrl: nil, custom: nil, transport: .fpwcsTransportUDP, cvoExtension: false,
      stripCodecs: [])
    XCTAssertNoThrow(try core.checkCanStart(streamId: "s1", operation: "publish"))
    XCTAssertEqual(names(core.start(streamId: "s1", request: request)), ["other", "offer"])
    XCTAssertEqual(
      names(core.offerCreated(streamId: "s1", result: .success("v=0\r\n"))), ["send publishStream"])
    XCTAssertEqual(
      names(core.receive(#"{"message":"setRemoteSDP","data":["s1","v=0\r\n",true]}"#)), ["answer"])
    XCTAssertEqual(
      names(
        core.receive(
          #"{"message":"notifyStreamStatusEvent","data":[{"mediaSessionId":"s1","status":"PUBLISHING"}]}"#
        )),
      ["stream PUBLISHING"])
    XCTAssertEqual(names(core.stop(streamId: "s1")), ["send unPublishStream", "release"])
    XCTAssertEqual(
      names(
        core.receive(
          #"{"message":"notifyStreamStatusEvent","data":[{"mediaSessionId":"s1","status":"UNPUBLISHED"}]}"#
        )),
      ["release", "stream UNPUBLISHED"])
    XCTAssertTrue(core.streamIds.isEmpty, "ended streams are forgotten")
  }

  func testOfferFailureFailsTheStreamLocally() {
    let core = established()
    core.addStream(id: "s1", name: "cam")
    let request = MediaRequestBuilder.streamRequest(
      name: "cam", published: false, constraints: FPWCSApi2MediaConstraints(), record: false,
      rtmpUrl: nil,
      custom: nil, transport: .fpwcsTransportUDP, cvoExtension: false, stripCodecs: [])
    _ = core.start(streamId: "s1", request: request)
    let effects = core.offerCreated(streamId: "s1", result: .failure(.deviceUnavailable("busy")))
    XCTAssertEqual(names(effects), ["release", "stream FAILED"])
    guard case .streamStatus(_, let state)? = effects.last else { return XCTFail("no status") }
    XCTAssertEqual(state.statusInfo, .fpwcsStreamStatusInfoLocalError)
    XCTAssertEqual(state.info, "Local error: capture device unavailable: busy")
  }

  func testUnclaimedRemoteSDPIsBounded() {
    let core = established()
    for i in 0..<40 {
      _ = core.receive(#"{"message":"setRemoteSDP","data":["id\#(i)","v=0\r\n",true]}"#)
    }
    XCTAssertEqual(core.unclaimedRemoteSDP.count, SessionCore.unclaimedRemoteSDPLimit)
    XCTAssertEqual(core.unclaimedRemoteSDP.first?.id, "id24")
    core.addStream(id: "id39", name: "late")
    XCTAssertEqual(
      core.streams["id39"]?.bufferedAnswer, "v=0\r\n", "a stream created later claims its answer")
  }

  func testMissedPingDetectionOnTheDriver() throws {
    let h = try Harness { options in
      options.receiveProbes = 2
      options.probesInterval = 0.01
    }
    let failed = expectation(description: "failed")
    h.session.on(.fpwcsSessionStatusFailed) { _ in failed.fulfill() }
    h.establish()
    wait(for: [failed], timeout: 10)
    XCTAssertEqual(h.session.getFailureReason(), "no ping from the server in 2 probe intervals")
    XCTAssertEqual(h.transport.closeCodes, [1000])
  }
}

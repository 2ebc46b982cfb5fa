import Foundation
import WCSTransport
import XCTest

@testable import WCSApi2

/// SIP calls against scripted server messages (wcs-rooms-and-calls.md §B.4–§B.10).
final class CallTests: XCTestCase {
  private func registeredHarness() throws -> Harness {
    let h = try Harness { options in
      options.sipLogin = "1001"
      options.sipAuthenticationName = "1001"
      options.sipPassword = "secret"
      options.sipDomain = "127.0.0.1"
      options.sipOutboundProxy = "127.0.0.1"
      options.sipPort = 5060
      options.sipRegisterRequired = true
    }
    h.session.connect()
    h.settle()
    h.push("getUserData", [["status": "ESTABLISHED", "sipLogin": "1001", "login": "1001"]])
    h.push("registered", [["status": "REGISTERED"]])
    return h
  }

  private func record(_ call: FPWCSApi2Call) -> Locked<[kFPWCSCallStatus]> {
    let seen = Locked<[kFPWCSCallStatus]>([])
    for status in kFPWCSCallStatus.allCases {
      call.on(status) { _ in seen.withLock { $0.append(status) } }
    }
    return seen
  }

  private func makeCall(_ h: Harness, callee: String = "1002") throws -> FPWCSApi2Call {
    let options = FPWCSApi2CallOptions()
    options.callee = callee
    options.visibleName = "Alice"
    options.inviteParameters = ["X-Room": "12"]
    return try h.session.createCall(options)
  }

  private func push(
    _ h: Harness, _ name: String, _ id: String, _ status: String, info: String? = nil
  ) {
    var object: [String: JSONValue] = ["callId": .string(id), "status": .string(status)]
    if let info { object["info"] = .string(info) }
    h.push(name, [.object(object)])
  }

  func testOutgoingCallFollowsTheServerStatusesAndSendsTheOfferWithTheCallFields() throws {
    let h = try registeredHarness()
    let call = try makeCall(h)
    let seen = record(call)
    XCTAssertEqual(call.getStatus(), .fpwcsCallStatusNew)
    XCTAssertTrue(h.sent("call").isEmpty, "createCall sends nothing")
    try call.call()
    h.settle()
    let sent = try XCTUnwrap(h.sent("call").first)
    XCTAssertEqual(sent["callId"]?.stringValue, call.getId())
    XCTAssertEqual(sent["callee"]?.stringValue, "1002")
    XCTAssertEqual(sent["caller"]?.stringValue, "1001")
    XCTAssertEqual(sent["visibleName"]?.stringValue, "Alice")
    XCTAssertEqual(sent["incoming"]?.boolValue, false)
    XCTAssertEqual(sent["status"]?.stringValue, "PENDING")
    XCTAssertEqual(sent["hasAudio"]?.boolValue, true)
    XCTAssertEqual(sent["hasVideo"]?.boolValue, false)
    XCTAssertEqual(sent["inviteParameters"]?["X-Room"]?.stringValue, "12")
    XCTAssertTrue(sent["sdp"]?.stringValue?.contains("m=audio") ?? false)
    XCTAssertNil(sent["custom"], "optional fields are absent, not null")
    XCTAssertEqual(h.backend.requests.first?.direction, .publish)
    XCTAssertNil(h.backend.requests.first?.video, "audio-only by default")

    push(h, "notifyTryingResponse", call.getId(), "TRYING")
    h.push("setRemoteSDP", [.string(call.getId()), "v=0\r\nm=audio 9 RTP/SAVPF 111\r\n", true])
    push(h, "ring", call.getId(), "RING")
    push(h, "ring", call.getId(), "SESSION_PROGRESS")
    push(h, "talk", call.getId(), "ESTABLISHED")
    XCTAssertEqual(h.backend.connections.first?.answers.count, 1)
    try call.hold()
    h.settle()
    push(h, "hold", call.getId(), "HOLD")
    try call.unhold()
    h.settle()
    push(h, "talk", call.getId(), "ESTABLISHED")
    call.hangup()
    h.settle()
    XCTAssertEqual(h.sent("hangup").first?["callId"]?.stringValue, call.getId())
    XCTAssertTrue(h.backend.connections.first?.isClosed ?? false, "media stops at hangup")
    push(h, "finish", call.getId(), "FINISH", info: "Normal call clearing")
    XCTAssertEqual(
      seen.value,
      [
        .fpwcsCallStatusPending, .fpwcsCallStatusTrying, .fpwcsCallStatusRing,
        .fpwcsCallStatusSessionProgress, .fpwcsCallStatusEstablished, .fpwcsCallStatusHold,
        .fpwcsCallStatusEstablished, .fpwcsCallStatusFinish,
      ])
    XCTAssertEqual(call.getInfo(), "Normal call clearing")
    XCTAssertEqual(h.sentNames.filter { ["hold", "unhold"].contains($0) }, ["hold", "unhold"])
    XCTAssertNil(h.session.getCall(call.getId()), "an ended call is forgotten")
  }

  func testBusyAndFailedMessagesAreDispatchedOnStatusWhateverTheirName() throws {
    let h = try registeredHarness()
    let busy = try makeCall(h)
    let failed = try makeCall(h, callee: "1003")
    let busySeen = record(busy)
    let failedSeen = record(failed)
    try busy.call()
    try failed.call()
    h.settle()
    push(h, "finish", busy.getId(), "BUSY", info: "Busy Here")
    h.push(
      "fail",
      [
        [
          "apiMethod": "CallStatusEvent", "id": .string(failed.getId()), "status": "FAILED",
          "info": "Failed by request timeout",
        ]
      ])
    XCTAssertEqual(busySeen.value, [.fpwcsCallStatusPending, .fpwcsCallStatusBusy])
    XCTAssertEqual(failedSeen.value, [.fpwcsCallStatusPending, .fpwcsCallStatusFailed])
    XCTAssertEqual(failed.getInfo(), "Failed by request timeout")
    push(h, "talk", busy.getId(), "ESTABLISHED")
    XCTAssertEqual(busy.getStatus(), .fpwcsCallStatusBusy, "nothing after a terminal status")
  }

  func testIncomingCallKeepsTheEarlierOfferAndAnswersWithOwnLogin() throws {
    let h = try registeredHarness()
    let incoming = Locked<[FPWCSApi2Call]>([])
    h.session.onIncomingCallCallback { call in
      if let call { incoming.withLock { $0.append(call) } }
    }
    h.push("setRemoteSDP", ["c9", "v=0\r\nm=audio 9 RTP/AVP 0\r\n", false])
    h.push(
      "notifyIncomingCall",
      [
        [
          "callId": "c9", "incoming": true, "caller": "1002", "callee": "1001",
          "visibleName": "Bob", "status": "RING",
        ]
      ])
    let call = try XCTUnwrap(incoming.value.first)
    XCTAssertTrue(call.isIncoming())
    XCTAssertEqual(call.getCaller(), "1002")
    XCTAssertEqual(call.getVisibleName(), "Bob")
    XCTAssertEqual(call.getStatus(), .fpwcsCallStatusRing)
    XCTAssertTrue(h.session.getCall("c9") === call)
    XCTAssertTrue(h.session.getCallByUUID(call.getUuid()) === call)
    let seen = record(call)
    try call.answer()
    h.settle()
    let answer = try XCTUnwrap(h.sent("answer").first)
    XCTAssertEqual(answer["callId"]?.stringValue, "c9")
    XCTAssertEqual(answer["caller"]?.stringValue, "1001")
    XCTAssertEqual(answer["callee"]?.stringValue, "1001")
    XCTAssertEqual(answer["incoming"]?.boolValue, true)
    XCTAssertEqual(answer["hasVideo"]?.boolValue, true)
    h.push("setRemoteSDP", ["c9", "v=0\r\nm=audio 9 RTP/SAVPF 111\r\n", true])
    XCTAssertEqual(h.backend.connections.first?.answers.count, 1)
    push(h, "talk", "c9", "ESTABLISHED")
    push(h, "finish", "c9", "FINISH")
    XCTAssertEqual(
      seen.value, [.fpwcsCallStatusPending, .fpwcsCallStatusEstablished, .fpwcsCallStatusFinish])
  }

  func testIncomingCallSaysWhetherTheCallerOfferedVideo() throws {
    let h = try registeredHarness()
    let incoming = Locked<[FPWCSApi2Call]>([])
    h.session.onIncomingCallCallback { call in
      if let call { incoming.withLock { $0.append(call) } }
    }
    for (id, video) in [("v1", true), ("a1", false)] {
      h.push(
        "notifyIncomingCall",
        [
          [
            "callId": .string(id), "incoming": true, "caller": "1002", "callee": "1001",
            "status": "RING", "hasAudio": true, "hasVideo": .bool(video),
          ]
        ])
    }
    h.push(
      "notifyIncomingCall",
      [["callId": "old", "incoming": true, "caller": "1002", "callee": "1001", "status": "RING"]])
    let calls = incoming.value
    XCTAssertEqual(calls.map { $0.getId() }, ["v1", "a1", "old"])
    XCTAssertEqual(calls.map { $0.hasVideo() }, [true, false, false], "no field: audio only")
    XCTAssertEqual(calls.map { $0.getRemoteConstraints()?.video != nil }, [true, false, false])
    XCTAssertEqual(calls.map { $0.getRemoteConstraints()?.audio != nil }, [true, true, true])
    XCTAssertNil(calls[0].getLocalConstraints()?.video, "video is sent only when the app asks")
  }

  func testDTMFIsSentOnlyWhileEstablishedAndOnlyDialableDigits() throws {
    let h = try registeredHarness()
    let call = try makeCall(h)
    try call.call()
    h.settle()
    XCTAssertThrowsError(try call.sendDTMF("1", type: .fpwcsCallDTMFRFC2833)) { error in
      XCTAssertEqual(
        error as? WCSError, .invalidCallState(.fpwcsCallStatusPending, operation: "sendDTMF"))
    }
    push(h, "talk", call.getId(), "ESTABLISHED")
    try call.sendDTMF("12#a", type: .fpwcsCallDTMFRFC2833)
    try call.sendDTMF("5", type: .fpwcsCallDTMFInfo)
    XCTAssertThrowsError(try call.sendDTMF("1x", type: .fpwcsCallDTMFRFC2833))
    XCTAssertThrowsError(
      try call.sendDTMF(String(repeating: "1", count: 65), type: .fpwcsCallDTMFRFC2833))
    h.settle()
    let dtmf = h.sent("sendDtmf")
    XCTAssertEqual(dtmf.map { $0["dtmf"]?.stringValue }, ["12#A", "5"])
    XCTAssertEqual(dtmf.map { $0["type"]?.stringValue }, ["RFC2833", "INFO"])
  }

  func testARefusedRegistrationIsUnregisteredAndTheSessionStaysUsable() throws {
    let h = try registeredHarness()
    XCTAssertEqual(h.session.getStatus(), .fpwcsSessionStatusRegistered)
    h.push(
      "fail",
      [
        [
          "apiMethod": "RegistrationStatusEvent", "status": "AUTHENTICATION_FAIL",
          "info": "401 Unauthorized",
        ]
      ])
    h.settle()
    XCTAssertEqual(h.session.getStatus(), .fpwcsSessionStatusUnregistered)
    let call = try makeCall(h)
    XCTAssertNoThrow(try call.call(), "a call by URI needs no registration")
    h.push("registered", [["status": "REGISTERED"]])
    h.settle()
    XCTAssertEqual(h.session.getStatus(), .fpwcsSessionStatusRegistered)
  }

  func testDTMFFromTheFarEndReachesTheCallbackInOrderWhileEstablished() throws {
    let h = try registeredHarness()
    let call = try makeCall(h)
    let heard = Locked<[String]>([])
    call.onDTMF { from, digits, type in
      heard.withLock {
        $0.append("\(from === call ? "" : "?")\(digits):\(type == .fpwcsCallDTMFInfo ? "I" : "R")")
      }
    }
    try call.call()
    h.settle()
    h.push("notifyDtmf", [["callId": .string(call.getId()), "dtmf": "0", "type": "RFC2833"]])
    push(h, "talk", call.getId(), "ESTABLISHED")
    for (digit, type) in [("1", "RFC2833"), ("9", "RFC2833"), ("#", "INFO"), ("x", "RFC2833")] {
      h.push(
        "notifyDtmf",
        [["callId": .string(call.getId()), "dtmf": .string(digit), "type": .string(type)]])
    }
    h.push("notifyDtmf", [["callId": "other", "dtmf": "5", "type": "RFC2833"]])
    h.settle()
    XCTAssertEqual(heard.value, ["1:R", "9:R", "#:I"], "not before ESTABLISHED, digits only")
    XCTAssertEqual(call.getReceivedDTMF(), "19#")
  }

  func testTransferHoldsFirstAndFollowsTransferEvents() throws {
    let h = try registeredHarness()
    let call = try makeCall(h)
    try call.call()
    h.settle()
    push(h, "talk", call.getId(), "ESTABLISHED")
    try call.transfer("1004")
    h.settle()
    XCTAssertEqual(h.sent("hold").first?["holdForTransfer"]?.boolValue, true)
    XCTAssertEqual(h.sent("transfer").first?["target"]?.stringValue, "1004")
    h.push("notifyTransferEvent", [["callId": .string(call.getId()), "status": "COMPLETED"]])
    XCTAssertEqual(call.getTransferStatus(), "COMPLETED")
  }

  func testConnectThrowsTheReasonWhenTheCallFailsAndSessionEndFailsLiveCalls() async throws {
    let h = try registeredHarness()
    let call = try makeCall(h)
    let statuses = call.statusUpdates
    let task = Task { try await call.connect() }
    while h.sent("call").isEmpty {
      h.settle()
      try await Task.sleep(for: .milliseconds(5))
    }
    push(h, "finish", call.getId(), "FAILED", info: "Failed by request timeout")
    do {
      try await task.value
      XCTFail("connect() returned for a failed call")
    } catch let error as WCSError {
      XCTAssertEqual(error, .callEnded(.fpwcsCallStatusFailed, info: "Failed by request timeout"))
    }
    var collected: [kFPWCSCallStatus] = []
    for await status in statuses { collected.append(status) }
    XCTAssertEqual(collected, [.fpwcsCallStatusPending, .fpwcsCallStatusFailed])

    let live = try makeCall(h, callee: "1005")
    try live.call()
    h.settle()
    h.session.disconnect()
    h.settle()
    XCTAssertEqual(live.getStatus(), .fpwcsCallStatusFailed)
    XCTAssertEqual(live.getInfo(), "Session disconnected")
  }

  func testCallNeedsAnEstablishedSessionAndACallee() throws {
    let h = try Harness()
    let options = FPWCSApi2CallOptions()
    XCTAssertThrowsError(try h.session.createCall(options))
    options.callee = "1002"
    let call = try h.session.createCall(options)
    XCTAssertThrowsError(try call.call()) { error in
      XCTAssertEqual(
        error as? WCSError, .invalidSessionState(.fpwcsSessionStatusNew, operation: "call"))
    }
    call.hangup()
    h.settle()
    XCTAssertEqual(call.getStatus(), .fpwcsCallStatusFinish, "a call never sent ends locally")
    XCTAssertTrue(h.sent("hangup").isEmpty)
  }

  func testHangupBeforeTheServerAnswersStillSendsHangup() throws {
    let h = try registeredHarness()
    let call = try makeCall(h)
    try call.call()
    h.settle()
    call.hangup()
    h.settle()
    XCTAssertEqual(h.sent("hangup").count, 1, "unlike the Web SDK, PENDING calls are cancelled")
  }
}

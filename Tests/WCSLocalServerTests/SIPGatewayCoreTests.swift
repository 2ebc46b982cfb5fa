import WCSCodecs
import WCSTransport
import XCTest

@testable import WCSLocalServer

/// The gateway's signalling core against scripted SIP events (wcs-rooms-and-calls.md §B.10,
/// §B.11), and its Sans-I/O parts: RFC 4733 packets and the SIP leg's SDP.
final class SIPGatewayCoreTests: XCTestCase {
  private func harness(noAnswerMillis: Int64 = 30_000) -> ServerHarness {
    var configuration = WCSServerConfiguration()
    configuration.sipGatewayEnabled = true
    configuration.calls.noAnswerTimeoutMillis = noAnswerMillis
    let h = ServerHarness(configuration: configuration)
    h.open(1)
    h.receive(
      1, "connection",
      [
        "appKey": "defaultApp", "sipLogin": "1001", "sipAuthenticationName": "1001",
        "sipPassword": "secret", "sipDomain": "pbx.local", "sipOutboundProxy": "127.0.0.1",
        "sipPort": "5070", "sipRegisterRequired": true,
      ])
    _ = h.take(1)
    return h
  }

  private func call(_ h: ServerHarness, _ callId: String, callee: String = "1002") {
    h.receive(
      1, "call",
      [
        "callId": .string(callId), "callee": .string(callee), "caller": "1001",
        "sdp": "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=sendrecv\r\n", "visibleName": "Alice",
        "inviteParameters": ["X-Room": "12", "Bad Header": "x"],
      ])
  }

  private func statuses(_ messages: [WCSMessage]) -> [String] {
    messages.compactMap { message in
      message.argument?["status"]?.stringValue.map { "\(message.name):\($0)" }
    }
  }

  func testOutgoingCallMapsSIPResponsesToStatusesInOrder() throws {
    let h = harness()
    guard case .register(1, let account, 3600)? = h.sipCommands.first else {
      return XCTFail("no REGISTER: \(h.sipCommands)")
    }
    XCTAssertEqual(account.registrar, "sip:127.0.0.1:5070")
    XCTAssertEqual(account.addressOfRecord, "sip:1001@pbx.local")
    h.run(h.core.sipEvent(.registration(session: 1, code: 200, reason: "OK"), now: h.now))
    XCTAssertEqual(h.take(1).map(\.name), ["registered"])

    call(h, "c1")
    guard case .invite(let sip, 1, let uri, _, "Alice", let headers, _)? = h.sipCommands.last else {
      return XCTFail("no INVITE: \(h.sipCommands)")
    }
    XCTAssertEqual(uri, "sip:1002@127.0.0.1:5070")
    XCTAssertEqual(headers, ["X-Room": "12"], "a header name with a space is dropped")
    h.run(h.core.sipEvent(.progress(call: sip, code: 180, reason: "Ringing"), now: h.now))
    h.run(h.core.sipEvent(.progress(call: sip, code: 183, reason: "Progress"), now: h.now))
    h.run(h.core.sipEvent(.established(call: sip), now: h.now))
    h.receive(1, "hold", ["callId": "c1"])
    h.receive(1, "unhold", ["callId": "c1"])
    h.receive(1, "sendDtmf", ["callId": "c1", "type": "RFC2833", "dtmf": "12#"])
    h.receive(1, "sendDtmf", ["callId": "c1", "type": "INFO", "dtmf": "5x"])
    h.receive(1, "transfer", ["callId": "c1", "target": "1004"])
    XCTAssertEqual(h.sipCommands.last, .refer(call: sip, uri: "sip:1004@127.0.0.1:5070"))
    h.run(h.core.sipEvent(.transfer(call: sip, code: 202), now: h.now))
    h.run(h.core.sipEvent(.transfer(call: sip, code: 200), now: h.now))
    h.receive(1, "hangup", ["callId": "c1"])
    let messages = h.take(1)
    XCTAssertEqual(
      statuses(messages),
      [
        "notifyTryingResponse:TRYING", "ring:RING", "ring:SESSION_PROGRESS", "talk:ESTABLISHED",
        "hold:HOLD", "talk:ESTABLISHED", "notifyTransferEvent:ACCEPTED",
        "notifyTransferEvent:COMPLETED", "finish:FINISH",
      ])
    XCTAssertEqual(messages.first { $0.name == "setRemoteSDP" }?[0]?.stringValue, "c1")
    XCTAssertTrue(h.sipCommands.contains(.hold(call: sip, on: true)))
    XCTAssertTrue(h.sipCommands.contains(.hold(call: sip, on: false)))
    XCTAssertTrue(h.sipCommands.contains(.dtmf(call: sip, digits: "12#", info: false)))
    XCTAssertFalse(
      h.sipCommands.contains { if case .dtmf(_, "5X", _) = $0 { true } else { false } },
      "a non-DTMF character refuses the request")
    XCTAssertEqual(h.sipCommands.last, .hangup(call: sip, code: 0, reason: "Busy Here"))
    XCTAssertFalse(h.engine.live.contains("c1"), "the WebRTC leg is released")
  }

  func testBusyFailureTimeoutAndBYEEndTheCallWithTheirReasons() throws {
    let h = harness(noAnswerMillis: 5000)
    var ended: [String] = []
    for (index, event) in [
      SIPGatewayEvent.closed(call: 0, code: 486, reason: "Busy Here"),
      .closed(call: 0, code: 404, reason: "Not Found"),
      .closed(call: 0, code: 0, reason: "Connection refused"),
      .closed(call: 0, code: 0, reason: "BYE"),
    ].enumerated() {
      let id = "c\(index)"
      call(h, id)
      guard case .invite(let sip, _, _, _, _, _, _)? = h.sipCommands.last else { return XCTFail() }
      if index == 3 { h.run(h.core.sipEvent(.established(call: sip), now: h.now)) }
      var event = event
      if case .closed(_, let code, let reason) = event {
        event = .closed(call: sip, code: code, reason: reason)
      }
      h.run(h.core.sipEvent(event, now: h.now))
      let finish = try XCTUnwrap(h.take(1).last { $0.name == "finish" }?.argument)
      ended.append(
        "\(finish["status"]?.stringValue ?? ""):\(finish["info"]?.stringValue ?? "")")
    }
    XCTAssertEqual(
      ended,
      [
        "BUSY:Busy Here", "FAILED:404 Not Found", "FAILED:Failed by error: Connection refused",
        "FINISH:Normal call clearing",
      ])
    call(h, "late")
    guard case .invite(let sip, _, _, _, _, _, _)? = h.sipCommands.last else { return XCTFail() }
    h.advance(to: h.now + 5001)
    XCTAssertEqual(
      h.take(1).last { $0.name == "finish" }?.argument?["info"]?.stringValue,
      "Failed by request timeout")
    XCTAssertEqual(h.sipCommands.last, .hangup(call: sip, code: 0, reason: ""))
  }

  func testIncomingInviteReachesTheSessionOfItsUserAndUnknownUsersGet404() throws {
    let h = harness()
    h.run(
      h.core.sipEvent(
        .incoming(call: 0x8000_0001, user: "1001", from: "sip:1002@127.0.0.1", displayName: "Bob"),
        now: h.now))
    let notify = try XCTUnwrap(h.take(1).first)
    XCTAssertEqual(notify.name, "notifyIncomingCall")
    XCTAssertEqual(notify.argument?["caller"]?.stringValue, "1002")
    XCTAssertEqual(notify.argument?["visibleName"]?.stringValue, "Bob")
    let callId = try XCTUnwrap(notify.argument?["callId"]?.stringValue)
    h.receive(
      1, "answer", ["callId": .string(callId), "sdp": "v=0\r\nm=audio 9 RTP/SAVPF 111\r\n"])
    XCTAssertEqual(h.sipCommands.last, .answer(call: 0x8000_0001, video: false))
    h.run(h.core.sipEvent(.established(call: 0x8000_0001), now: h.now))
    XCTAssertEqual(statuses(h.take(1)).last, "talk:ESTABLISHED")

    h.run(
      h.core.sipEvent(
        .incoming(call: 0x8000_0002, user: "9999", from: "sip:x@127.0.0.1", displayName: ""),
        now: h.now))
    XCTAssertEqual(h.sipCommands.last, .hangup(call: 0x8000_0002, code: 404, reason: "Not Found"))
  }

  func testAnswerWithVideoTakesTheOfferedVideoAndAnAudioAnswerRefusesIt() throws {
    let h = harness()
    for (sip, video) in [(UInt32(0x8000_0005), true), (0x8000_0006, false)] {
      h.run(
        h.core.sipEvent(
          .incoming(call: sip, user: "1001", from: "sip:b@127.0.0.1", displayName: ""),
          now: h.now))
      let notify = h.take(1).first { $0.name == "notifyIncomingCall" }
      let callId = try XCTUnwrap(notify?.argument?["callId"]?.stringValue)
      let sdp =
        "v=0\r\nm=audio 9 RTP/SAVPF 111\r\n" + (video ? "m=video 9 RTP/SAVPF 96\r\n" : "")
      h.receive(1, "answer", ["callId": .string(callId), "sdp": .string(sdp)])
      XCTAssertEqual(h.sipCommands.last, .answer(call: sip, video: video))
    }
    let offer =
      "v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio 4000 RTP/AVP 0\r\n"
      + "m=video 4002 RTP/AVP 100 96\r\na=rtpmap:100 VP8/90000\r\n"
    XCTAssertEqual(SIPVideoDescription.offeredFormats(offer), "100 96")
    XCTAssertEqual(SIPVideoDescription.parse(offer)?.payloadType, 100)
    XCTAssertNil(SIPVideoDescription.offeredFormats("v=0\r\nm=audio 4000 RTP/AVP 0\r\n"))
    // RFC 3264 §6: the refused stream keeps its formats, on port 0.
    XCTAssertEqual(
      SIPVideoDescription.refusedSection(formats: "100 96"), ["m=video 0 RTP/AVP 100 96"])
  }

  func testIncomingCallNotificationSaysWhetherTheCallerOfferedVideo() throws {
    let h = harness()
    for (sip, video) in [(UInt32(0x8000_0007), true), (0x8000_0008, false)] {
      h.run(
        h.core.sipEvent(
          .incoming(
            call: sip, user: "1001", from: "sip:b@127.0.0.1", displayName: "", video: video),
          now: h.now))
      let notify = try XCTUnwrap(h.take(1).first { $0.name == "notifyIncomingCall" })
      XCTAssertEqual(notify.argument?["hasVideo"]?.boolValue, video)
      XCTAssertEqual(notify.argument?["hasAudio"]?.boolValue, true)
    }
  }

  func testAnswerToAVideoFirstOfferListsVideoBeforeAudio() throws {
    let offer =
      "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
      + "m=video 4002 RTP/AVP 96\r\nc=IN IP4 127.0.0.2\r\na=rtpmap:96 VP8/90000\r\n"
      + "a=sendonly\r\nm=audio 4000 RTP/AVP 0\r\na=sendrecv\r\n"
    XCTAssertTrue(SIPVideoDescription.videoFirst(offer))
    XCTAssertFalse(SIPVideoDescription.videoFirst("v=0\r\nm=audio 4000 RTP/AVP 0\r\n"))
    // The video section's own address and direction are not the session's.
    let audio = try SIPMediaDescription.parse(offer)
    XCTAssertEqual(audio.address, "127.0.0.1")
    XCTAssertEqual(audio.port, 4000)
    XCTAssertFalse(audio.holding)
    let video = try XCTUnwrap(SIPVideoDescription.parse(offer))
    XCTAssertEqual(video.address, "127.0.0.2")
    XCTAssertTrue(video.holding)

    let audioSDP = SIPMediaDescription.localSDP(
      address: "127.0.0.1", port: 5000, sessionId: 9, version: 1, answering: audio,
      direction: "sendrecv")
    let videoSection = SIPVideoDescription.localSection(
      port: 5002, answering: video, direction: "sendrecv")
    func mLines(_ sdp: String) -> [String] {
      sdp.components(separatedBy: "\r\n").filter { $0.hasPrefix("m=") }
    }
    // RFC 3264 §6: the answer's m-lines in the offer's order.
    let answer = SIPVideoDescription.sessionDescription(
      audio: audioSDP, video: videoSection, videoFirst: true)
    XCTAssertEqual(mLines(answer), ["m=video 5002 RTP/AVP 96", "m=audio 5000 RTP/AVP 0"])
    let lines = answer.components(separatedBy: "\r\n")
    XCTAssertEqual(
      Array(lines.prefix(5)).map { String($0.prefix(2)) }, ["v=", "o=", "s=", "c=", "t="])
    let audioLine = try XCTUnwrap(lines.firstIndex(of: "m=audio 5000 RTP/AVP 0"))
    XCTAssertGreaterThan(try XCTUnwrap(lines.firstIndex(of: "a=rtpmap:0 PCMU/8000")), audioLine)
    let vp8 = try XCTUnwrap(lines.firstIndex(of: "a=rtpmap:96 VP8/90000"))
    XCTAssertLessThan(vp8, audioLine, "the video attributes stay in the video section")
    XCTAssertTrue(answer.hasSuffix("a=sendrecv\r\n"))
    XCTAssertEqual(
      answer.utf8.count, audioSDP.utf8.count + videoSection.map { $0.utf8.count + 2 }.reduce(0, +),
      "nothing lost or added")
    let refused = SIPVideoDescription.sessionDescription(
      audio: audioSDP, video: SIPVideoDescription.refusedSection(formats: "96"), videoFirst: true)
    XCTAssertEqual(mLines(refused), ["m=video 0 RTP/AVP 96", "m=audio 5000 RTP/AVP 0"])
    let audioFirst = SIPVideoDescription.sessionDescription(
      audio: audioSDP, video: videoSection, videoFirst: false)
    XCTAssertEqual(mLines(audioFirst), ["m=audio 5000 RTP/AVP 0", "m=video 5002 RTP/AVP 96"])
    XCTAssertEqual(
      SIPVideoDescription.sessionDescription(audio: audioSDP, video: [], videoFirst: true),
      audioSDP)
  }

  func testMalformedSIPSideSDPFailsTheCallAndFiftyCallsLeaveNothingBehind() throws {
    let h = harness()
    call(h, "bad")
    guard case .invite(let sip, _, _, _, _, _, _)? = h.sipCommands.last else { return XCTFail() }
    h.run(h.core.sipEvent(.mediaFailed(call: sip, reason: "SDP has no c= address"), now: h.now))
    XCTAssertEqual(
      h.take(1).last?.argument?["info"]?.stringValue, "Failed by error: SDP has no c= address")
    for index in 0..<50 {
      call(h, "loop\(index)")
      h.receive(1, "hangup", ["callId": .string("loop\(index)")])
    }
    XCTAssertTrue(h.core.calls.calls.isEmpty)
    XCTAssertTrue(h.core.calls.bySIPCall.isEmpty)
    XCTAssertTrue(h.engine.live.isEmpty, "every WebRTC leg released")
    h.close(1)
    XCTAssertTrue(h.core.calls.accounts.isEmpty)
    XCTAssertEqual(h.sipCommands.last, .unregister(session: 1))
  }

  func testGatewayOffAndBadRequestsAreRefusedWithAReason() {
    let h = ServerHarness()
    h.connect(1)
    h.receive(1, "call", ["callId": "c1", "callee": "1002", "sdp": "v=0\r\n"])
    XCTAssertEqual(
      h.take(1).last?.argument?["info"]?.stringValue, "Failed by error: the SIP gateway is off")
    let on = harness()
    on.receive(1, "call", ["callId": "c2", "callee": "", "sdp": "v=0\r\n"])
    XCTAssertEqual(on.take(1).last?.argument?["status"]?.stringValue, "FAILED")
    on.receive(1, "call", ["callee": "1002"])
    XCTAssertEqual(on.take(1).last?.name, "fail")
    XCTAssertEqual(on.sipCommands.count, 1, "only the REGISTER")
  }

  // MARK: RFC 4733 and SDP

  func testTelephoneEventsHaveOneTimestampPerDigitAMarkerAndThreeEndPackets() {
    var encoder = TelephoneEventEncoder(payloadType: 101)
    encoder.toneMillis = 100
    encoder.packetMillis = 20
    let result = encoder.packets(for: "1#x", ssrc: 0x0102_0304, sequence: 65534, timestamp: 1000)
    let packets = result.packets
    XCTAssertEqual(packets.count, 2 * (4 + 3), "4 updates and 3 end packets per digit, x skipped")
    let first = packets[0].bytes
    XCTAssertEqual(first[1], 0x80 | 101, "marker on the event's first packet")
    XCTAssertEqual(first[12], 1)
    XCTAssertEqual(Array(first[8..<12]), [1, 2, 3, 4])
    let durations = packets[0..<7].map { Int($0.bytes[14]) << 8 | Int($0.bytes[15]) }
    XCTAssertEqual(durations, [160, 320, 480, 640, 800, 800, 800])
    XCTAssertEqual(
      packets[0..<7].map { $0.bytes[13] & 0x80 != 0 },
      [false, false, false, false, true, true, true])
    XCTAssertEqual(Set(packets[0..<7].map { Array($0.bytes[4..<8]) }).count, 1)
    XCTAssertEqual(packets[7].bytes[12], 11, "# is event 11")
    XCTAssertEqual(packets[7].bytes[1], 0x80 | 101)
    let secondTimestamp = packets[7].bytes[4..<8].reduce(0) { $0 << 8 | UInt32($1) }
    XCTAssertEqual(secondTimestamp, 1000 + 160 * 8)
    XCTAssertEqual(UInt16(packets[2].bytes[2]) << 8 | UInt16(packets[2].bytes[3]), 0, "wraps")
    XCTAssertEqual(result.nextSequence, 65534 &+ 14)
    XCTAssertEqual(TelephoneEventEncoder.eventCode("D"), 15)
    XCTAssertNil(TelephoneEventEncoder.eventCode("E"))
  }

  func testSIPLegSDPIsParsedAndMalformedOnesAreRefused() throws {
    let baresip =
      "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
      + "m=audio 30006 RTP/AVP 0 101\r\na=rtpmap:0 PCMU/8000\r\n"
      + "a=rtpmap:101 telephone-event/8000\r\na=sendrecv\r\n"
    let parsed = try SIPMediaDescription.parse(baresip)
    XCTAssertEqual(parsed.address, "127.0.0.1")
    XCTAssertEqual(parsed.port, 30006)
    XCTAssertEqual(parsed.codec, .pcmu)
    XCTAssertEqual(parsed.telephoneEvent, 101)
    XCTAssertFalse(parsed.holding)
    let cases: [(String, SIPMediaDescription.ParseError)] = [
      ("v=0\r\nc=IN IP4 127.0.0.1\r\n", .noAudio),
      ("v=0\r\nm=audio 4000 RTP/AVP 0\r\n", .noAddress),
      ("v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio 0 RTP/AVP 0\r\n", .badPort("0")),
      (
        "v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio 4000 RTP/AVP 18\r\na=rtpmap:18 G729/8000\r\n",
        .noCommonCodec
      ),
    ]
    for (sdp, expected) in cases {
      XCTAssertThrowsError(try SIPMediaDescription.parse(sdp)) { error in
        XCTAssertEqual(error as? SIPMediaDescription.ParseError, expected)
      }
    }
    let answer = SIPMediaDescription.localSDP(
      address: "127.0.0.1", port: 4000, sessionId: 7, version: 2, answering: parsed,
      direction: "sendonly")
    XCTAssertTrue(answer.contains("m=audio 4000 RTP/AVP 0 101\r\n"))
    XCTAssertTrue(answer.contains("a=sendonly\r\n"))
    XCTAssertFalse(answer.contains("PCMA"))
    XCTAssertEqual(G711.linear(muLaw: 0xff), 0)
    XCTAssertEqual(G711.linear(muLaw: 0x00), -32124)
    XCTAssertEqual(G711.linear(aLaw: 0xd5), 8)
  }

  func testSIPLegOffersOpusFirstAndAnOpusAnswerIsPassedThrough() throws {
    let offer = SIPMediaDescription.localSDP(
      address: "127.0.0.1", port: 4000, sessionId: 7, version: 2, answering: nil,
      direction: "sendrecv")
    XCTAssertTrue(offer.contains("m=audio 4000 RTP/AVP 111 0 8 101\r\n"), offer)
    XCTAssertTrue(offer.contains("a=rtpmap:111 opus/48000/2\r\n"))
    let answer = try SIPMediaDescription.parse(
      "v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio 5000 RTP/AVP 98 101\r\n"
        + "a=rtpmap:98 opus/48000/2\r\na=rtpmap:101 telephone-event/8000\r\n")
    XCTAssertEqual(answer.codec, .opus)
    XCTAssertEqual(answer.payloadType, 98)
    XCTAssertEqual(answer.bridgeCodec, .opus(98))
    XCTAssertEqual(answer.telephoneEvent, 101)
    let reply = SIPMediaDescription.localSDP(
      address: "127.0.0.1", port: 4000, sessionId: 7, version: 3, answering: answer,
      direction: "sendrecv")
    XCTAssertTrue(reply.contains("m=audio 4000 RTP/AVP 98 101\r\n"), reply)
    XCTAssertFalse(reply.contains("PCMU"))
    XCTAssertThrowsError(
      try SIPMediaDescription.parse(
        "v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio 5000 RTP/AVP 8\r\na=rtpmap:8 opus/48000/2\r\n"),
      "Opus on a static payload type is not Opus")
  }
}

import Foundation
import WCSTransport
import XCTest

@testable import WCSApi2

/// Mute, data, availability, stream events, stats, async API and status streams.
final class FeatureTests: XCTestCase {
  func testMuteIsLocalTrackStatePlusStreamEvent() throws {
    let h = try Harness()
    h.establish()
    let (stream, _) = try h.makeStream("s")
    stream.muteAudio()
    XCTAssertTrue(stream.isAudioMuted())
    try stream.publish()
    h.settle()
    let connection = try XCTUnwrap(h.backend.connections.first)
    XCTAssertEqual(
      connection.state.withLock { $0.trackEnabled["audio"] }, false, "initial mute applies")
    h.answer(stream)
    h.streamStatus(stream, "PUBLISHING")
    XCTAssertEqual(h.sent("sendStreamEvent").map { $0["type"] }, ["audioMuted"])
    stream.muteVideo()
    stream.unmuteAudio()
    h.settle()
    XCTAssertEqual(
      h.sent("sendStreamEvent").map { $0["type"] }, ["audioMuted", "videoMuted", "audioUnmuted"])
    XCTAssertEqual(
      h.sent("sendStreamEvent").map { $0["mediaSessionId"]?.stringValue },
      Array(repeating: stream.getStreamID(), count: 3))
    XCTAssertNil(h.sent("sendStreamEvent")[0]["payload"])
    XCTAssertEqual(connection.state.withLock { $0.trackEnabled }, ["audio": true, "video": false])
    XCTAssertFalse(stream.isAudioMuted())
    XCTAssertTrue(stream.isVideoMuted())
  }

  func testStreamSendDataOnlyWhilePublishing() throws {
    let h = try Harness()
    h.establish()
    let (stream, _) = try h.makeStream("s")
    XCTAssertThrowsError(try stream.sendDataChecked(["a": 1])) { error in
      XCTAssertEqual(
        error as? WCSError, .invalidStreamState(.fpwcsStreamStatusNew, operation: "send data"))
    }
    try stream.publish()
    h.settle()
    h.answer(stream)
    h.streamStatus(stream, "PUBLISHING")
    WCSStream(stream).sendData(["text": "hello", "n": 2, "ok": true, "list": [1, "x"]])
    h.settle()
    let event = try XCTUnwrap(h.sent("sendStreamEvent").first)
    XCTAssertEqual(event["type"], "data")
    XCTAssertEqual(event["payload"], ["text": "hello", "n": 2, "ok": true, "list": [1, "x"]])
  }

  func testStreamEventsReachOnStreamEvent() throws {
    let h = try Harness()
    h.establish()
    let (player, recorder) = try h.makeStream("s")
    let events = Locked<[String]>([])
    let payloads = Locked<[JSONValue?]>([])
    player.onStreamEvent { event in
      events.withLock { $0.append(event?.type ?? "nil") }
      payloads.withLock { $0.append(event?.payloadJSON) }
    }
    try player.play()
    h.settle()
    h.answer(player)
    h.streamStatus(player, "PLAYING")
    let id = JSONValue.string(player.getStreamID())
    h.push("notifyStreamEvent", [["mediaSessionId": id, "type": "videoMuted"]])
    h.push("notifyStreamEvent", [["mediaSessionId": id, "type": "data", "payload": ["msg": "hi"]]])
    h.push(
      "notifyStreamEvent",
      [["mediaSessionId": id, "type": "notEnoughBandwidth", "payload": ["info": "900000/600000"]]])
    XCTAssertEqual(events.value, ["videoMuted", "data", "notEnoughBandwidth"])
    XCTAssertEqual(payloads.value[1], ["msg": "hi"])
    XCTAssertEqual(player.getVideoState()?.muted, true)
    XCTAssertEqual(player.getRemoteBitrate(), 900_000)
    XCTAssertEqual(player.getNetworkBandwidth(), 600_000)
    XCTAssertEqual(
      recorder.all,
      [.fpwcsStreamStatusPending, .fpwcsStreamStatusPlaying, .fpwcsStreamStatusNotEnoughBandwidth])
    XCTAssertEqual(
      player.getStatus(), .fpwcsStreamStatusPlaying, "event-like statuses do not change the status")
    XCTAssertEqual(
      FPWCSApi2StreamEvent(type: "data", payload: ["k": 1], mediaSessionId: "x").payload?["k"]
        as? Int, 1)
  }

  func testAvailableAcceptsStringStatus() throws {
    let h = try Harness()
    h.establish()
    let (stream, _) = try h.makeStream("maybe")
    let answers = Locked<[String]>([])
    stream.available { available, info in
      answers.withLock { $0.append("\(available) \(info ?? "-")") }
    }
    stream.available { available, info in
      answers.withLock { $0.append("\(available) \(info ?? "-")") }
    }
    h.settle()
    let checks = h.sent("availableStream")
    XCTAssertEqual(checks.count, 2)
    XCTAssertEqual(checks[0]["name"], "maybe")
    XCTAssertNotEqual(checks[0]["mediaSessionId"], checks[1]["mediaSessionId"])
    XCTAssertNotEqual(
      checks[0]["mediaSessionId"]?.stringValue, stream.getStreamID(), "a fresh id per check")
    h.push(
      "availableStream",
      [["status": "false", "info": "Restricted access", "id": checks[0]["mediaSessionId"] ?? nil]])
    h.push("availableStream", [["status": true, "id": checks[1]["mediaSessionId"] ?? nil]])
    XCTAssertEqual(answers.value, ["false Restricted access", "true -"])
  }

  func testSessionSendDataResolvedByDataStatusEvent() async throws {
    let h = try Harness()
    h.establish()
    h.transport.onSend { [transport = h.transport] text in
      guard let message = try? WCSMessageCodec.decode(text), message.name == "sendData",
        let id = message.argument?["operationId"]
      else { return }
      let accepted = message.argument?["payload"]?["ok"] == true
      transport.push(
        WCSMessage(
          name: "DataStatusEvent",
          data: [
            [
              "operationId": id, "status": accepted ? "ACCEPTED" : "FAILED",
              "info": accepted ? nil : "Bad request",
            ]
          ]))
    }
    let data = try await h.session.sendData(["ok": true])
    XCTAssertEqual(data.status, "ACCEPTED")
    do {
      _ = try await h.session.sendData(["ok": false])
      XCTFail("must throw")
    } catch let error as WCSError {
      XCTAssertEqual(error, .dataRejected(info: "Bad request"))
    }
    let handled = expectation(description: "handler")
    let handler = FPWCSApi2DataHandler()
    handler.onAccepted = { session, data in
      XCTAssertNotNil(session)
      XCTAssertEqual(data?.status, "ACCEPTED")
      handled.fulfill()
    }
    h.session.sendData(["ok": true], handler: handler)
    await fulfillment(of: [handled], timeout: 5)
    XCTAssertEqual(h.sent("sendData").count, 3)
    XCTAssertEqual(h.sent("sendData")[0]["payload"], ["ok": true])
  }

  func testAsyncConnectPublishPlayAndStatusStreams() async throws {
    let h = try Harness()
    let sessionUpdates = h.session.statusUpdates
    h.transport.onSend { [transport = h.transport] text in
      guard let message = try? WCSMessageCodec.decode(text) else { return }
      let id = message.argument?["mediaSessionId"] ?? nil
      switch message.name {
      case "connection":
        transport.push(
          WCSMessage(name: "getUserData", data: [["status": "ESTABLISHED", "authToken": "t"]]))
      case "publishStream", "playStream":
        transport.push(
          WCSMessage(name: "setRemoteSDP", data: [id, "v=0\r\nm=audio 1 RTP/SAVPF 111\r\n", true]))
        let status: JSONValue = message.name == "publishStream" ? "PUBLISHING" : "PLAYING"
        transport.push(
          WCSMessage(
            name: "notifyStreamStatusEvent", data: [["mediaSessionId": id, "status": status]]))
      default: break
      }
    }
    let session = WCSSession(session: h.session)
    try await session.connect()
    XCTAssertEqual(session.getStatus(), .fpwcsSessionStatusEstablished)
    let options = FPWCSApi2StreamOptions()
    options.name = "a"
    let publisher = try session.createStream(options)
    let publisherUpdates = publisher.statusUpdates
    try await publisher.publish()
    XCTAssertEqual(publisher.getStatus(), .fpwcsStreamStatusPublishing)
    let player = try session.createStream(options)
    try await player.play()
    XCTAssertEqual(player.getStatus(), .fpwcsStreamStatusPlaying)
    session.disconnect()
    var seen: [kFPWCSSessionStatus] = []
    for await status in sessionUpdates {
      seen.append(status)
      if status == .fpwcsSessionStatusDisconnected { break }
    }
    XCTAssertEqual(
      seen,
      [.fpwcsSessionStatusPending, .fpwcsSessionStatusEstablished, .fpwcsSessionStatusDisconnected])
    var streamSeen: [kFPWCSStreamStatus] = []
    for await status in publisherUpdates { streamSeen.append(status) }
    XCTAssertEqual(streamSeen, [.fpwcsStreamStatusPublishing, .fpwcsStreamStatusFailed])
  }

  func testStatsAndSwitchCameraGoToTheConnection() throws {
    let h = try Harness()
    h.establish()
    let (stream, _) = try h.makeStream("s")
    XCTAssertThrowsError(try stream.trySwitchCamera())
    try stream.publish()
    h.settle()
    stream.switchCamera()
    XCTAssertEqual(h.backend.connections[0].state.withLock { $0.switchedCamera }, 1)
    let got = expectation(description: "stats")
    stream.getStats { stats in
      XCTAssertEqual(stats?.currentVideoBitrate, 812_344)
      XCTAssertEqual(stats?.availableOutgoingBitrate, 2_000_000)
      XCTAssertNil(stats?.detailed, "only the native engine has detailed counters")
      got.fulfill()
    }
    wait(for: [got], timeout: 5)
    XCTAssertThrowsError(try stream.setLoudspeakerStatus(true))
  }

  func testFacadeUsesTheMediaBackend() throws {
    let backend = FakeMediaBackend()
    WCSApi2Environment.mediaBackendFactory = { backend }
    defer { WCSApi2Environment.reset() }
    let list = try XCTUnwrap(WCSApi2.getMediaDevices())
    XCTAssertEqual(list.audio.map(\.label), ["Tone microphone"])
    XCTAssertEqual(list.video.map(\.deviceID), ["virtual:pattern", "/dev/video0"])
    XCTAssertEqual(list.video[0].type, "video")
    let display = VideoFrameCallbackRenderer { _ in }
    try WCSApi2.getMediaAccess(FPWCSApi2MediaConstraints(audio: true, video: true), display)
    XCTAssertTrue(WCSApi2.releaseLocalMedia(display: display))
    XCTAssertEqual(FPWCSApi2.getSupportedVideoResolutions(), ["640x480", "1280x720"])
    FPWCSApi2.getAudioManager().useAudioModule(true)
    FPWCSApi2.getAudioManager().getAudioModule().deliverRecordedData(
      AudioFrame(sampleRate: 48000, channels: 1, samples: [1, 2]))
    FPWCSApi2.getAudioManager().muteAudio()
    XCTAssertEqual(backend.state.withLock { $0.deliveredAudio.count }, 1)
    XCTAssertTrue(backend.state.withLock { $0.externalAudio && $0.playoutMuted })
  }

  func testUnavailableBackendExplainsItself() {
    WCSApi2Environment.mediaBackendFactory = { UnavailableMediaBackend() }
    defer { WCSApi2Environment.reset() }
    XCTAssertThrowsError(
      try FPWCSApi2.getMediaAccess(
        FPWCSApi2MediaConstraints(audio: true, video: false), display: nil)
    ) { error in
      XCTAssertTrue("\(error)".contains("no media engine installed"), "\(error)")
    }
  }

  func testDefaultBackendIsTheNativeEngine() {
    WCSApi2Environment.reset()
    let backend = WCSApi2Environment.sharedMediaBackend
    XCTAssertEqual(String(describing: type(of: backend)), "NativeMediaBackend")
    // Real cameras and microphones of the machine follow the virtual devices.
    XCTAssertEqual(
      Array(backend.devices().map(\.id).prefix(2)), ["virtual:camera", "virtual:microphone"])
  }
}

/// Smaller behaviours of the faithful API.
final class SessionDetailTests: XCTestCase {
  func testConnectWithHeadersReachesTheTransport() throws {
    let h = try Harness()
    h.session.connect(withHeaders: ["Authorization": "Basic dXNlcjpwYXNz"])
    h.settle()
    XCTAssertEqual(h.transport.connectOptions?.headers["Authorization"], "Basic dXNlcjpwYXNz")
  }

  func testLegacyResizeStatusFiresWithoutChangingStatus() throws {
    let h = try Harness()
    h.establish()
    let (player, recorder) = try h.makeStream("r")
    try player.play()
    h.settle()
    h.streamStatus(player, "PLAYING")
    h.streamStatus(
      player, "RESIZE", extra: ["streamerVideoWidth": 1280, "streamerVideoHeight": 720])
    h.streamStatus(player, "NOT_ENOUGH_BANDWIDTH", info: "700000/500000")
    XCTAssertEqual(
      recorder.all,
      [
        .fpwcsStreamStatusPending, .fpwcsStreamStatusPlaying, .fpwcsStreamStatusResize,
        .fpwcsStreamStatusNotEnoughtBandwidth,
      ])
    XCTAssertEqual(player.getStatus(), .fpwcsStreamStatusPlaying)
    XCTAssertEqual(player.getNetworkBandwidth(), 500_000)
  }

  func testSendDataBeforeEstablishedIsRejected() throws {
    let h = try Harness()
    let rejected = expectation(description: "rejected")
    let handler = FPWCSApi2DataHandler()
    handler.onRejected = { _, data in
      XCTAssertEqual(data?.status, "FAILED")
      XCTAssertEqual(data?.info, "cannot send data: session is NEW")
      rejected.fulfill()
    }
    h.session.sendData(["a": 1], handler: handler)
    wait(for: [rejected], timeout: 5)
    XCTAssertTrue(h.transport.sentTexts.isEmpty)
  }

  func testPendingDataIsRejectedWhenTheSessionEnds() throws {
    let h = try Harness()
    h.establish()
    let rejected = expectation(description: "rejected")
    let handler = FPWCSApi2DataHandler()
    handler.onRejected = { _, data in
      XCTAssertEqual(data?.info, "session ended")
      rejected.fulfill()
    }
    h.session.sendData(["a": 1], handler: handler)
    h.settle()
    h.session.disconnect()
    wait(for: [rejected], timeout: 5)
  }

  func testOnReplacesTheEarlierCallbackAndAppDataArrives() throws {
    let h = try Harness()
    let calls = Locked<[String]>([])
    h.session.on(.fpwcsSessionStatusEstablished) { _ in calls.withLock { $0.append("first") } }
    h.session.on(.fpwcsSessionStatusEstablished) { _ in calls.withLock { $0.append("second") } }
    h.session.onAppDataCallback { _, data in
      calls.withLock { $0.append("data \(data?.payload?["x"] as? Int ?? -1)") }
    }
    h.establish()
    h.push("OnDataEvent", [["operationId": "op", "payload": ["x": 7]]])
    XCTAssertEqual(calls.value, ["second", "data 7"])
  }
}

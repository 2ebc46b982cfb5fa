import Foundation
import WCSTransport
import XCTest

@testable import WCSApi2

/// The example transcript of wcs-protocol.md §8, message by message.
final class TranscriptTests: XCTestCase {
  func testTranscriptConnectPublishPlayStopDisconnect() throws {
    let h = try Harness { options in
      options.appKey = nil
      options.custom = ["user": "alice"]
    }
    XCTAssertEqual(h.session.getStatus(), .fpwcsSessionStatusNew)

    // connection
    h.session.connect()
    h.settle()
    XCTAssertEqual(h.transport.connectedURL, "ws://192.168.10.5:8080/")
    XCTAssertEqual(h.sentNames, ["connection"])
    let connection = try XCTUnwrap(h.sent("connection").first)
    XCTAssertEqual(connection["appKey"], "defaultApp")
    XCTAssertEqual(connection["mediaProviders"], ["WebRTC"])
    XCTAssertEqual(connection["clientVersion"], "2.0")
    XCTAssertNotNil(connection["clientOSVersion"]?.stringValue)
    XCTAssertEqual(connection["clientBrowserVersion"], "FPWCSLinux/0.1")
    XCTAssertEqual(connection["custom"], ["user": "alice"])
    XCTAssertNil(connection["keepAlive"], "keepAlive is sent only when set")
    XCTAssertNil(connection["authToken"])
    XCTAssertEqual(h.session.getStatus(), .fpwcsSessionStatusPending)

    // getUserData → ESTABLISHED; getVersion stored; ping → pong
    h.push(
      "getUserData",
      [
        [
          "appKey": "defaultApp", "mediaProviders": ["WebRTC"], "custom": ["user": "alice"],
          "useWsTunnel": false, "authToken": "/192.168.10.20:53122/192.168.10.5:8080",
          "status": "ESTABLISHED",
        ]
      ])
    XCTAssertEqual(h.session.getStatus(), .fpwcsSessionStatusEstablished)
    XCTAssertEqual(h.session.getAuthToken(), "/192.168.10.20:53122/192.168.10.5:8080")
    h.push("getVersion", ["5.2.1780-3f6a2c1e"])
    XCTAssertEqual(h.session.getServerVersion(), "5.2.1780-3f6a2c1e")
    h.push("ping", [])
    XCTAssertEqual(h.transport.sentTexts.last, #"{"data":[null],"message":"pong"}"#)

    // publishStream with the offer, record on
    let (publisher, publisherStatuses) = try h.makeStream("cam1", record: true)
    try publisher.publish()
    h.settle()
    let publish = try XCTUnwrap(h.sent("publishStream").first)
    let publishId = try XCTUnwrap(publish["mediaSessionId"]?.stringValue)
    XCTAssertNotNil(UUID(uuidString: publishId), "mediaSessionId is a UUID")
    XCTAssertEqual(publishId, publisher.getStreamID())
    XCTAssertEqual(publish["name"], "cam1")
    XCTAssertEqual(publish["published"], true)
    XCTAssertEqual(publish["hasVideo"], true)
    XCTAssertEqual(publish["hasAudio"], true)
    XCTAssertEqual(publish["status"], "PENDING")
    XCTAssertEqual(publish["record"], true)
    XCTAssertEqual(publish["mediaProvider"], "WebRTC")
    XCTAssertEqual(publish["bitrate"], 0)
    XCTAssertEqual(publish["minBitrate"], 0)
    XCTAssertEqual(publish["maxBitrate"], 0)
    XCTAssertEqual(publish["transport"], "UDP")
    XCTAssertNotNil(publish["constraints"]?["video"]?.objectValue)
    let publishConnection = try XCTUnwrap(h.backend.connections.first)
    XCTAssertEqual(publishConnection.request.direction, .publish)
    XCTAssertEqual(publish["sdp"]?.stringValue, publishConnection.offerSDP)
    XCTAssertTrue(publish["sdp"]?.stringValue?.contains("a=sendonly") ?? false)
    XCTAssertEqual(publisher.getStatus(), .fpwcsStreamStatusPending)
    XCTAssertTrue(publisher.isPublished())

    // setRemoteSDP → answer applied; PUBLISHING
    let serverAnswer =
      "v=0\r\no=Flashphoner 0 1702900000123 IN IP4 192.168.10.5\r\nm=audio 31004 RTP/SAVPF 111\r\na=recvonly\r\n"
    h.push("setRemoteSDP", [.string(publishId), .string(serverAnswer), true])
    XCTAssertEqual(publishConnection.answers, [serverAnswer])
    XCTAssertEqual(publisher.getConnectionState(), .connected)
    h.streamStatus(
      publisher, "PUBLISHING",
      extra: ["record": true, "audioState": ["muted": false], "videoState": ["muted": false]])
    XCTAssertEqual(publisher.getStatus(), .fpwcsStreamStatusPublishing)
    h.push(
      "inboundVideoRate", [["mediaSessionId": .string(publishId), "videoRate": 812344, "fps": 30]])
    XCTAssertEqual(publisher.getRemoteBitrate(), 812_344)

    // playStream: receive-only offer; PENDING then PLAYING
    let (player, playerStatuses) = try h.makeStream("cam1")
    try player.play()
    h.settle()
    let play = try XCTUnwrap(h.sent("playStream").first)
    XCTAssertEqual(play["mediaSessionId"]?.stringValue, player.getStreamID())
    XCTAssertNotEqual(player.getStreamID(), publishId, "each stream has its own mediaSessionId")
    XCTAssertEqual(play["published"], false)
    XCTAssertEqual(play["record"], false)
    XCTAssertEqual(play["width"], 0)
    XCTAssertEqual(play["height"], 0)
    XCTAssertEqual(play["quality"], 0)
    XCTAssertEqual(play["status"], "PENDING")
    XCTAssertTrue(play["sdp"]?.stringValue?.contains("a=recvonly") ?? false)
    XCTAssertFalse(player.isPublished())
    h.answer(player)
    h.streamStatus(
      player, "PLAYING", extra: ["audioState": ["muted": false], "videoState": ["muted": true]])
    XCTAssertEqual(player.getStatus(), .fpwcsStreamStatusPlaying)
    XCTAssertEqual(player.getVideoState()?.muted, true)
    XCTAssertEqual(player.getAudioState()?.muted, false)
    XCTAssertEqual(
      Set(h.session.getStreams().map { $0.getStreamID() }), [publishId, player.getStreamID()])

    // unPublishStream; connection closed at once; UNPUBLISHED with recordName; player STOPPED
    try publisher.stop()
    h.settle()
    let unpublish = try XCTUnwrap(h.sent("unPublishStream").first)
    XCTAssertEqual(unpublish["mediaSessionId"]?.stringValue, publishId)
    XCTAssertEqual(unpublish["name"], "cam1")
    XCTAssertEqual(unpublish["published"], true)
    XCTAssertEqual(unpublish["status"], "PUBLISHING")
    XCTAssertEqual(unpublish["record"], false)
    XCTAssertTrue(publishConnection.isClosed)
    XCTAssertEqual(
      publisher.getStatus(), .fpwcsStreamStatusPublishing, "status comes from the server")
    let recordName = "stream-\(publishId)-.mp4"
    h.streamStatus(
      publisher, "UNPUBLISHED", info: "Stopped by user",
      extra: ["record": true, "recordName": .string(recordName)])
    XCTAssertEqual(publisher.getStatus(), .fpwcsStreamStatusUnpublished)
    XCTAssertEqual(publisher.getRecordName(), recordName)
    XCTAssertEqual(publisher.getStatusInfo(), .fpwcsStreamStatusInfoStoppedByUser)
    h.streamStatus(player, "STOPPED", info: "Stopped by publisher stop")
    XCTAssertEqual(player.getStatus(), .fpwcsStreamStatusStopped)
    XCTAssertEqual(player.getStatusInfo(), .fpwcsStreamStatusInfoStoppedByPublisherStop)
    XCTAssertTrue(h.backend.connections[1].isClosed)
    XCTAssertTrue(h.session.getStreams().isEmpty)

    // disconnect: close code 1000, no message
    let sentBefore = h.transport.sentTexts.count
    h.session.disconnect()
    h.settle()
    XCTAssertEqual(h.transport.closeCodes, [1000])
    XCTAssertEqual(h.transport.sentTexts.count, sentBefore)
    XCTAssertEqual(h.session.getStatus(), .fpwcsSessionStatusDisconnected)

    XCTAssertEqual(
      publisherStatuses.all, [.fpwcsStreamStatusPublishing, .fpwcsStreamStatusUnpublished])
    XCTAssertEqual(
      playerStatuses.all,
      [.fpwcsStreamStatusPending, .fpwcsStreamStatusPlaying, .fpwcsStreamStatusStopped])
    XCTAssertEqual(
      h.sessionStatuses.withLock { $0 },
      [.fpwcsSessionStatusPending, .fpwcsSessionStatusEstablished, .fpwcsSessionStatusDisconnected])
    XCTAssertEqual(
      h.sentNames, ["connection", "pong", "publishStream", "playStream", "unPublishStream"])
    XCTAssertTrue(h.session.skippedInputs.isEmpty, "\(h.session.skippedInputs)")
  }

  func testOptionsFieldsReachTheWire() throws {
    let h = try Harness { options in
      options.appKey = "clickToCallApp"
      options.keepAlive = true
      options.authToken = "token-1"
    }
    h.establish()
    let connection = try XCTUnwrap(h.sent("connection").first)
    XCTAssertEqual(connection["appKey"], "clickToCallApp")
    XCTAssertEqual(connection["keepAlive"], true)
    XCTAssertEqual(connection["authToken"], "token-1")

    let constraints = FPWCSApi2MediaConstraints()
    let video = FPWCSApi2VideoConstraints()
    video.minBitrate = 300
    video.maxBitrate = 1500
    video.minWidth = 640
    video.maxWidth = 640
    constraints.video = video
    let options = FPWCSApi2StreamOptions()
    options.name = "tcp-stream"
    options.constraints = constraints
    options.transport = .fpwcsTransportTCP
    options.stripCodecs = "H264,foo".split(separator: ",")
    options.rtmpUrl = "rtmp://example/live"
    options.custom = ["room": "r1", "n": 3]
    let stream = try h.session.createStream(options)
    try stream.publish()
    h.settle()
    let publish = try XCTUnwrap(h.sent("publishStream").first)
    XCTAssertEqual(publish["hasAudio"], false)
    XCTAssertEqual(publish["hasVideo"], true)
    XCTAssertEqual(publish["minBitrate"], 300)
    XCTAssertEqual(publish["maxBitrate"], 1500)
    XCTAssertEqual(publish["transport"], "TCP")
    XCTAssertEqual(publish["rtmpUrl"], "rtmp://example/live")
    XCTAssertEqual(publish["custom"], ["room": "r1", "n": 3])
    XCTAssertEqual(publish["constraints"]?["audio"], false)
    XCTAssertEqual(publish["constraints"]?["video"]?["maxBitrate"], 1500)
    let sdp = try XCTUnwrap(publish["sdp"]?.stringValue)
    XCTAssertFalse(sdp.contains("H264"), "stripCodecs removes H264 from the sent offer")
    XCTAssertFalse(sdp.contains("a=fmtp:102"))
    XCTAssertTrue(sdp.contains("m=video 9 UDP/TLS/RTP/SAVPF 96\r\n"))
    let request = try XCTUnwrap(h.backend.requests.first)
    XCTAssertEqual(request.transport, .tcp)
    XCTAssertNil(request.audio)
    XCTAssertEqual(request.video?.maxBitrate, 1500)
    XCTAssertEqual(request.excludedCodecs, ["H264", "foo"])
  }
}

import WCSLocalServer
import WCSTransport
import XCTest

/// wcs-protocol.md §8 from the server side: the client frames of the transcript go in, the
/// server frames come out in the documented order with the documented fields.
final class TranscriptTests: XCTestCase {
  let publisherId = "0f8b6a10-9c3e-11ee-8a51-4f0d1c2b7e01"
  let playerId = "1a2c4e60-9c3e-11ee-8a51-4f0d1c2b7e01"

  func testSection8TranscriptFromTheServerSide() throws {
    var configuration = WCSServerConfiguration()
    configuration.serverAddress = "192.168.10.5:8080"
    configuration.serverVersion = "5.2.1780-3f6a2c1e"
    let server = ServerHarness(configuration: configuration)
    server.engine.autoConnect = false
    let c: WCSConnectionID = 1
    server.open(c, remote: "192.168.10.20:53122")
    XCTAssertEqual(server.take(c), [], "nothing is sent before connection")

    server.receive(
      c,
      #"{"message":"connection","data":[{"appKey":"defaultApp","mediaProviders":["WebRTC"],"#
        + #""clientVersion":"2.0","clientOSVersion":"Linux 6.8 x86_64","#
        + #""clientBrowserVersion":"FPWCSLinux/0.1","keepAlive":false,"custom":{"user":"alice"}}]}"#
    )
    var out = server.take(c)
    XCTAssertEqual(out.map(\.name), ["getUserData", "getVersion"])
    let userData = out[0].object
    XCTAssertEqual(userData["appKey"], "defaultApp")
    XCTAssertEqual(userData["mediaProviders"], ["WebRTC"])
    XCTAssertEqual(userData["clientVersion"], "2.0")
    XCTAssertEqual(userData["clientOSVersion"], "Linux 6.8 x86_64")
    XCTAssertEqual(userData["clientBrowserVersion"], "FPWCSLinux/0.1")
    XCTAssertEqual(userData["keepAlive"], false)
    XCTAssertEqual(userData["custom"], ["user": "alice"])
    XCTAssertEqual(userData["useWsTunnel"], false)
    XCTAssertEqual(userData["useWsTunnelPacketization2"], false)
    XCTAssertEqual(userData["useBase64BinaryEncoding"], false)
    XCTAssertEqual(userData["status"], "ESTABLISHED")
    let token = try XCTUnwrap(userData["authToken"]?.stringValue)
    XCTAssertTrue(token.hasPrefix("/192.168.10.20:53122/192.168.10.5:8080"), token)
    XCTAssertEqual(out[1].data, ["5.2.1780-3f6a2c1e"])

    server.advance(to: server.now + 5000)
    out = server.take(c)
    XCTAssertEqual(out, [WCSMessage(name: "ping", data: [])])
    server.receive(c, #"{"message":"pong","data":[null]}"#)
    XCTAssertEqual(server.take(c), [])

    // Publish: offer in, setRemoteSDP [id, answer, true] out, PUBLISHING once media is up.
    server.receive(
      c, "publishStream",
      [
        "mediaSessionId": .string(publisherId), "name": "cam1", "published": true,
        "hasVideo": true, "hasAudio": true, "status": "PENDING", "record": true,
        "mediaProvider": "WebRTC", "bitrate": 0, "minBitrate": 0, "maxBitrate": 0,
        "sdp": "v=0\r\no=- 7032618850551196210 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n",
      ])
    XCTAssertEqual(
      server.engine.requests.last,
      .createPublisher(
        LocalServerPublisherRequest(
          mediaSessionId: publisherId, streamName: "cam1",
          offerSDP: "v=0\r\no=- 7032618850551196210 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n",
          record: true, hasAudio: true, hasVideo: true, minBitrate: 0, maxBitrate: 0)))
    out = server.take(c)
    XCTAssertEqual(
      out,
      [
        WCSMessage(
          name: "setRemoteSDP",
          data: [.string(publisherId), .string(FakeMediaEngine.answerSDP), true])
      ])
    let createDate = server.now
    server.now += 27
    server.run(
      server.core.mediaConnected(
        mediaSessionId: publisherId, codecs: FakeMediaEngine.codecs, now: server.now))
    out = server.take(c)
    XCTAssertEqual(out.count, 1)
    assertStatus(out.first, publisherId, "PUBLISHING")
    let publishing = try XCTUnwrap(out.first?.object)
    XCTAssertEqual(publishing["name"], "cam1")
    XCTAssertEqual(publishing["published"], true)
    XCTAssertEqual(publishing["hasVideo"], true)
    XCTAssertEqual(publishing["hasAudio"], true)
    XCTAssertEqual(publishing["record"], true)
    XCTAssertEqual(publishing["audioCodec"], "opus")
    XCTAssertEqual(publishing["videoCodec"], "VP8")
    XCTAssertEqual(publishing["audioState"], ["muted": false])
    XCTAssertEqual(publishing["videoState"], ["muted": false])
    XCTAssertEqual(publishing["mediaProvider"], "WebRTC")
    XCTAssertEqual(publishing["transport"], "UDP")
    XCTAssertEqual(publishing["cvoExtension"], false)
    XCTAssertEqual(publishing["createDate"], .number(Double(createDate)))
    for key in ["width", "height", "bitrate", "minBitrate", "maxBitrate", "quality"] {
      XCTAssertEqual(publishing[key], 0, key)
    }

    // Play the same stream on the same session.
    server.receive(
      c, "playStream",
      [
        "mediaSessionId": .string(playerId), "name": "cam1", "published": false,
        "hasVideo": true, "hasAudio": true, "status": "PENDING", "record": false, "width": 0,
        "height": 0, "mediaProvider": "WebRTC", "bitrate": 0, "minBitrate": 0, "maxBitrate": 0,
        "quality": 0, "sdp": "v=0\r\na=recvonly\r\n",
      ])
    XCTAssertEqual(
      server.engine.requests.last,
      .createPlayer(
        LocalServerPlayerRequest(
          mediaSessionId: playerId, streamName: "cam1", sourceMediaSessionId: publisherId,
          offerSDP: "v=0\r\na=recvonly\r\n")))
    out = server.take(c)
    XCTAssertEqual(out.map(\.name), ["setRemoteSDP"])
    XCTAssertEqual(out.first?.data.first, .string(playerId))
    XCTAssertEqual(out.first?.data.last, true)
    server.run(
      server.core.mediaConnected(
        mediaSessionId: playerId, codecs: FakeMediaEngine.codecs, now: server.now))
    out = server.take(c)
    assertStatus(out.first, playerId, "PLAYING")
    XCTAssertEqual(out.first?.object["published"], false)
    XCTAssertEqual(out.first?.object["name"], "cam1")
    XCTAssertEqual(server.engine.requests.last, .requestKeyFrame(mediaSessionId: publisherId))

    // Unpublish: UNPUBLISHED with recordName to the publisher, then STOPPED to the player.
    server.now += 60_000
    server.receive(
      c, "unPublishStream",
      [
        "mediaSessionId": .string(publisherId), "name": "cam1", "published": true,
        "hasVideo": true, "hasAudio": true, "status": "PUBLISHING", "record": false,
      ])
    out = server.take(c)
    XCTAssertEqual(out.count, 2)
    assertStatus(out.first, publisherId, "UNPUBLISHED", info: "Stopped by user")
    XCTAssertEqual(out.first?.object["record"], true)
    XCTAssertEqual(out.first?.object["recordName"], .string("stream-\(publisherId)-.webm"))
    assertStatus(out.last, playerId, "STOPPED", info: "Stopped by publisher stop")
    XCTAssertEqual(out.last?.object["published"], false)
    XCTAssertEqual(
      Array(server.engine.requests.suffix(2)),
      [
        .releaseMedia(mediaSessionId: publisherId, recordName: "stream-\(publisherId)-.webm"),
        .releaseMedia(mediaSessionId: playerId, recordName: nil),
      ])
    XCTAssertTrue(
      server.logs.contains { $0.contains("recording finished: stream-\(publisherId)-.webm") })

    server.close(c)
    XCTAssertEqual(server.core.sessionCount, 0)
    XCTAssertEqual(server.core.streamCount, 0)
    XCTAssertEqual(server.engine.live, [])
  }

  /// The corpus frames (Web SDK 2.0 shapes) are accepted as they are.
  func testCorpusClientFramesAreServed() throws {
    guard let url = corpusURL("wcs-ws/wcs-ws-messages.jsonl") else {
      throw XCTSkip("../shared/corpus not present")
    }
    var frames: [String: String] = [:]
    for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") {
      let entry = try WCSMessageCodec.decode(
        #"{"message":"entry","data":["# + line + "]}")
      guard let id = entry[0]?["id"]?.stringValue, let msg = entry[0]?["msg"] else { continue }
      frames[id] = WCSMessageCodec.encode(msg)
    }
    let server = ServerHarness()
    let c: WCSConnectionID = 1
    server.open(c)
    server.receive(c, try XCTUnwrap(frames["docs-connection"]))
    XCTAssertEqual(server.take(c).map(\.name), ["getUserData", "getVersion"])
    server.receive(c, try XCTUnwrap(frames["websdk-pong"]))
    server.receive(c, try XCTUnwrap(frames["docs-availableStream-request"]))
    let available = server.take(c)
    XCTAssertEqual(available.map(\.name), ["availableStream"])
    XCTAssertEqual(available.first?.object["status"], "false")
    XCTAssertEqual(available.first?.object["id"], "2f693140-7d54-11eb-91fe-1fd0fb28f180")
  }

  /// The info strings we send are spelled as in the corpus list.
  func testInfoStringsMatchTheCorpus() throws {
    let ours = [
      WCSStreamInfo.mediaSessionIdNull, WCSStreamInfo.mediaSessionIdInUse,
      WCSStreamInfo.streamNameInUse, WCSStreamInfo.streamNotFound, WCSStreamInfo.stoppedByUser,
      WCSStreamInfo.stoppedByPublisherStop, WCSStreamInfo.stoppedBySessionDisconnect,
      WCSStreamInfo.sessionNotReady, WCSStreamInfo.failedByError,
    ]
    XCTAssertEqual(WCSStreamInfo.mediaSessionIdNull, "MediaSessionId is null")
    guard let url = corpusURL("wcs-ws/wcs-status-and-info-strings.json") else {
      throw XCTSkip("../shared/corpus not present")
    }
    let json = try WCSMessageCodec.decode(
      #"{"message":"x","data":["# + String(contentsOf: url, encoding: .utf8) + "]}")
    let strings = Set((json[0]?["failed_info_strings"]?.arrayValue ?? []).compactMap(\.stringValue))
    XCTAssertGreaterThan(strings.count, 20)
    for info in ours { XCTAssertTrue(strings.contains(info), info) }
  }
}

import Foundation
import WCSLocalServer
import WCSMedia
import WCSTransport
import XCTest

/// The real relay engine end to end on loopback: two `PeerConnection` clients signal through
/// `WCSLocalServer` over WebSocket; the publisher's RTP reaches the player rewritten; PLI goes
/// upstream; NACK is served from the cache; the recording reads back.
final class LocalServerRelayTests: XCTestCase {
  static let publisherAudioSSRC: UInt32 = 0x1111_1111
  static let publisherVideoSSRC: UInt32 = 0x2222_2222

  /// One RTP packet as the player got it.
  struct Received: Sendable {
    var ssrc: UInt32
    var payloadType: UInt8
    var sequenceNumber: UInt16
    var payload: [UInt8]
    var bytes: [UInt8]

    /// The packet in `raw`, nil when it is no RTP packet.
    init?(_ raw: UnsafeRawBufferPointer) {
      guard let parsed = try? RTPHeader.parse(raw) else { return nil }
      bytes = [UInt8](raw)
      ssrc = parsed.header.ssrc
      payloadType = parsed.header.payloadType
      sequenceNumber = parsed.header.sequenceNumber
      payload = Array(bytes[parsed.payloadRange])
    }
  }

  func testPublishPlayRelayNACKPLIAndRecording() throws {
    let records = try makeTemporaryDirectory("wcs-relay-e2e")
    defer { try? FileManager.default.removeItem(at: records) }
    let logs = Collector<String>()
    var engineConfiguration = LocalServerRelayEngine.Configuration(recordsDirectory: records.path)
    // Every PLI goes through here, so the test sees both (the limit has its own unit test).
    engineConfiguration.keyFrameRequestIntervalMillis = 0
    engineConfiguration.reportIntervalMillis = 100
    let engine = LocalServerRelayEngine(configuration: engineConfiguration)
    let server = try WCSLocalServer.start(
      testConfiguration(engine: engine, records: records, logs: logs))
    defer { server.stop() }
    let loop = EventLoop(label: "relay-test-clients")
    defer { loop.shutdown() }

    // Publisher: Opus 111 + VP8 96, sendonly.
    let publisherPC = PeerConnection(configuration: .loopback, loop: loop)
    let upstreamRTCP = Collector<[RTCPPacket]>()
    let publisherOffer = try loop.submit {
      publisherPC.onRTCP = { upstreamRTCP.append((try? RTCPPacket.parseCompound($0)) ?? []) }
      return try publisherPC.createOffer(
        audio: .init(ssrc: Self.publisherAudioSSRC, trackId: "a", includeG711: false),
        video: .init(ssrc: Self.publisherVideoSSRC, trackId: "v"), mode: .publish)
    }
    let publisher = TestClient(server.wsURL)
    publisher.establish()
    publisher.send(
      "publishStream",
      Self.stream("pub-1", name: "cam", published: true, record: true, sdp: publisherOffer))
    let publisherAnswer = try XCTUnwrap(
      publisher.waitFor { $0.name == "setRemoteSDP" }?[1]?.stringValue)
    XCTAssertTrue(publisherAnswer.contains("a=ice-lite"))
    // The relay answers under its own o= session id, not the publisher's (RFC 3264 §5).
    let offerOrigin = try SDPParser.parse(publisherOffer).description.origin
    let answerOrigin = try SDPParser.parse(publisherAnswer).description.origin
    XCTAssertNotEqual(answerOrigin.sessionId, offerOrigin.sessionId)
    let answerId = UInt64(answerOrigin.sessionId) ?? 0
    XCTAssertTrue((1...(UInt64(1) << 62)).contains(answerId), answerOrigin.sessionId)
    XCTAssertEqual(answerOrigin.sessionVersion, "1")
    XCTAssertTrue(publisherAnswer.contains("a=end-of-candidates"))
    XCTAssertTrue(publisherAnswer.contains("a=setup:active"))
    try loop.submit { try publisherPC.setRemoteDescription(answer: publisherAnswer) }
    let publishing = publisher.waitForStatus("pub-1", "PUBLISHING")
    XCTAssertEqual(publishing?.object["videoCodec"], "VP8")
    XCTAssertEqual(publishing?.object["audioCodec"], "opus")

    // The publisher's media: 30 VP8 frames (160x120) and 10 Opus packets. The first
    // `early` video packets go out before anyone plays: they are only cached (and recorded).
    let opus = try OpusEncoder(configuration: .init(channels: 2))
    let videoPackets = try Self.vp8Packets(ssrc: Self.publisherVideoSSRC, firstSequence: 65_530)
    var audioPackets: [[UInt8]] = []
    let silence = PCMAudioFrame(samples: [Int16](repeating: 0, count: 1920), channels: 2)
    for index in 0..<10 {
      let header = RTPHeader(
        marker: index == 0, payloadType: 111, sequenceNumber: UInt16(100 + index),
        timestamp: UInt32(index * 960), ssrc: Self.publisherAudioSSRC)
      audioPackets.append(
        try RTPPacket(header: header, payload: try opus.encode(silence)).serialized())
    }
    let early = 3
    try loop.submit {
      for packet in videoPackets.prefix(early) { try publisherPC.sendRTP(packet) }
    }

    // Player: other payload types (Opus 109, VP8 120), recvonly.
    let playerPC = PeerConnection(configuration: .loopback, loop: loop)
    let received = Collector<Received>()
    let downstreamRTCP = Collector<[RTCPPacket]>()
    let playerOffer = try loop.submit {
      playerPC.onRTCP = { downstreamRTCP.append((try? RTCPPacket.parseCompound($0)) ?? []) }
      playerPC.onRTP = { _, raw in Received(raw).map(received.append) }
      return try playerPC.createOffer(
        audio: .init(
          direction: .recvonly, ssrc: 0x3333, trackId: "a", opusPayloadType: 109,
          includeG711: false),
        video: .init(direction: .recvonly, ssrc: 0x4444, trackId: "v", vp8PayloadType: 120),
        mode: .play)
    }
    let player = TestClient(server.wsURL)
    player.establish()
    player.send(
      "playStream", Self.stream("play-1", name: "cam", published: false, sdp: playerOffer))
    let playerAnswer = try XCTUnwrap(player.waitFor { $0.name == "setRemoteSDP" }?[1]?.stringValue)
    let answerSDP = try SDPParser.parse(playerAnswer).description
    let audioSSRC = try XCTUnwrap(
      answerSDP.media.first { $0.media == "audio" }?.ssrcAttributes.first?.ssrc)
    let videoSSRC = try XCTUnwrap(
      answerSDP.media.first { $0.media == "video" }?.ssrcAttributes.first?.ssrc)
    XCTAssertEqual(answerSDP.media.map(\.payloadTypes), [[109], [120]])
    try loop.submit { try playerPC.setRemoteDescription(answer: playerAnswer) }
    player.waitForStatus("play-1", "PLAYING")
    // A player joining makes the relay ask the publisher for a key frame.
    upstreamRTCP.wait { Self.pictureLossCount($0) >= 1 }

    try loop.submit {
      for packet in videoPackets.dropFirst(early) + audioPackets { try publisherPC.sendRTP(packet) }
    }
    let relayedCount = videoPackets.count - early + audioPackets.count
    let all = received.wait(timeout: 20) { $0.count >= relayedCount }
    let video = all.filter { $0.ssrc == videoSSRC }
    let audio = all.filter { $0.ssrc == audioSSRC }
    XCTAssertEqual(video.count, videoPackets.count - early)
    XCTAssertEqual(audio.count, audioPackets.count)
    XCTAssertEqual(Set(video.map(\.payloadType)), [120])
    XCTAssertEqual(Set(audio.map(\.payloadType)), [109])
    XCTAssertEqual(
      video.map(\.payload),
      try videoPackets.dropFirst(early).map { Array(try RTPPacket.parse($0).payload) },
      "payloads relayed unchanged and in order")
    for (previous, next) in zip(video, video.dropFirst()) {
      XCTAssertEqual(next.sequenceNumber, previous.sequenceNumber &+ 1)
    }

    // The player NACKs the packet just before its first one (sent before it joined, so it
    // never got it; SRTP replay protection would drop a second copy of one it has): the relay
    // serves it from the cache with the player's SSRC and numbering.
    let first = try XCTUnwrap(video.first)
    let nack = try RTCPPacket.serializeCompound([
      .receiverReport(RTCPReceiverReport(ssrc: 0x4444)),
      .genericNACK(
        RTCPGenericNACK(senderSSRC: 0x4444, mediaSSRC: videoSSRC, lost: [first.sequenceNumber &- 1])
      ),
    ])
    try loop.submit { try playerPC.sendRTCP(nack) }
    let again = received.wait { $0.count > all.count }
    let retransmitted = try XCTUnwrap(again.last)
    XCTAssertEqual(retransmitted.ssrc, videoSSRC)
    XCTAssertEqual(retransmitted.payloadType, 120)
    XCTAssertEqual(retransmitted.sequenceNumber, first.sequenceNumber &- 1)
    XCTAssertEqual(
      retransmitted.payload, Array(try RTPPacket.parse(videoPackets[early - 1]).payload))

    // A PLI from the player reaches the publisher for its own video SSRC.
    let pli = try RTCPPacket.serializeCompound([
      .receiverReport(RTCPReceiverReport(ssrc: 0x4444)),
      .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 0x4444, mediaSSRC: videoSSRC)),
    ])
    try loop.submit { try playerPC.sendRTCP(pli) }
    upstreamRTCP.wait { Self.pictureLossCount($0) >= 2 }

    // RTCP is terminated per leg: the publisher gets our RR about its video (every packet it
    // sent, none lost), the player gets our SR for the SSRC it receives.
    let reports = upstreamRTCP.wait { compounds in
      Self.reportBlock(compounds, for: Self.publisherVideoSSRC).map {
        $0.highestSequence == UInt32(65_530 + videoPackets.count - 1)
      } ?? false
    }
    let block = try XCTUnwrap(Self.reportBlock(reports, for: Self.publisherVideoSSRC))
    XCTAssertEqual(block.packetsLost, 0)
    let senderReports = downstreamRTCP.wait { compounds in
      compounds.joined().contains {
        if case .senderReport(let report) = $0 { return report.ssrc == videoSSRC }
        return false
      }
    }
    let senderReport = senderReports.joined().compactMap { packet -> RTCPSenderReport? in
      if case .senderReport(let report) = packet, report.ssrc == videoSSRC { return report }
      return nil
    }.last
    XCTAssertEqual(senderReport?.packetCount, UInt32(videoPackets.count - early))

    // Unpublish: the player stops, the recording is finished under the record name.
    publisher.send("unPublishStream", ["mediaSessionId": "pub-1", "name": "cam"])
    let unpublished = publisher.waitForStatus("pub-1", "UNPUBLISHED")
    let recordName = try XCTUnwrap(unpublished?.object["recordName"]?.stringValue)
    player.waitForStatus("play-1", "STOPPED")
    logs.wait { $0.contains { $0.contains("recording finished: \(recordName)") } }
    let reader = try MediaFileReader(path: records.appendingPathComponent(recordName).path)
    var frames = 0
    var chunks = 0
    while let sample = try reader.nextSample() {
      if case .video = sample { frames += 1 } else { chunks += 1 }
    }
    XCTAssertEqual(frames, 30)
    XCTAssertGreaterThanOrEqual(chunks, 9)
    loop.submit {
      publisherPC.close()
      playerPC.close()
    }
    publisher.closeAndWait()
    player.closeAndWait()
  }

  /// The relay's connections read each packet as it arrives: with the client default (25 ms
  /// receive coalescing) the packets arriving in the 25 ms before each report or watchdog timer
  /// would wait for it on their way to every player.
  func testTheRelayDoesNotCoalesceReceivedPackets() {
    let configuration = LocalServerRelayEngine.Configuration(recordsDirectory: "/nonexistent")
    XCTAssertEqual(configuration.peerConnection.receiveCoalescing, .zero)
    XCTAssertEqual(PeerConnectionConfiguration().receiveCoalescing, .milliseconds(25))
    XCTAssertTrue(configuration.peerConnection.iceLite)
  }

  func testTheDefaultEngineRefusesAnOfferWithoutARelayedCodec() throws {
    let records = try makeTemporaryDirectory("wcs-relay-default")
    defer { try? FileManager.default.removeItem(at: records) }
    let logs = Collector<String>()
    var configuration = testConfiguration(
      engine: UnavailableMediaEngine(), records: records, logs: logs)
    configuration.mediaEngine = nil
    let server = try WCSLocalServer.start(configuration)
    defer { server.stop() }
    let vp9Only = [
      "v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "m=video 9 UDP/TLS/RTP/SAVPF 102",
      "c=IN IP4 0.0.0.0", "a=ice-ufrag:abcd", "a=ice-pwd:abcdefghijklmnopqrstuvwx",
      "a=setup:actpass", "a=rtpmap:102 VP9/90000", "a=sendonly", "",
    ].joined(separator: "\r\n")
    let client = TestClient(server.wsURL)
    client.establish()
    client.send("publishStream", Self.stream("pub-vp9", name: "h", published: true, sdp: vp9Only))
    let failed = client.waitForStatus("pub-vp9", "FAILED")
    XCTAssertEqual(failed?.object["info"], "No common codecs")
    logs.wait { $0.contains { $0.contains("media pub-vp9: offer refused") } }
    client.closeAndWait()
  }

  /// An offer with no `m=` line, and one whose every section has port 0, each FAIL with their
  /// own info; `No common codecs` stays for an offer whose accepted sections lack Opus/VP8.
  func testOffersWithoutAcceptedMediaFailWithTheirOwnInfo() throws {
    let records = try makeTemporaryDirectory("wcs-relay-no-media")
    defer { try? FileManager.default.removeItem(at: records) }
    let logs = Collector<String>()
    var configuration = testConfiguration(
      engine: UnavailableMediaEngine(), records: records, logs: logs)
    configuration.mediaEngine = nil
    let server = try WCSLocalServer.start(configuration)
    defer { server.stop() }
    let session = ["v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "t=0 0"]
    let transport = [
      "c=IN IP4 0.0.0.0", "a=ice-ufrag:abcd", "a=ice-pwd:abcdefghijklmnopqrstuvwx",
      "a=setup:actpass",
    ]
    let noMedia = (session + ["a=ice-lite", ""]).joined(separator: "\r\n")
    let allRejected =
      (session + ["m=audio 0 UDP/TLS/RTP/SAVPF 111"] + transport
      + ["a=rtpmap:111 opus/48000/2", "m=video 0 UDP/TLS/RTP/SAVPF 96"] + transport
      + ["a=rtpmap:96 VP8/90000", ""]).joined(separator: "\r\n")
    let client = TestClient(server.wsURL)
    client.establish()
    client.send("publishStream", Self.stream("pub-none", name: "n", published: true, sdp: noMedia))
    XCTAssertEqual(
      client.waitForStatus("pub-none", "FAILED")?.object["info"], "Offer has no media sections")
    client.send(
      "publishStream", Self.stream("pub-zero", name: "z", published: true, sdp: allRejected))
    XCTAssertEqual(
      client.waitForStatus("pub-zero", "FAILED")?.object["info"],
      "Every media section is rejected (port 0)")
    let vp9Only =
      (session + ["m=video 9 UDP/TLS/RTP/SAVPF 102"] + transport
      + ["a=rtpmap:102 VP9/90000", ""]).joined(separator: "\r\n")
    client.send("publishStream", Self.stream("pub-vp9", name: "h", published: true, sdp: vp9Only))
    XCTAssertEqual(client.waitForStatus("pub-vp9", "FAILED")?.object["info"], "No common codecs")
    client.closeAndWait()
  }

  /// A publisher that never starts ICE: the engine's connection times out and the client gets
  /// FAILED with the WCS info string instead of a stream that stays PENDING forever.
  func testPublisherThatNeverStartsICEFailsByICETimeout() throws {
    let records = try makeTemporaryDirectory("wcs-relay-timeout")
    defer { try? FileManager.default.removeItem(at: records) }
    let logs = Collector<String>()
    var engineConfiguration = LocalServerRelayEngine.Configuration(recordsDirectory: records.path)
    engineConfiguration.peerConnection.connectTimeout = .milliseconds(300)
    let engine = LocalServerRelayEngine(configuration: engineConfiguration)
    let server = try WCSLocalServer.start(
      testConfiguration(engine: engine, records: records, logs: logs))
    defer { server.stop() }
    let loop = EventLoop(label: "relay-timeout-client")
    defer { loop.shutdown() }
    let publisherPC = PeerConnection(configuration: .loopback, loop: loop)
    let offer = try loop.submit {
      try publisherPC.createOffer(
        audio: .init(ssrc: Self.publisherAudioSSRC, trackId: "a", includeG711: false),
        video: nil, mode: .publish)
    }
    let client = TestClient(server.wsURL)
    client.establish()
    client.send("publishStream", Self.stream("pub-idle", name: "idle", published: true, sdp: offer))
    // The answer is never applied, so the client sends no checks.
    XCTAssertNotNil(client.waitFor { $0.name == "setRemoteSDP" })
    let failed = client.waitForStatus("pub-idle", "FAILED")
    XCTAssertEqual(failed?.object["info"], "Failed by ICE timeout")
    loop.submit { publisherPC.close() }
    client.closeAndWait()
  }

  /// 30 VP8 frames (160x120, payloads of at most 400 octets) as RTP packets of payload type
  /// 96 on `ssrc`, numbered from `firstSequence`; the first frame is a key frame.
  /// 30 frames at 160x120 as RTP packets: VP8 at payload type 96, or with `h264` H.264
  /// (OpenH264, RFC 6184 mode 1) at 102.
  static func vp8Packets(ssrc: UInt32, firstSequence: UInt16, h264: Bool = false) throws
    -> [[UInt8]]
  {
    var packetizer = VP8Packetizer(maxPayloadSize: 400)
    var h264Packetizer = H264Packetizer(maxPayloadSize: 400)
    let encoder = try VP8Encoder(
      configuration: .init(width: 160, height: 120, frameRate: 30, bitrateKbps: 300))
    let h264Encoder =
      h264 ? try H264Encoder(configuration: .init(width: 160, height: 120, bitrateKbps: 300)) : nil
    var packets: [[UInt8]] = []
    var sequence = firstSequence
    for index in 0..<30 {
      let picture = I420Image(width: 160, height: 120, y: UInt8(30 + index * 6))
      let timestamp = UInt32(index * 3000)
      for frame in try h264Encoder?.encode(picture, timestamp: timestamp)
        ?? encoder.encode(picture, timestamp: timestamp)
      {
        for payload in h264 ? h264Packetizer.packetize(frame) : packetizer.packetize(frame) {
          let header = RTPHeader(
            marker: payload.marker, payloadType: h264 ? 102 : 96, sequenceNumber: sequence,
            timestamp: payload.timestamp, ssrc: ssrc)
          packets.append(try RTPPacket(header: header, payload: payload.payload).serialized())
          sequence &+= 1
        }
      }
    }
    return packets
  }

  /// PLIs for the publisher's video SSRC among the RTCP it received.
  static func pictureLossCount(_ compounds: [[RTCPPacket]]) -> Int {
    compounds.joined().filter {
      if case .pictureLossIndication(let request) = $0 {
        return request.mediaSSRC == publisherVideoSSRC
      }
      return false
    }.count
  }

  /// The newest report block about `ssrc` in the RRs received.
  static func reportBlock(_ compounds: [[RTCPPacket]], for ssrc: UInt32) -> RTCPReportBlock? {
    compounds.joined().compactMap { packet -> RTCPReportBlock? in
      if case .receiverReport(let report) = packet {
        return report.reports.first { $0.ssrc == ssrc }
      }
      return nil
    }.last
  }

  static func stream(
    _ mediaSessionId: String, name: String, published: Bool, record: Bool = false, sdp: String
  ) -> JSONValue {
    guard
      case .object(var object) = streamArgument(
        mediaSessionId, name: name, published: published, record: record)
    else { return .null }
    object["sdp"] = .string(sdp)
    return .object(object)
  }
}

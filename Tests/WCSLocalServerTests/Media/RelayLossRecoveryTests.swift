import Foundation
import WCSLocalServer
import WCSMedia
import WCSTransport
import XCTest

/// Loss recovery through the real relay engine on loopback, with `PeerConnection` clients whose
/// every packet the test chooses: a packet the publisher holds back is a loss on the
/// publisher→relay leg (the relay NACKs it, the resend reaches the player and the recording);
/// a packet the player NACKs is served from the relay's cache, by RTX where the player offered
/// it and by plain resend otherwise; PLIs are forwarded or deferred, never dropped.
final class RelayLossRecoveryTests: XCTestCase {
  static let audioSSRC: UInt32 = 0x1111_1111
  static let videoSSRC: UInt32 = 0x2222_2222
  static let publisherRTXSSRC: UInt32 = 0x2222_3333

  /// A publisher and a player connected through a relay engine, and 30 VP8 frames to send.
  final class Session {
    let records: URL
    let logs: Collector<String>
    let engine: LocalServerRelayEngine
    let server: WCSLocalServer
    let loop: EventLoop
    let publisherPC: PeerConnection
    let playerPC: PeerConnection
    let publisher: TestClient
    let player: TestClient
    let upstreamRTCP: Collector<[RTCPPacket]>
    let received: Collector<LocalServerRelayTests.Received>
    let videoPackets: [[UInt8]]
    /// The player's video SSRC and, when RTX was answered, its RTX SSRC and payload type.
    let playerVideoSSRC: UInt32
    let playerRTX: (ssrc: UInt32, payloadType: UInt8)?
    let publisherAnswer: String
    let playerAnswer: String

    /// With `h264`, the publisher offers H.264 first (102, RTX 103) and the player H.264 at
    /// 125 (RTX 126) besides VP8 at 120: the relay passes H.264 on.
    init(
      publisherRTX: Bool, playerRTX: Bool, keyFrameIntervalMillis: Int64 = 0, h264: Bool = false
    ) throws {
      let records = try makeTemporaryDirectory("wcs-relay-loss")
      let logs = Collector<String>()
      var configuration = LocalServerRelayEngine.Configuration(recordsDirectory: records.path)
      configuration.keyFrameRequestIntervalMillis = keyFrameIntervalMillis
      configuration.reportIntervalMillis = 100
      configuration.log = { logs.append($0) }
      let engine = LocalServerRelayEngine(configuration: configuration)
      let server = try WCSLocalServer.start(
        testConfiguration(engine: engine, records: records, logs: logs))
      let loop = EventLoop(label: "relay-loss-clients")
      let publisherPC = PeerConnection(configuration: .loopback, loop: loop)
      let playerPC = PeerConnection(configuration: .loopback, loop: loop)
      let upstreamRTCP = Collector<[RTCPPacket]>()
      let received = Collector<LocalServerRelayTests.Received>()
      var publishedVideo = SDPOfferParameters.Video(
        ssrc: RelayLossRecoveryTests.videoSSRC, trackId: "v",
        rtx: publisherRTX
          ? .init(payloadType: 97, ssrc: RelayLossRecoveryTests.publisherRTXSSRC) : nil)
      var playedVideo = SDPOfferParameters.Video(
        direction: .recvonly, ssrc: 0x4444, trackId: "v", vp8PayloadType: 120,
        rtx: playerRTX ? .init(payloadType: 121, ssrc: 0x4445) : nil)
      if h264 {
        publishedVideo.h264 = .init(isPreferred: true)
        publishedVideo.h264?.retransmissionPayloadType = 103
        playedVideo.h264 = .init(payloadType: 125)
        playedVideo.h264?.retransmissionPayloadType = 126
      }
      let offer = try loop.submit { [publishedVideo] in
        publisherPC.onRTCP = { upstreamRTCP.append((try? RTCPPacket.parseCompound($0)) ?? []) }
        return try publisherPC.createOffer(
          audio: .init(ssrc: RelayLossRecoveryTests.audioSSRC, trackId: "a", includeG711: false),
          video: publishedVideo, mode: .publish)
      }
      let publisher = TestClient(server.wsURL)
      publisher.establish()
      publisher.send(
        "publishStream",
        LocalServerRelayTests.stream(
          "pub-1", name: "cam", published: true, record: true, sdp: offer))
      let publisherAnswer = try XCTUnwrap(
        publisher.waitFor { $0.name == "setRemoteSDP" }?[1]?.stringValue)
      try loop.submit { try publisherPC.setRemoteDescription(answer: publisherAnswer) }
      publisher.waitForStatus("pub-1", "PUBLISHING")

      let playerOffer = try loop.submit { [playedVideo] in
        playerPC.onRTP = { _, raw in LocalServerRelayTests.Received(raw).map(received.append) }
        return try playerPC.createOffer(
          audio: .init(
            direction: .recvonly, ssrc: 0x3333, trackId: "a", opusPayloadType: 109,
            includeG711: false),
          video: playedVideo, mode: .play)
      }
      let player = TestClient(server.wsURL)
      player.establish()
      player.send(
        "playStream",
        LocalServerRelayTests.stream("play-1", name: "cam", published: false, sdp: playerOffer))
      let playerAnswer = try XCTUnwrap(
        player.waitFor { $0.name == "setRemoteSDP" }?[1]?.stringValue)
      let video = try XCTUnwrap(
        try SDPParser.parse(playerAnswer).description.media.first { $0.media == "video" })
      let playerVideoSSRC = try XCTUnwrap(video.ssrcAttributes.first?.ssrc)
      var answeredRTX: (ssrc: UInt32, payloadType: UInt8)?
      if let rtxType = video.payloadTypes(forCodec: "rtx").first {
        for case .ssrcGroup(let group) in video.attributes where group.semantics == "FID" {
          XCTAssertEqual(group.ssrcs.first, playerVideoSSRC)
          answeredRTX = (group.ssrcs[1], UInt8(rtxType))
        }
        XCTAssertEqual(
          video.formatParameters(payloadType: rtxType)?.associatedPayloadType, h264 ? 125 : 120)
      }
      try loop.submit { try playerPC.setRemoteDescription(answer: playerAnswer) }
      player.waitForStatus("play-1", "PLAYING")

      let packets = try LocalServerRelayTests.vp8Packets(
        ssrc: RelayLossRecoveryTests.videoSSRC, firstSequence: 65_520, h264: h264)
      self.records = records
      self.logs = logs
      self.engine = engine
      self.server = server
      self.loop = loop
      self.publisherPC = publisherPC
      self.playerPC = playerPC
      self.publisher = publisher
      self.player = player
      self.upstreamRTCP = upstreamRTCP
      self.received = received
      self.videoPackets = packets
      self.playerVideoSSRC = playerVideoSSRC
      self.playerRTX = answeredRTX
      self.publisherAnswer = publisherAnswer
      self.playerAnswer = playerAnswer
    }

    /// The video packets among `received` (in arrival order).
    func video(_ received: [LocalServerRelayTests.Received]) -> [LocalServerRelayTests.Received] {
      received.filter { $0.ssrc == playerVideoSSRC }
    }

    func sendFromPublisher(_ packets: [[UInt8]]) throws {
      let publisherPC = publisherPC
      try loop.submit { for packet in packets { try publisherPC.sendRTP(packet) } }
    }

    func sendFromPlayer(_ packets: [RTCPPacket]) throws {
      let bytes = try RTCPPacket.serializeCompound(
        [.receiverReport(RTCPReceiverReport(ssrc: 0x4444))] + packets)
      let playerPC = playerPC
      try loop.submit { try playerPC.sendRTCP(bytes) }
    }

    /// The video packets the player received, in arrival order.
    func playerVideo() -> [LocalServerRelayTests.Received] { video(received.all) }

    /// Unpublishes and returns the number of video frames in the recording.
    func finish() throws -> Int {
      publisher.send("unPublishStream", ["mediaSessionId": "pub-1", "name": "cam"])
      let unpublished = publisher.waitForStatus("pub-1", "UNPUBLISHED")
      let recordName = try XCTUnwrap(unpublished?.object["recordName"]?.stringValue)
      logs.wait { $0.contains { $0.contains("recording finished: \(recordName)") } }
      let reader = try MediaFileReader(path: records.appendingPathComponent(recordName).path)
      var frames = 0
      while let sample = try reader.nextSample() {
        if case .video = sample { frames += 1 }
      }
      return frames
    }

    func close() {
      let publisherPC = publisherPC
      let playerPC = playerPC
      loop.submit {
        publisherPC.close()
        playerPC.close()
      }
      publisher.closeAndWait()
      player.closeAndWait()
      server.stop()
      loop.shutdown()
      try? FileManager.default.removeItem(at: records)
    }
  }

  /// Generic NACKs for the publisher's video SSRC among the RTCP it received.
  static func nackedSequenceNumbers(_ compounds: [[RTCPPacket]]) -> [UInt16] {
    compounds.joined().flatMap { packet -> [UInt16] in
      if case .genericNACK(let nack) = packet, nack.mediaSSRC == videoSSRC {
        return nack.lostSequenceNumbers
      }
      return []
    }
  }

  /// The publisher holds its middle packet back (lost on its leg): the relay NACKs it; the
  /// publisher answers with `resend`; the player gets the packet in its place, and the
  /// recording every frame.
  private func repairPublisherLoss(
    _ session: Session, playerPayloadType: UInt8 = 120, resend: (Session, [UInt8]) throws -> Void
  ) throws -> LocalServerRelayTests.Received {
    let lost = session.videoPackets.count / 2
    let lostSequence = UInt16(truncatingIfNeeded: 65_520 + lost)
    try session.sendFromPublisher(Array(session.videoPackets.prefix(lost)))
    try session.sendFromPublisher(Array(session.videoPackets.dropFirst(lost + 1)))
    let before = session.videoPackets.count - 1
    session.received.wait { session.video($0).count == before }
    session.upstreamRTCP.wait { Self.nackedSequenceNumbers($0).contains(lostSequence) }
    try resend(session, session.videoPackets[lost])
    session.received.wait { session.video($0).count == before + 1 }
    let video = session.playerVideo()
    let first = try XCTUnwrap(video.first)
    let repaired = try XCTUnwrap(video.last)
    // Fixed offsets: the repaired packet fills exactly the player's gap.
    XCTAssertEqual(repaired.sequenceNumber, first.sequenceNumber &+ UInt16(lost))
    XCTAssertEqual(repaired.payloadType, playerPayloadType)
    XCTAssertEqual(
      repaired.payload, Array(try RTPPacket.parse(session.videoPackets[lost]).payload))
    return repaired
  }

  /// The player NACKs `repaired` as if its copy was lost: the answer comes on the RTX SSRC
  /// and payload type `rtx`, and unwraps (RFC 4588 §4) to `repaired` at `payloadType`.
  private func repairPlayerLossByRTX(
    _ session: Session, of repaired: LocalServerRelayTests.Received,
    rtx: (ssrc: UInt32, payloadType: UInt8), payloadType: UInt8
  ) throws {
    let count = session.received.all.count
    try session.sendFromPlayer([
      .genericNACK(
        RTCPGenericNACK(
          senderSSRC: 0x4444, mediaSSRC: session.playerVideoSSRC,
          lost: [repaired.sequenceNumber]))
    ])
    let retransmission = try XCTUnwrap(
      session.received.wait { $0.count > count }.last { $0.ssrc == rtx.ssrc })
    XCTAssertEqual(retransmission.payloadType, rtx.payloadType)
    let restored = try XCTUnwrap(
      try RTXPacketFormat.unwrap(
        try RTPPacket.parse(retransmission.bytes), ssrc: session.playerVideoSSRC,
        payloadType: payloadType))
    XCTAssertEqual(restored.header.sequenceNumber, repaired.sequenceNumber)
    XCTAssertEqual(restored.payload, repaired.payload)
  }

  /// Publisher without RTX (its resend is the packet as first sent); player with RTX: the
  /// player's NACK for a packet it has not got is answered on the RTX SSRC of the answer's FID
  /// group, with the RTX payload type and the original sequence number first (RFC 4588 §4).
  func testPublisherLossRepairedByRelayNACKAndPlayerLossByRTX() throws {
    let session = try Session(publisherRTX: false, playerRTX: true)
    defer { session.close() }
    XCTAssertFalse(session.publisherAnswer.contains("rtx"))
    let rtx = try XCTUnwrap(session.playerRTX, "the answer keeps the player's RTX")
    let repaired = try repairPublisherLoss(session) { session, packet in
      try session.sendFromPublisher([packet])
    }

    // Relay→player loss: the player NACKs the repaired packet as if its copy was lost.
    try repairPlayerLossByRTX(session, of: repaired, rtx: rtx, payloadType: 120)

    let statistics = session.engine.legStatistics()
    let publisher = try XCTUnwrap(statistics["pub-1"])
    XCTAssertEqual(publisher.packetsLost, 1)
    XCTAssertGreaterThanOrEqual(publisher.nackedPackets, 1)
    XCTAssertEqual(publisher.retransmissions, 1)
    XCTAssertFalse(publisher.retransmissionNegotiated)
    let player = try XCTUnwrap(statistics["play-1"])
    XCTAssertTrue(player.retransmissionNegotiated)
    XCTAssertEqual(player.nackedPackets, 1)
    XCTAssertEqual(player.nacksAnswered, 1)
    XCTAssertEqual(player.retransmissions, 1)
    XCTAssertEqual(player.sendFailures, 0)
    XCTAssertGreaterThanOrEqual(player.keyFrames, 1)
    XCTAssertEqual(try session.finish(), 30, "the recording has the repaired frame too")
    session.logs.wait {
      $0.contains { $0.contains("publisher 'cam': in \(session.videoPackets.count)") }
    }
  }

  /// H.264 with RTX on both legs (RFC 4588 `apt` to the H.264 formats): the publisher's RTX
  /// resend is unwrapped, the player's NACK answered on its H.264 RTX format, the IDR counted
  /// once on each leg (its FU-A start), and the recording has every picture.
  func testH264LossIsRepairedByRTXOnBothLegsAndItsKeyFrameCounted() throws {
    let session = try Session(publisherRTX: true, playerRTX: true, h264: true)
    defer { session.close() }
    XCTAssertTrue(session.publisherAnswer.contains("apt=102"))
    XCTAssertFalse(session.publisherAnswer.contains("VP8"))
    let rtx = try XCTUnwrap(session.playerRTX)
    XCTAssertEqual(rtx.payloadType, 126)
    var rtxSequence: UInt16 = 700
    let repaired = try repairPublisherLoss(session, playerPayloadType: 125) { session, packet in
      let wrapped = RTXPacketFormat.wrap(
        try RTPPacket.parse(packet), ssrc: Self.publisherRTXSSRC, payloadType: 103,
        sequenceNumber: rtxSequence)
      rtxSequence &+= 1
      try session.sendFromPublisher([try wrapped.serialized()])
    }
    try repairPlayerLossByRTX(session, of: repaired, rtx: rtx, payloadType: 125)

    let statistics = session.engine.legStatistics()
    let publisher = try XCTUnwrap(statistics["pub-1"])
    XCTAssertTrue(publisher.retransmissionNegotiated)
    XCTAssertEqual(publisher.retransmissions, 1)
    XCTAssertEqual(publisher.keyFrames, 1, "one IDR, counted once")
    let player = try XCTUnwrap(statistics["play-1"])
    XCTAssertTrue(player.retransmissionNegotiated)
    XCTAssertEqual(player.nacksAnswered, 1)
    XCTAssertEqual(player.keyFrames, 1)
    XCTAssertEqual(try session.finish(), 30, "the recording has the repaired picture too")
  }

  /// Publisher with RTX (the relay unwraps it); player without: the player's NACK is answered
  /// by a plain resend from the cache. For a packet the player already had, that resend reuses
  /// an SRTP index the relay already sent (`allow_repeat_tx`): it goes out, and the player's
  /// replay protection drops the second copy.
  func testPublisherRTXIsUnwrappedAndPlayerLossIsRepairedByPlainResend() throws {
    let session = try Session(publisherRTX: true, playerRTX: false)
    defer { session.close() }
    XCTAssertTrue(session.publisherAnswer.contains("apt=96"))
    XCTAssertNil(session.playerRTX)
    var rtxSequence: UInt16 = 500
    _ = try repairPublisherLoss(session) { session, packet in
      let wrapped = RTXPacketFormat.wrap(
        try RTPPacket.parse(packet), ssrc: Self.publisherRTXSSRC, payloadType: 97,
        sequenceNumber: rtxSequence)
      rtxSequence &+= 1
      try session.sendFromPublisher([try wrapped.serialized()])
    }
    // A second copy from the publisher is dropped as a duplicate, not relayed.
    try session.sendFromPublisher([session.videoPackets[session.videoPackets.count / 2]])

    let video = session.playerVideo()
    let first = try XCTUnwrap(video.first)
    let count = session.received.all.count
    let playerDropsBefore = session.loop.submit { session.playerPC.stats.srtpDrops }
    // One packet the player already has, and one sequence number never sent.
    try session.sendFromPlayer([
      .genericNACK(
        RTCPGenericNACK(
          senderSSRC: 0x4444, mediaSSRC: session.playerVideoSSRC,
          lost: [first.sequenceNumber &+ 5, first.sequenceNumber &- 3000]))
    ])
    let statistics = try XCTUnwrap(
      waitForStatistics(session) { $0["play-1"]?.nackedPackets == 2 }["play-1"])
    XCTAssertEqual(statistics.nacksAnswered, 1)
    XCTAssertEqual(statistics.nacksUnanswerable, 1)
    XCTAssertEqual(statistics.sendFailures, 0, "the repeated index was protected")
    let drops = { session.loop.submit { session.playerPC.stats.srtpDrops } }
    let deadline = Date().addingTimeInterval(5)
    while drops() == playerDropsBefore, Date() < deadline { usleep(10_000) }
    XCTAssertEqual(drops(), playerDropsBefore + 1, "the player's SRTP refused the replay")
    XCTAssertEqual(session.received.all.count, count)
    let publisher = try XCTUnwrap(session.engine.legStatistics()["pub-1"])
    XCTAssertTrue(publisher.retransmissionNegotiated)
    XCTAssertEqual(publisher.retransmissions, 1)
    XCTAssertEqual(publisher.duplicatesDropped, 1)
    XCTAssertEqual(try session.finish(), 30)
  }

  /// A NACK storm from one player (every sequence number, repeated) costs at most the
  /// per-player resend budget; the stream to the player goes on.
  func testNACKStormIsBoundedByTheResendRateLimit() throws {
    let session = try Session(publisherRTX: false, playerRTX: true)
    defer { session.close() }
    try session.sendFromPublisher(session.videoPackets)
    session.received.wait { session.video($0).count == session.videoPackets.count }
    let first = try XCTUnwrap(session.playerVideo().first).sequenceNumber
    let everything = (0..<1000).map { first &+ UInt16($0) }
    let start = Date()
    for _ in 0..<20 {
      try session.sendFromPlayer([
        .genericNACK(
          RTCPGenericNACK(
            senderSSRC: 0x4444, mediaSSRC: session.playerVideoSSRC,
            lost: Array(everything.prefix(300))))
      ])
    }
    let statistics = try XCTUnwrap(
      waitForStatistics(session) { $0["play-1"]?.nackedPackets == 20 * 300 }["play-1"])
    // The burst (250) and the rate (500/s) for the time the storm took, no more.
    let elapsed = Date().timeIntervalSince(start)
    XCTAssertLessThanOrEqual(Double(statistics.retransmissions), 250 + 500 * elapsed + 1)
    XCTAssertEqual(statistics.retransmissions, statistics.nacksAnswered)
    XCTAssertGreaterThan(statistics.nacksUnanswerable + statistics.nacksRateLimited, 0)
    // Only the packets in the cache were answerable: at most one resend each per interval.
    XCTAssertLessThanOrEqual(statistics.nacksAnswered, 20 * session.videoPackets.count)
  }

  /// A publisher sending from ever new SSRCs gets a cache for at most four of them: the rest
  /// is refused and counted, the memory stays bounded.
  func testPacketsFromTooManySSRCsAreRefused() throws {
    let session = try Session(publisherRTX: false, playerRTX: false)
    defer { session.close() }
    var packets: [[UInt8]] = []
    for index in 0..<10 {
      var packet = try RTPPacket.parse(session.videoPackets[0])
      packet.header.ssrc = 0x7000_0000 + UInt32(index)
      packets.append(try packet.serialized())
    }
    try session.sendFromPublisher(packets)
    let statistics = try XCTUnwrap(
      waitForStatistics(session) { $0["pub-1"]?.packetsIn == 10 }["pub-1"])
    XCTAssertEqual(statistics.packetsRefused, 6)
  }

  /// PLIs from the player inside the limit's interval are deferred to its end and then sent
  /// as one PLI, not dropped; the key frame the publisher sends reaches the player (counted
  /// per leg).
  func testPLIInsideTheLimitIntervalIsDeferredAndItsKeyFrameReachesThePlayer() throws {
    let session = try Session(
      publisherRTX: false, playerRTX: false, keyFrameIntervalMillis: 1500)
    defer { session.close() }
    try session.sendFromPublisher(Array(session.videoPackets.prefix(5)))
    session.received.wait { session.video($0).count == 5 }
    let pli = RTCPPacket.pictureLossIndication(
      RTCPPictureLossIndication(senderSSRC: 0x4444, mediaSSRC: session.playerVideoSSRC))
    // Back to back: the second is inside the interval whatever happened to the first.
    try session.sendFromPlayer([pli])
    try session.sendFromPlayer([pli])
    let statistics = try XCTUnwrap(
      waitForStatistics(session) { $0["play-1"]?.keyFrameRequests == 2 }["play-1"])
    XCTAssertGreaterThanOrEqual(statistics.keyFrameRequestsDeferred, 1)
    XCTAssertEqual(statistics.keyFrameRequestsForwarded + statistics.keyFrameRequestsDeferred, 2)
    // The deferred one goes out when the interval ends, as one more PLI at the publisher.
    let sentBefore = try XCTUnwrap(session.engine.legStatistics()["pub-1"]?.keyFrameRequests)
    waitForStatistics(session) { $0["pub-1"]?.keyFrameRequests == sentBefore + 1 }
    session.upstreamRTCP.wait { LocalServerRelayTests.pictureLossCount($0) == sentBefore + 1 }
    // The publisher answers with a key frame.
    let encoder = try VP8Encoder(
      configuration: .init(width: 160, height: 120, frameRate: 30, bitrateKbps: 300))
    var packetizer = VP8Packetizer(maxPayloadSize: 400)
    let keyFrame = try XCTUnwrap(
      try encoder.encode(I420Image(width: 160, height: 120, y: 90), timestamp: 9000).first)
    var sequence = UInt16(truncatingIfNeeded: 65_520 + 5)
    let keyFramesBefore = session.engine.legStatistics()["play-1"]?.keyFrames ?? 0
    XCTAssertEqual(keyFramesBefore, 1, "the first frame")
    var packets: [[UInt8]] = []
    for payload in packetizer.packetize(keyFrame) {
      packets.append(
        try RTPPacket(
          header: RTPHeader(
            marker: payload.marker, payloadType: 96, sequenceNumber: sequence,
            timestamp: 900_000, ssrc: Self.videoSSRC), payload: payload.payload
        ).serialized())
      sequence &+= 1
    }
    try session.sendFromPublisher(packets)
    let after = try XCTUnwrap(
      waitForStatistics(session) { ($0["play-1"]?.keyFrames ?? 0) > keyFramesBefore }["play-1"])
    XCTAssertEqual(after.keyFrames, keyFramesBefore + 1)
  }

  /// A player's receiver report may count more packets than were sent (duplicates make the
  /// cumulative loss negative, RFC 3550 §6.4.1): the player's `lost` counts only the SSRCs that
  /// lost packets, never below zero.
  func testPlayerLossFromNegativeReportBlocksIsNotBelowZero() throws {
    let session = try Session(publisherRTX: false, playerRTX: false)
    defer { session.close() }
    try session.sendFromPublisher(Array(session.videoPackets.prefix(5)))
    session.received.wait { session.video($0).count == 5 }
    let answer = try SDPParser.parse(session.playerAnswer).description
    let audioSSRC = try XCTUnwrap(
      answer.media.first { $0.media == "audio" }?.ssrcAttributes.first?.ssrc)
    try session.sendFromPlayer([
      .receiverReport(
        RTCPReceiverReport(
          ssrc: 0x4444,
          reports: [
            RTCPReportBlock(
              ssrc: session.playerVideoSSRC, packetsLost: -3, highestSequence: 5),
            RTCPReportBlock(ssrc: audioSSRC, packetsLost: 4, highestSequence: 9),
          ])),
      .pictureLossIndication(
        RTCPPictureLossIndication(senderSSRC: 0x4444, mediaSSRC: session.playerVideoSSRC)),
    ])
    let statistics = try XCTUnwrap(
      waitForStatistics(session) { $0["play-1"]?.keyFrameRequests == 1 }["play-1"])
    XCTAssertEqual(statistics.packetsLost, 4)
    XCTAssertTrue(statistics.summary.contains("lost 4,"), statistics.summary)
  }

  @discardableResult
  private func waitForStatistics(
    _ session: Session, timeout: Double = 10,
    until condition: ([String: RelayLegStatistics]) -> Bool
  ) -> [String: RelayLegStatistics] {
    let deadline = Date().addingTimeInterval(timeout)
    var statistics = session.engine.legStatistics()
    while !condition(statistics) {
      guard Date() < deadline else {
        XCTFail("statistics never matched: \(statistics)")
        break
      }
      usleep(10_000)
      statistics = session.engine.legStatistics()
    }
    return statistics
  }
}

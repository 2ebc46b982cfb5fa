import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSMedia
@testable import WCSProtocols

/// The issue's key test: camera → VP8 → RTP send stream → a link with 10 % loss and 50 ms jitter
/// each way → receive stream (jitter buffer, NACK back to the sender's history, PLI → key frame)
/// → video receiver → decoded pictures compared with the source frames by frame number.
final class VideoStreamEndToEndTests: XCTestCase {
  /// RTP and RTCP share the link, as on one bundled transport.
  private enum Datagram {
    case rtp([UInt8])
    case rtcp([UInt8])
  }

  private struct Result {
    var framesSent = 0
    var rendered: Set<Int> = []
    var worstPSNR = Double.infinity
    var wrongNumbers = 0
    var statistics = VideoDecodePipelineStatistics()
    var sender: RTPSendStream.Counters
    var receiver: RTPReceiveSource.Counters
    var nack: NACKGenerator
    var rtt: Double?
    var playoutDelay: Double
    var firstRenderAt: Double?
  }

  private func run(
    width: Int, height: Int, seconds: Double, seed: UInt64, joinAt: Double = 0
  ) throws -> Result {
    let mediaSSRC: UInt32 = 0x1234_5678
    let rtx = RTPRetransmission(ssrc: 0x1234_5679, payloadType: 97)
    let receiverSSRC: UInt32 = 0x0BAD_CAFE
    let camera = VirtualCamera(width: width, height: height, frameRate: 30)
    let encoder = try VP8Encoder(
      configuration: .init(
        width: width, height: height, frameRate: 30, bitrateKbps: width >= 640 ? 1000 : 500))
    var packetizer = VP8Packetizer()
    var sender = RTPSendStream(
      configuration: .init(
        ssrc: mediaSSRC, payloadType: 96, clockRate: 90_000, retransmission: rtx,
        cname: "sender", initialSequenceNumber: 65_000, timestampOffset: 0xFFFF_0000),
      now: virtualTime(0), wallClock: NTPTimestamp(seconds: 3_900_000_000))
    var receiver = VideoReceiveStream(
      configuration: .init(
        source: .init(
          ssrc: mediaSSRC, localSSRC: receiverSSRC, payloadType: 96, clockRate: 90_000),
        retransmission: rtx),
      now: virtualTime(0))
    let video = try VideoDecodePipeline.decodingI420()
    var forward = StreamTestLink<Datagram>(
      seed: seed, lossRate: 0.10, baseDelay: 0.020, jitter: 0.050)
    var backward = StreamTestLink<[UInt8]>(
      seed: seed &+ 1, lossRate: 0.10, baseDelay: 0.020, jitter: 0.050)

    var result = Result(
      sender: sender.counters, receiver: receiver.source.counters, nack: receiver.nackGenerator,
      playoutDelay: 0)
    let timestampOffset = sender.timestampOffset

    func render(_ output: VideoDecodePipeline<I420Image>.Output, now: Double) {
      if output.needsKeyFrame { receiver.requestKeyFrame() }
      for frame in output.frames {
        XCTAssertLessThanOrEqual(frame.arrivalTime, frame.renderTime)
        guard let number = VirtualCamera.decodeFrameNumber(from: frame.picture) else {
          result.wrongNumbers += 1
          continue
        }
        // The RTP timestamp names the same frame as the number stamped in the picture.
        let index = Int(number)
        if camera.rtpTimestamp(frameIndex: index) &+ timestampOffset != frame.rtpTimestamp {
          result.wrongNumbers += 1
        }
        result.rendered.insert(index)
        result.firstRenderAt = result.firstRenderAt ?? now
        result.worstPSNR = min(
          result.worstPSNR, frame.picture.psnr(to: camera.frame(index)) ?? 0)
      }
    }

    let step = 0.005
    let frameCount = Int(seconds * 30)
    var nextFrame = 0
    var tick = 0
    while true {
      let now = Double(tick) * step
      tick += 1
      if now > seconds + 1.5 { break }
      // Capture and send.
      if nextFrame < frameCount, now >= Double(nextFrame) / 30 {
        let timestamp = camera.rtpTimestamp(frameIndex: nextFrame)
        for frame in try encoder.encode(camera.frame(nextFrame), timestamp: timestamp) {
          for payload in packetizer.packetize(frame) {
            forward.send(
              .rtp(try sender.send(payload, now: virtualTime(now)).serialized()), now: now)
          }
        }
        nextFrame += 1
        result.framesSent = nextFrame
      }
      let report = sender.poll(now: virtualTime(now))
      if !report.rtcp.isEmpty {
        forward.send(.rtcp(try RTCPPacket.serializeCompound(report.rtcp)), now: now)
      }

      // Receiver side.
      for (arrival, datagram) in forward.deliver(upTo: now) where arrival >= joinAt {
        switch datagram {
        case .rtp(let bytes):
          let output = try receiver.receive(RTPPacket.parse(bytes), now: virtualTime(arrival)).get()
          render(video.handle(output.packets, now: virtualTime(arrival)), now: arrival)
        case .rtcp(let bytes):
          for case .senderReport(let sr) in try RTCPPacket.parseCompound(bytes) {
            receiver.handleSenderReport(sr, now: virtualTime(arrival))
          }
        }
      }
      let output = receiver.poll(now: virtualTime(now))
      render(video.handle(output.packets, now: virtualTime(now)), now: now)
      if !output.rtcp.isEmpty {
        backward.send(try RTCPPacket.serializeCompound(output.rtcp), now: now)
      }

      // Sender side: feedback.
      for (arrival, bytes) in backward.deliver(upTo: now) {
        for packet in try RTCPPacket.parseCompound(bytes) {
          let reaction = sender.handle(packet, now: virtualTime(arrival))
          for retransmission in reaction.packets { forward.send(.rtp(retransmission), now: now) }
          for event in reaction.events {
            switch event {
            case .keyFrameRequested: encoder.requestKeyFrame()
            case .roundTripTime(let rtt): receiver.roundTripTime = rtt
            default: break
            }
          }
        }
      }
    }
    result.statistics = video.statistics
    result.sender = sender.counters
    result.receiver = receiver.source.counters
    result.nack = receiver.nackGenerator
    result.rtt = sender.roundTripTime?.seconds
    result.playoutDelay = receiver.jitterBuffer.delay
    return result
  }

  /// 10 s at 30 fps, 10 % loss and 0...50 ms extra delay each way (seeded). 320x240 so the debug
  /// build stays fast; `WCS_STREAMS_FULL_SIZE=1` runs 640x480 (about 4 × the CPU time),
  /// `WCS_STREAMS_SEED=<n>` another loss and delay pattern.
  func testLossyJitteryLinkStillRendersNearlyEveryFrame() throws {
    let fullSize = ProcessInfo.processInfo.environment["WCS_STREAMS_FULL_SIZE"] == "1"
    let result = try run(
      width: fullSize ? 640 : 320, height: fullSize ? 480 : 240, seconds: 10,
      seed: ProcessInfo.processInfo.environment["WCS_STREAMS_SEED"].flatMap { UInt64($0) } ?? 0x5EED
    )
    let share = Double(result.rendered.count) / Double(result.framesSent)
    print(
      "video e2e \(fullSize ? "640x480" : "320x240"): rendered \(result.rendered.count)/\(result.framesSent) "
        + "worst PSNR \(result.worstPSNR) dB, longest gap \(result.statistics.longestGap) s, "
        + "NACK requests \(result.nack.requestsSent) recovered \(result.nack.recovered) "
        + "given up \(result.nack.givenUp), retransmissions \(result.sender.retransmissions), "
        + "key frame requests \(result.sender.keyFrameRequests), PLIs \(result.receiver.plisSent), "
        + "rtt \(result.rtt ?? -1), playout delay \(result.playoutDelay), "
        + "fps \(result.statistics.framesPerSecond)")
    XCTAssertEqual(result.framesSent, 300)
    XCTAssertGreaterThanOrEqual(share, 0.95)
    XCTAssertLessThan(result.statistics.longestGap, 1.0, "a freeze of over 1 s")
    XCTAssertGreaterThanOrEqual(result.worstPSNR, 30)
    XCTAssertEqual(result.wrongNumbers, 0)
    XCTAssertLessThan(try XCTUnwrap(result.firstRenderAt), 1.0)
    // The loss was real and repaired by retransmission.
    XCTAssertGreaterThan(result.sender.retransmissions, 50)
    XCTAssertGreaterThan(result.nack.recovered, 50)
    XCTAssertEqual(try XCTUnwrap(result.rtt), 0.09, accuracy: 0.06)
  }

  /// The receiver joins 2 s into the stream, long after the only key frame: the assembler reports
  /// the lost picture, the receive stream sends a PLI, the sender raises a key frame request, and
  /// rendering starts from the new key frame.
  func testLateJoinerGetsAKeyFrameThroughPLI() throws {
    let result = try run(width: 320, height: 240, seconds: 4, seed: 0xFEED, joinAt: 2.0)
    XCTAssertGreaterThanOrEqual(result.receiver.plisSent, 1)
    XCTAssertGreaterThanOrEqual(result.sender.keyFrameRequests, 1)
    XCTAssertGreaterThanOrEqual(result.statistics.keyFramesDecoded, 1)
    let firstRender = try XCTUnwrap(result.firstRenderAt)
    // Join at 2 s + 0.5 s stall timeout + PLI and key frame one way each (~0.1 s) + playout delay.
    XCTAssertLessThan(firstRender, 3.2)
    XCTAssertEqual(result.wrongNumbers, 0)
    XCTAssertGreaterThanOrEqual(result.worstPSNR, 30)
    // Every frame from the key frame on is rendered.
    let first = try XCTUnwrap(result.rendered.min())
    XCTAssertGreaterThanOrEqual(Double(result.rendered.count), Double(120 - first) * 0.95)
    XCTAssertEqual(result.rendered.max(), 119)
  }
}

import TestSupport
import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSMedia
@testable import WCSMediaSeam
@testable import WCSProtocols

/// `VideoDecodePipeline` (state in one value, frames decoded as the assembler completes them
/// from bytes in place, times as `MediaInstant` values) against the pipeline it replaced
/// (`ReferenceVideoDecodePipeline`: an `Output` of frames with a new array of bytes each from
/// the dictionary-based reference assembler, then decoding, times as instants), on seeded real
/// VP8 streams through a link with loss, bursts, reordering, duplicates, very late packets,
/// corrupted and malformed payloads and a wrap of the 16-bit sequence number: every call gives
/// the same pictures (bit for bit), timestamps, key flags, arrival and render instants and key
/// frame requests, and the same statistics after it (all but the CPU time measured).
final class VideoDecodePipelineEquivalenceTests: XCTestCase {
  /// Encoded, packetized VP8 frames of a moving picture: packets of the pictures in order.
  private static func sentPackets(seed: UInt64, frames: Int) throws -> [VP8FrameAssembler.Packet] {
    var random = SplitMix64(seed: seed)
    let camera = VirtualCamera(width: 96, height: 64, frameRate: 30)
    let encoder = try VP8Encoder(
      configuration: .init(width: 96, height: 64, frameRate: 30, bitrateKbps: 300))
    // Small payloads: most pictures span several packets, key frames many.
    var packetizer = VP8Packetizer(
      maxPayloadSize: Int.random(in: 100...1200, using: &random),
      initialPictureID: UInt16.random(in: 0..<0x8000, using: &random))
    let sequence = UInt16.max - UInt16.random(in: 0...40, using: &random)
    return try encodedVP8Packets(
      camera: camera, encoder: encoder, packetizer: &packetizer, firstSequenceNumber: sequence,
      frames: frames
    ) { index in index > 0 && Int.random(in: 0..<12, using: &random) == 0 }
  }

  /// Loses (also in bursts), duplicates, reorders nearby, delays far, corrupts VP8 bytes and
  /// cuts descriptors of some packets.
  private static func link(_ sent: [VP8FrameAssembler.Packet], random: inout SplitMix64)
    -> [VP8FrameAssembler.Packet]
  {
    let impairments = VP8LinkImpairments(
      lossRates: 0...0.03, burst: (0.003, 1...20), duplicateChance: 0.03, reorderChance: 0.15,
      reorderReach: .drawn(0...5), delayedPackets: 0...2, delayDistances: 20...120)
    return impairments.deliver(sent, random: &random) { packet, random in
      if random.chance(0.02), packet.payload.count > 12 {
        // Bits flipped in the VP8 data (after the 4-byte descriptor the packetizer writes),
        // at the start of a frame often in its first partition's size: libvpx rejects the
        // frame or flags it corrupt, or decodes a damaged picture; the same in both.
        let at = random.chance(0.5) ? 5 : Int.random(in: 4..<packet.payload.count, using: &random)
        packet.payload[at] ^= UInt8.random(in: 1...255, using: &random)
      } else if random.chance(0.005) {
        packet.payload = Array(packet.payload.prefix(1))  // malformed: no VP8 data
      }
    }
  }

  func testPipelineMatchesTheArrayPipelineOnLossyStreams() throws {
    var random = SplitMix64(seed: 0xDEC0_DE5)
    var totals = (
      calls: 0, frames: 0, keyRequests: 0, errors: 0, malformed: 0, dropped: 0, freezes: 0,
      multiPacketFrames: 0, kept: 0
    )
    let origin = MediaInstant.now()
    // Which recycled pictures are kept, apart: the link's draws stay those of `random`.
    var keeping = SplitMix64(seed: 0x4EC7_C1ED)
    for run in 0..<16 {
      let sent = try Self.sentPackets(seed: random.next(), frames: 90)
      let packets = Self.link(sent, random: &random)
      let window = Int.random(in: 2...64, using: &random)
      let stall = Duration.milliseconds(Int.random(in: 50...500, using: &random))
      let pipeline = try VideoDecodePipeline<VideoFrame>(
        reorderWindow: window, stallTimeout: stall
      ) { decoder, bytes throws(VP8Error) in try decoder.decodeVideoFrame(bytes) }
      let reference = try ReferenceVideoDecodePipeline<VideoFrame>(
        reorderWindow: window, stallTimeout: stall
      ) { decoder, data throws(VP8Error) in try decoder.decodeVideoFrame(data) }
      // Decoding into the planes of pictures handed back (`recycle`), some of them kept
      // elsewhere (as a renderer may): the same pictures, and a kept one never changes.
      let recycling = try VideoDecodePipeline<VideoFrame>(
        reorderWindow: window, stallTimeout: stall
      ) { decoder, bytes, spare throws(VP8Error) in
        try decoder.decodeVideoFrame(bytes, reusing: &spare)
      }
      var kept: [(picture: VideoFrame, expected: VideoFrame)] = []
      // I420 pictures too (`VP8Decoder.decode`).
      let receiver = try VideoDecodePipeline.decodingI420(
        reorderWindow: window, stallTimeout: stall)
      let receiverReference = try ReferenceVideoDecodePipeline<I420Image>(
        reorderWindow: window, stallTimeout: stall
      ) { decoder, data throws(VP8Error) in try decoder.decode(data) }
      var now = origin + .seconds(run * 100)
      var arrival = now
      var index = 0
      var reused = VideoDecodePipeline<VideoFrame>.Output()
      while index < packets.count {
        // Batches of 0...4 packets, arriving before the call; now and then a pause (freezes,
        // stalls) and calls with no packet.
        let count = min(packets.count - index, Int.random(in: 0...4, using: &random))
        var batch: [ReceivedRTPPacket] = []
        for packet in packets[index..<index + count] {
          arrival += .microseconds(Int.random(in: 0...20_000, using: &random))
          batch.append(packet.received(ssrc: 0x1234, arrival: arrival))
        }
        index += count
        now = max(now, arrival) + .microseconds(Int.random(in: 0...5_000, using: &random))
        if Int.random(in: 0..<40, using: &random) == 0 {
          now += .milliseconds(Int.random(in: 200...900, using: &random))
          arrival = now
        }
        // Late packets may leave `now` before a frame's arrival: render times must not go back.
        let output: VideoDecodePipeline<VideoFrame>.Output
        if Bool.random(using: &random) {
          output = pipeline.handle(batch, now: now)
        } else {
          reused.frames.removeAll(keepingCapacity: true)
          reused.needsKeyFrame = false
          pipeline.handle(batch, now: now, into: &reused)
          output = reused
        }
        let expected = reference.handle(batch, now: now)
        let context = "run \(run), packet \(index)"
        reference.assertSame(output, as: expected, context: context)
        let sameStatistics = reference.assertSameStatistics(pipeline.statistics, context: context)
        let recycled = recycling.handle(batch, now: now)
        reference.assertSame(recycled, as: expected, context: "recycling, " + context)
        _ = reference.assertSameStatistics(recycling.statistics, context: "recycling, " + context)
        for (frame, expectedFrame) in zip(recycled.frames, expected.frames) {
          if Int.random(in: 0..<6, using: &keeping) == 0 {
            kept.append((frame.picture, expectedFrame.picture))
          }
          if Int.random(in: 0..<8, using: &keeping) != 0 { recycling.recycle(frame.picture) }
        }

        let received = receiver.handle(batch, now: now)
        let receivedExpected = receiverReference.handle(batch, now: now)
        receiverReference.assertSame(received, as: receivedExpected, context: context)
        guard output.frames.count == expected.frames.count, sameStatistics else { return }
        totals.calls += 1
        totals.frames += output.frames.count
        totals.keyRequests += output.needsKeyFrame ? 1 : 0
      }
      for (number, entry) in kept.enumerated() {
        XCTAssertEqual(entry.picture, entry.expected, "run \(run): kept picture \(number) changed")
      }
      totals.kept += kept.count
      totals.errors += reference.statistics.decodeErrors
      totals.malformed += reference.statistics.malformedPackets
      totals.dropped += reference.statistics.framesDropped
      totals.freezes += reference.statistics.freezes
      totals.multiPacketFrames += reference.multiPacketFrames
      XCTAssertGreaterThan(sent.count, 80, "run \(run)")
    }
    // Every path was taken: frames of one and of several packets, key frame requests, decode
    // errors, malformed packets, dropped frames, freezes.
    print("pipeline equivalence: \(totals)")
    XCTAssertGreaterThan(totals.frames, 400)
    XCTAssertGreaterThan(totals.multiPacketFrames, 200)
    XCTAssertGreaterThan(totals.keyRequests, 20)
    XCTAssertGreaterThan(totals.errors, 0)
    XCTAssertGreaterThan(totals.malformed, 0)
    XCTAssertGreaterThan(totals.dropped, 20)
    XCTAssertGreaterThan(totals.freezes, 0)
    XCTAssertGreaterThan(totals.kept, 30)
  }
}

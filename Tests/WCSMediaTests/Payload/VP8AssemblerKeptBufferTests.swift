import TestSupport
import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSMedia
@testable import WCSProtocols

/// Hostile streams for the decode side: `VP8FrameAssembler.insert(_:into:)` joining a frame
/// of several packets in a buffer it keeps from frame to frame, and `VideoDecodePipeline`
/// decoding each frame from those bytes in place with times kept as `MediaInstant` values.
/// Frames carry random bytes (so a stale byte of an earlier, longer frame left in the kept
/// buffer would show), grow to hundreds of kilobytes and shrink again; the link loses,
/// duplicates, reorders and delays packets, the 16-bit numbering wraps and restarts (forwards
/// and backwards), and some packets are malformed. Every insert and every call is compared with
/// the references the test target keeps (`ReferenceVP8FrameAssembler`,
/// `ReferenceVideoDecodePipeline`: a new array of bytes per frame, instants kept as instants).
final class VP8AssemblerKeptBufferTests: XCTestCase {
  /// Random bytes of a VP8 stream, frames of very different sizes, as a hostile link delivers
  /// them.
  private struct HostileStream {
    var random: SplitMix64

    mutating func chance(_ probability: Double) -> Bool { random.chance(probability) }

    mutating func bytes(_ count: Int) -> [UInt8] {
      var bytes = [UInt8](repeating: 0, count: count)
      var word: UInt64 = 0
      for index in 0..<count {
        if index & 7 == 0 { word = random.next() }
        bytes[index] = UInt8(truncatingIfNeeded: word >> (UInt64(index & 7) * 8))
      }
      return bytes
    }

    /// The packets of `frames` pictures as sent, then through the link.
    mutating func packets(frames: Int) -> (packets: [VP8FrameAssembler.Packet], jumps: Int) {
      let withPictureID = Bool.random(using: &random)
      var sequence =
        chance(0.5)
        ? UInt16.max - UInt16.random(in: 0...30, using: &random)
        : UInt16.random(in: 0...UInt16.max, using: &random)
      var pictureID = UInt16.random(in: 0..<0x8000, using: &random)
      var sent: [VP8FrameAssembler.Packet] = []
      var jumps = 0
      for index in 0..<frames {
        let isKey = index == 0 || chance(0.1)
        // Mostly small frames, now and then a huge one (a key frame of hundreds of kilobytes)
        // and then small ones again: the kept buffer is then much longer than the frame.
        let count =
          chance(0.04)
          ? Int.random(in: 100...400, using: &random)
          : Int.random(in: 1...(chance(0.5) ? 2 : 12), using: &random)
        for part in 0..<count {
          var payload: [UInt8] = [part == 0 ? 0x10 : 0x00]
          if withPictureID {
            payload[0] |= 0x80
            payload += [0x80, 0x80 | UInt8(pictureID >> 8 & 0x7F), UInt8(pictureID & 0xFF)]
          }
          let size = Int.random(in: 1...1400, using: &random)
          if part == 0 {
            // The VP8 payload header: P bit clear and the start code for a key frame.
            let header: [UInt8] = isKey ? [0x00, 0x11, 0x22, 0x9D, 0x01, 0x2A] : [0x01]
            payload += header + bytes(size)
          } else if chance(0.01) {
            // Malformed: no VP8 data after the descriptor.
          } else {
            payload += bytes(size)
          }
          sent.append(
            .init(
              sequenceNumber: sequence, timestamp: UInt32(index) &* 3000 &+ 0xFFFF_F000,
              marker: part == count - 1, payload: payload))
          sequence &+= 1
        }
        if chance(0.015) {
          // A restarted sender: the numbering jumps far, either way.
          sequence &+= UInt16.random(in: 3000...62_000, using: &random)
          jumps += 1
        }
        pictureID = (pictureID &+ 1) % 0x8000
      }
      return (link(sent), jumps)
    }

    mutating func link(_ sent: [VP8FrameAssembler.Packet]) -> [VP8FrameAssembler.Packet] {
      VP8LinkImpairments(
        lossRates: 0...0.02, burst: nil, duplicateChance: 0.03, reorderChance: 0.1,
        reorderReach: .fixed(4), delayedPackets: 0...3, delayDistances: 40...300
      ).deliver(sent, random: &random)
    }
  }

  /// Copies each frame while its bytes are valid, and checks what the sink contract promises.
  private struct CheckingSink: VP8FrameSink {
    var frames: [VP8FrameAssembler.Frame] = []
    var emptyFrames = 0

    mutating func deliver(
      _ frame: VP8FrameAssembler.DeliveredFrame, data: UnsafeBufferPointer<UInt8>
    ) {
      if data.isEmpty { emptyFrames += 1 }
      frames.append(
        .init(
          frame: EncodedVideoFrame(
            data: Array(data), isKeyFrame: frame.isKeyFrame, timestamp: frame.timestamp),
          pictureID: frame.pictureID, firstSequenceNumber: frame.firstSequenceNumber,
          lastSequenceNumber: frame.lastSequenceNumber))
    }
  }

  /// The joined bytes of every frame equal the reference's new array, byte for byte, also for a
  /// frame much shorter than one joined before it, across renumbering restarts (two frames
  /// joined in one insert) and 16-bit wraps; the statuses and counters are the same.
  func testKeptJoinBufferGivesEachFrameExactlyItsBytes() {
    var random = SplitMix64(seed: 0xA77A_C4E5)
    var totals = (frames: 0, multiPacket: 0, shrunk: 0, bytes: 0, twoInOneInsert: 0, jumps: 0)
    for run in 0..<24 {
      var stream = HostileStream(random: SplitMix64(seed: random.next()))
      let (packets, jumps) = stream.packets(frames: 160)
      totals.jumps += jumps
      let window = Int.random(in: 1...64, using: &random)
      let buffered = Bool.random(using: &random) ? 64 : 2048
      var assembler = VP8FrameAssembler(reorderWindow: window, maxBufferedPackets: buffered)
      var reference = ReferenceVP8FrameAssembler(
        reorderWindow: window, maxBufferedPackets: buffered)
      var longestJoined = 0
      for (index, packet) in packets.enumerated() {
        var sink = CheckingSink()
        let status = assembler.insert(packet, into: &sink)
        let expected = reference.insert(packet)
        let context = "run \(run), packet \(index)"
        XCTAssertEqual(sink.emptyFrames, 0, context)
        XCTAssertEqual(sink.frames.count, expected.frames.count, context)
        for (frame, want) in zip(sink.frames, expected.frames) {
          // Compared without printing hundreds of kilobytes when they differ.
          XCTAssertTrue(frame.frame.data == want.frame.data, "\(context): bytes")
          XCTAssertEqual(frame.frame.isKeyFrame, want.frame.isKeyFrame, context)
          XCTAssertEqual(frame.frame.timestamp, want.frame.timestamp, context)
          XCTAssertEqual(frame.pictureID, want.pictureID, context)
          XCTAssertEqual(frame.firstSequenceNumber, want.firstSequenceNumber, context)
          XCTAssertEqual(frame.lastSequenceNumber, want.lastSequenceNumber, context)
        }
        XCTAssertEqual(status.needsKeyFrame, expected.needsKeyFrame, context)
        XCTAssertEqual(status.dropped, expected.dropped, context)
        XCTAssertEqual(assembler.latePackets, reference.latePackets, context)
        XCTAssertEqual(assembler.discardedFrames, reference.discardedFrames, context)
        XCTAssertEqual(assembler.isWaitingForKeyFrame, reference.isWaitingForKeyFrame, context)
        guard sink.frames.count == expected.frames.count else { return }
        if sink.frames.count > 1 { totals.twoInOneInsert += 1 }
        for frame in sink.frames {
          totals.frames += 1
          totals.bytes += frame.frame.data.count
          guard frame.firstSequenceNumber != frame.lastSequenceNumber else { continue }
          totals.multiPacket += 1
          if frame.frame.data.count < longestJoined { totals.shrunk += 1 }
          longestJoined = max(longestJoined, frame.frame.data.count)
        }
      }
      XCTAssertEqual(assembler.droppedPackets, reference.droppedPackets, "run \(run)")
    }
    print("join buffer attack: \(totals)")
    XCTAssertGreaterThan(totals.frames, 1_000)
    XCTAssertGreaterThan(totals.multiPacket, 500)
    XCTAssertGreaterThan(totals.shrunk, 300)
    XCTAssertGreaterThan(totals.bytes, 3_000_000)
    XCTAssertGreaterThan(totals.twoInOneInsert, 10)
    XCTAssertGreaterThan(totals.jumps, 10)
  }

  /// A stand-in for libvpx that "decodes" a frame to a copy of its bytes (so the picture is
  /// exactly what the pipeline handed the decoder), rejects frames whose sixth byte is 0xEE
  /// (a decode error: waits for a key frame) and shows no picture for those whose sixth byte is
  /// 0xDD.
  private static func fakeDecode(_ bytes: UnsafeBufferPointer<UInt8>) throws(VP8Error) -> [UInt8]? {
    if bytes.count > 5, bytes[5] == 0xEE { throw VP8Error(.decode, message: "fake reject") }
    if bytes.count > 5, bytes[5] == 0xDD { return nil }
    return Array(bytes)
  }

  /// The pipeline against the array pipeline with a decoder that keeps the bytes it is given:
  /// identical pictures (the bytes decoded), timestamps, key flags, arrival and render instants
  /// (a year before now, now, a nanosecond before it and 200 years after it), key
  /// frame requests and statistics, call by call.
  func testPipelineDecodesFromTheKeptBytesAtExactInstants() throws {
    var random = SplitMix64(seed: 0xF00D_DEC0)
    var totals = (frames: 0, errors: 0, dropped: 0, requests: 0, malformed: 0)
    let now = MediaInstant.now()
    let origins: [MediaInstant] = [
      now - .seconds(86_400 * 365), now, now - .nanoseconds(1), now + .seconds(86_400 * 365 * 200),
    ]
    for run in 0..<12 {
      var stream = HostileStream(random: SplitMix64(seed: random.next()))
      let packets = stream.packets(frames: 120).packets
      let window = Int.random(in: 2...64, using: &random)
      let stall = Duration.milliseconds(Int.random(in: 30...400, using: &random))
      let pipeline = try VideoDecodePipeline<[UInt8]>(reorderWindow: window, stallTimeout: stall) {
        _, bytes throws(VP8Error) in try Self.fakeDecode(bytes)
      }
      let reference = try ReferenceVideoDecodePipeline<[UInt8]>(
        reorderWindow: window, stallTimeout: stall
      ) { _, data throws(VP8Error) in
        try data.withUnsafeBufferPointer { bytes throws(VP8Error) in try Self.fakeDecode(bytes) }
      }
      var now = origins[run % origins.count]
      var arrival = now
      var index = 0
      while index < packets.count {
        let count = min(packets.count - index, Int.random(in: 0...6, using: &random))
        var batch: [ReceivedRTPPacket] = []
        for var packet in packets[index..<index + count] {
          // The decoder's verdicts, planted in the VP8 data of a frame's first packet.
          if packet.payload.count > 9, packet.payload[0] & 0x10 != 0 {
            let at = packet.payload[0] & 0x80 != 0 ? 9 : 6
            if Int.random(in: 0..<25, using: &random) == 0 { packet.payload[at] = 0xEE }
            if Int.random(in: 0..<40, using: &random) == 0 { packet.payload[at] = 0xDD }
          }
          // Arrivals a few nanoseconds apart too.
          arrival += .nanoseconds(
            Int64.random(in: 0...20_000_000_000_000_000, using: &random) / 1_000_000_000)
          batch.append(packet.received(ssrc: 7, arrival: arrival))
        }
        index += count
        // Now and then `now` lags the arrivals (render time must not go back) or jumps ahead.
        now =
          Int.random(in: 0..<10, using: &random) == 0
          ? arrival - .milliseconds(3)
          : max(now, arrival) + .microseconds(Int.random(in: 0...3_000, using: &random))
        if Int.random(in: 0..<30, using: &random) == 0 {
          now += .milliseconds(Int.random(in: 100...900, using: &random))
          arrival = now
        }
        let output = pipeline.handle(batch, now: now)
        let expected = reference.handle(batch, now: now)
        let context = "run \(run), packet \(index)"
        reference.assertSame(
          output, as: expected, context: context, pictureContext: "\(context): picture bytes")
        let sameStatistics = reference.assertSameStatistics(pipeline.statistics, context: context)
        guard output.frames.count == expected.frames.count, sameStatistics else { return }
        totals.frames += output.frames.count
        totals.requests += output.needsKeyFrame ? 1 : 0
      }
      totals.errors += reference.statistics.decodeErrors
      totals.dropped += reference.statistics.framesDropped
      totals.malformed += reference.statistics.malformedPackets
    }
    print("pipeline attack: \(totals)")
    XCTAssertGreaterThan(totals.frames, 500)
    XCTAssertGreaterThan(totals.errors, 10)
    XCTAssertGreaterThan(totals.dropped, 50)
    XCTAssertGreaterThan(totals.requests, 10)
    XCTAssertGreaterThan(totals.malformed, 0)
  }

  /// Real VP8 at 320x240 with high-quality key frames of tens of packets between small delta
  /// frames (the kept buffer then holds a long stale tail past each delta frame's bytes), every
  /// picture decoded by libvpx from the kept buffer: the same pictures, bit for bit, as from a
  /// new array of exactly the frame's bytes.
  func testLibvpxDecodesLargeAndSmallFramesFromTheKeptBufferAsFromExactArrays() throws {
    var random = SplitMix64(seed: 0x320_240)
    let camera = VirtualCamera(width: 320, height: 240, frameRate: 30)
    let encoder = try VP8Encoder(
      configuration: .init(width: 320, height: 240, frameRate: 30, bitrateKbps: 4_000))
    var packetizer = VP8Packetizer(maxPayloadSize: 500, initialPictureID: 0x7FF0)
    let sent = try encodedVP8Packets(
      camera: camera, encoder: encoder, packetizer: &packetizer, firstSequenceNumber: 0xFFF0,
      frames: 40
    ) { index in index > 0 && index % 8 == 0 }
    // Nearby reordering and duplicates only: every frame completes.
    var delivered: [VP8FrameAssembler.Packet] = []
    for packet in sent {
      delivered.append(packet)
      if Int.random(in: 0..<30, using: &random) == 0 { delivered.append(packet) }
    }
    for index in delivered.indices.dropLast() where Int.random(in: 0..<8, using: &random) == 0 {
      delivered.swapAt(index, index + 1)
    }
    let pipeline = try VideoDecodePipeline<I420Image> { decoder, bytes throws(VP8Error) in
      try decoder.decode(bytes)
    }
    let reference = try ReferenceVideoDecodePipeline<I420Image> { decoder, data throws(VP8Error) in
      try decoder.decode(data)
    }
    var now = MediaInstant.now()
    var pictures = 0
    for (index, packet) in delivered.enumerated() {
      now += .milliseconds(3)
      let batch = [packet.received(ssrc: 1, arrival: now)]
      let output = pipeline.handle(batch, now: now)
      let expected = reference.handle(batch, now: now)
      XCTAssertEqual(output.frames.count, expected.frames.count, "packet \(index)")
      for (frame, want) in zip(output.frames, expected.frames) {
        XCTAssertTrue(frame.picture == want.picture, "packet \(index): picture")
        XCTAssertEqual(frame.rtpTimestamp, want.rtpTimestamp, "packet \(index)")
        pictures += 1
      }
    }
    XCTAssertEqual(pictures, 40)
    XCTAssertEqual(pipeline.statistics.keyFramesDecoded, 5)
    XCTAssertEqual(pipeline.statistics.decodeErrors, 0)
    // Key frames span many packets, delta frames few: the buffer shrank and grew again.
    XCTAssertGreaterThan(reference.multiPacketFrames, 10)
  }
}

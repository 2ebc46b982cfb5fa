import XCTest

@testable import WCSMedia

final class VP8PacketizerTests: XCTestCase {
  /// Encoded frames of the virtual camera: frame 0 is a key frame.
  private func encodedFrames(count: Int, width: Int = 640, height: Int = 480) throws
    -> [EncodedVideoFrame]
  {
    let camera = VirtualCamera(width: width, height: height)
    let encoder = try VP8Encoder(
      configuration: .init(width: width, height: height, bitrateKbps: 1500))
    return try (0..<count).flatMap {
      try encoder.encode(camera.frame($0), timestamp: camera.rtpTimestamp(frameIndex: $0))
    }
  }

  private func packets(
    _ payloads: [PacketizedPayload], firstSequence: UInt16
  ) -> [VP8FrameAssembler.Packet] {
    payloads.enumerated().map { index, payload in
      VP8FrameAssembler.Packet(
        sequenceNumber: firstSequence &+ UInt16(truncatingIfNeeded: index),
        timestamp: payload.timestamp, marker: payload.marker, payload: payload.payload)
    }
  }

  func testPacketizesKeyFrameWithinSizeLimitAndMarksLastPacket() throws {
    let key = try XCTUnwrap(try encodedFrames(count: 1).first)
    XCTAssertTrue(key.isKeyFrame)
    // The smooth test pattern compresses well (a ~2 KB key frame), so use small packets.
    var packetizer = VP8Packetizer(maxPayloadSize: 500, initialPictureID: 1234)
    let payloads = packetizer.packetize(key)
    XCTAssertGreaterThanOrEqual(payloads.count, 3)
    XCTAssertEqual(payloads.count, (key.data.count + 495) / 496)
    XCTAssertEqual(
      payloads.map(\.marker), Array(repeating: false, count: payloads.count - 1) + [true])
    var data: [UInt8] = []
    for (index, payload) in payloads.enumerated() {
      XCTAssertLessThanOrEqual(payload.payload.count, 500)
      XCTAssertEqual(payload.timestamp, key.timestamp)
      let parsed = try VP8Depacketizer.parse(payload.payload)
      XCTAssertEqual(parsed.descriptor.startOfPartition, index == 0)
      XCTAssertEqual(parsed.descriptor.partitionIndex, 0)
      XCTAssertEqual(parsed.descriptor.pictureID, 1234)
      XCTAssertTrue(parsed.descriptor.pictureIDIs15Bit)
      data += parsed.data
    }
    XCTAssertEqual(data, key.data)
    // Balanced: sizes differ by at most one byte.
    let sizes = payloads.map(\.payload.count)
    XCTAssertLessThanOrEqual((sizes.max() ?? 0) - (sizes.min() ?? 0), 1)
    XCTAssertEqual(packetizer.nextPictureID, 1235)
  }

  func testReassemblesShuffledPacketsIntoTheOriginalFrames() throws {
    let frames = try encodedFrames(count: 4)
    var packetizer = VP8Packetizer(maxPayloadSize: 500)
    var all: [VP8FrameAssembler.Packet] = []
    for frame in frames {
      all += packets(packetizer.packetize(frame), firstSequence: 65_530 &+ UInt16(all.count))
    }
    var generator = SplitMix64(seed: 7)
    // A reorder window wider than the whole burst: any order is reordering, not loss.
    var assembler = VP8FrameAssembler(reorderWindow: all.count + 1)
    var delivered: [VP8FrameAssembler.Frame] = []
    XCTAssertGreaterThanOrEqual(all.count, 8)
    for packet in all.shuffled(using: &generator) {
      let output = assembler.insert(packet)
      XCTAssertFalse(output.needsKeyFrame)
      delivered += output.frames
    }
    XCTAssertEqual(delivered.map(\.frame), frames)
    XCTAssertEqual(delivered.map(\.pictureID), [0, 1, 2, 3])
    XCTAssertTrue(delivered[0].frame.isKeyFrame)
    XCTAssertEqual(delivered[0].firstSequenceNumber, 65_530)
    XCTAssertEqual(assembler.droppedPackets, 0)
    XCTAssertFalse(assembler.isWaitingForKeyFrame)
    // And the reassembled frames decode.
    let decoder = try VP8Decoder()
    for frame in delivered { XCTAssertNotNil(try decoder.decode(frame.frame.data)) }
  }

  func testFrameWithMissingMiddlePacketIsNotDelivered() throws {
    let key = try XCTUnwrap(try encodedFrames(count: 1).first)
    var packetizer = VP8Packetizer(maxPayloadSize: 500)
    var list = packets(packetizer.packetize(key), firstSequence: 100)
    XCTAssertGreaterThanOrEqual(list.count, 3)
    list.remove(at: list.count / 2)
    var assembler = VP8FrameAssembler()
    for packet in list { XCTAssertTrue(assembler.insert(packet).frames.isEmpty) }
    XCTAssertTrue(assembler.isWaitingForKeyFrame)
  }

  func testCorruptDescriptorsAreDroppedAndCounted() throws {
    var assembler = VP8FrameAssembler()
    let bad: [[UInt8]] = [
      [], [0x90], [0x90, 0x80], [0x90, 0x80, 0x81], [0x90, 0x40], [0x90, 0x20],
      [0x90, 0x80, 0x81, 0x00], [0x10, 0x00], [0x10, 0x00, 0x00, 0x00, 0x11, 0x22, 0x33, 1, 2, 3],
    ]
    for (index, payload) in bad.enumerated() {
      let output = assembler.insert(
        .init(sequenceNumber: UInt16(index), timestamp: 0, marker: true, payload: payload))
      XCTAssertNotNil(output.dropped, "\(payload)")
      XCTAssertTrue(output.frames.isEmpty)
    }
    XCTAssertEqual(assembler.droppedPackets, bad.count)
    // A valid frame still gets through afterwards.
    let key = try XCTUnwrap(try encodedFrames(count: 1, width: 64, height: 48).first)
    var packetizer = VP8Packetizer()
    var delivered = 0
    for packet in packets(packetizer.packetize(key), firstSequence: 50) {
      delivered += assembler.insert(packet).frames.count
    }
    XCTAssertEqual(delivered, 1)
  }

  func testPictureIDWrapsAndBridgesSequenceGaps() throws {
    let frames = try encodedFrames(count: 4, width: 64, height: 48)
    var packetizer = VP8Packetizer(initialPictureID: 32_766)
    let payloads = frames.map { packetizer.packetize($0) }
    let ids = try payloads.map { try VP8Depacketizer.parse($0[0].payload).descriptor.pictureID }
    XCTAssertEqual(ids, [32_766, 32_767, 0, 1])
    XCTAssertEqual(packetizer.nextPictureID, 2)
    // Sequence numbers jump by 5 between frames (e.g. padding sent in between): consecutive
    // PictureIDs, across the wrap, still prove nothing was lost.
    var assembler = VP8FrameAssembler()
    var delivered: [UInt16?] = []
    var sequence: UInt16 = 10
    for frame in payloads {
      for packet in packets(frame, firstSequence: sequence) {
        delivered += assembler.insert(packet).frames.map(\.pictureID)
      }
      sequence &+= UInt16(frame.count) + 5
    }
    XCTAssertEqual(delivered, [32_766, 32_767, 0, 1])
  }

  func testTL0PictureIndexIsCarriedAndIncrements() throws {
    let frames = try encodedFrames(count: 2, width: 64, height: 48)
    var packetizer = VP8Packetizer(initialPictureID: 5, tl0PictureIndex: 255)
    let descriptors = try frames.map {
      try VP8Depacketizer.parse(packetizer.packetize($0)[0].payload).descriptor
    }
    XCTAssertEqual(descriptors.map(\.tl0PictureIndex), [255, 0])
    XCTAssertEqual(descriptors.map(\.pictureID), [5, 6])
    // X, I|L, M + PictureID (2 bytes), TL0PICIDX.
    XCTAssertEqual(
      Array(packetizer.packetize(frames[0])[0].payload.prefix(5)), [0x90, 0xC0, 0x80, 0x07, 0x01])
  }

  func testSevenBitPictureIDWrap() throws {
    let frames = try encodedFrames(count: 2, width: 64, height: 48)
    var assembler = VP8FrameAssembler()
    var delivered: [UInt16?] = []
    for (index, (frame, id)) in zip(frames, [UInt16(127), 0]).enumerated() {
      let descriptor = VP8PayloadDescriptor(pictureID: id, pictureIDIs15Bit: false)
      let payload = descriptor.serialized() + frame.data
      // Sequence gap of 3 between the two frames.
      let output = assembler.insert(
        .init(
          sequenceNumber: UInt16(index * 4), timestamp: frame.timestamp, marker: true,
          payload: payload))
      delivered += output.frames.map(\.pictureID)
    }
    XCTAssertEqual(delivered, [127, 0])
  }

  func testLossRequestsKeyFrameAndKeyFrameResumes() throws {
    let camera = VirtualCamera(width: 64, height: 48)
    let encoder = try VP8Encoder(configuration: .init(width: 64, height: 48, bitrateKbps: 200))
    var packetizer = VP8Packetizer()
    var assembler = VP8FrameAssembler(reorderWindow: 4)
    var sequence: UInt16 = 0
    var delivered: [Int] = []
    var requests: [Int] = []
    for index in 0..<20 {
      if index == 12 { encoder.requestKeyFrame() }  // as the sender would on the PLI
      for frame in try encoder.encode(camera.frame(index), timestamp: UInt32(index)) {
        for payload in packetizer.packetize(frame) {
          defer { sequence &+= 1 }
          if index == 5 { continue }  // frame 5 lost
          let output = assembler.insert(
            .init(
              sequenceNumber: sequence, timestamp: payload.timestamp, marker: payload.marker,
              payload: payload.payload))
          delivered += output.frames.map { Int($0.frame.timestamp) }
          if output.needsKeyFrame { requests.append(index) }
        }
      }
    }
    // Frames after the loss are held, then dropped; the key frame at 12 resumes delivery.
    XCTAssertEqual(delivered, Array(0..<5) + Array(12..<20))
    XCTAssertEqual(requests.count, 1)
    XCTAssertLessThan(requests.first ?? 99, 12)
    XCTAssertFalse(assembler.isWaitingForKeyFrame)
  }
}

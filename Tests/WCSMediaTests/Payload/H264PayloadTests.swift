import TestSupport
import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSMedia
@testable import WCSProtocols

final class H264PayloadTests: XCTestCase {
  private typealias Packet = H264AccessUnitAssembler.Packet

  private func encodedFrames(
    count: Int, width: Int = 640, height: Int = 480, maxNALUnitSize: Int? = nil
  ) throws -> [(source: I420Image, frame: EncodedVideoFrame)] {
    let camera = VirtualCamera(width: width, height: height)
    let encoder = try H264Encoder(
      configuration: .init(
        width: width, height: height, bitrateKbps: 1500, maxNALUnitSize: maxNALUnitSize))
    return try (0..<count).map { index in
      let source = camera.frame(index)
      let frame = try XCTUnwrap(
        try encoder.encode(source, timestamp: camera.rtpTimestamp(frameIndex: index)).first)
      return (source, frame)
    }
  }

  /// `frames` packetized, numbered from `firstSequence` (shared with `H264ReorderTests`).
  static func packets(
    _ frames: [EncodedVideoFrame], packetizer: inout H264Packetizer, firstSequence: UInt16 = 100
  ) -> [H264AccessUnitAssembler.Packet] {
    var sequence = firstSequence
    var out: [Packet] = []
    for frame in frames {
      for payload in packetizer.packetize(frame) {
        out.append(
          Packet(
            sequenceNumber: sequence, timestamp: payload.timestamp, marker: payload.marker,
            payload: payload.payload))
        sequence &+= 1
      }
    }
    return out
  }

  private func units(_ stream: [UInt8]) -> [[UInt8]] { H264AnnexB.nalUnits(stream).map(Array.init) }

  func testModeOneSendsParameterSetsInSTAPAAndFragmentsLargeIDR() throws {
    let frames = try encodedFrames(count: 1)
    var packetizer = H264Packetizer()
    let payloads = packetizer.packetize(frames[0].frame)
    XCTAssertGreaterThan(payloads.count, 2)
    XCTAssertEqual(H264NALUnitType.of(payloads[0].payload[0]), H264NALUnitType.stapA)
    guard case .nalUnits(let aggregated) = try H264Depacketizer.parse(payloads[0].payload[...])
    else { return XCTFail("not a STAP-A") }
    XCTAssertEqual(aggregated.map { H264NALUnitType.of($0.first ?? 0) }, [7, 8])
    let fragments = payloads.dropFirst()
    for (index, payload) in fragments.enumerated() {
      XCTAssertLessThanOrEqual(payload.payload.count, 1160)
      XCTAssertEqual(H264NALUnitType.of(payload.payload[0]), H264NALUnitType.fuA)
      XCTAssertEqual(payload.payload[1] & 0x80 != 0, index == 0)
      XCTAssertEqual(payload.payload[1] & 0x40 != 0, index == fragments.count - 1)
      XCTAssertEqual(H264NALUnitType.of(payload.payload[1]), H264NALUnitType.idrSlice)
    }
    XCTAssertEqual(
      payloads.map(\.marker), Array(repeating: false, count: payloads.count - 1) + [true])
  }

  func testModeOneRoundTripDecodesEveryPicture() throws {
    let frames = try encodedFrames(count: 15)
    var packetizer = H264Packetizer()
    var assembler = H264AccessUnitAssembler()
    let decoder = try H264Decoder()
    var delivered: [EncodedVideoFrame] = []
    for packet in Self.packets(frames.map(\.frame), packetizer: &packetizer) {
      let output = assembler.insert(packet)
      XCTAssertNil(output.dropped)
      delivered += output.accessUnits
    }
    XCTAssertEqual(delivered.count, 15)
    for (index, unit) in delivered.enumerated() {
      XCTAssertEqual(units(unit.data), units(frames[index].frame.data))
      XCTAssertEqual(unit.isKeyFrame, index == 0)
      XCTAssertEqual(unit.timestamp, frames[index].frame.timestamp)
      let picture = try XCTUnwrap(try decoder.decode(unit.data))
      XCTAssertGreaterThanOrEqual(try XCTUnwrap(picture.psnr(to: frames[index].source)), 30)
      XCTAssertEqual(VirtualCamera.decodeFrameNumber(from: picture), UInt32(index))
    }
    XCTAssertEqual(assembler.droppedPackets, 0)
    XCTAssertEqual(assembler.droppedAccessUnits, 0)
  }

  func testModeZeroSendsOnlySingleNALUnitPackets() throws {
    let frames = try encodedFrames(count: 3, maxNALUnitSize: 1100)
    var packetizer = H264Packetizer(packetizationMode: 0)
    var assembler = H264AccessUnitAssembler()
    var delivered = 0
    for packet in Self.packets(frames.map(\.frame), packetizer: &packetizer) {
      XCTAssertTrue((1...23).contains(H264NALUnitType.of(packet.payload[0])))
      XCTAssertLessThanOrEqual(packet.payload.count, 1160)
      delivered += assembler.insert(packet).accessUnits.count
    }
    XCTAssertEqual(delivered, 3)
    XCTAssertEqual(packetizer.oversizedNALUnits, 0)
  }

  func testIDRWithoutParameterSetsGetsTheLastOnesRepeated() throws {
    let frames = try encodedFrames(count: 1, width: 160, height: 120)
    var packetizer = H264Packetizer()
    _ = packetizer.packetize(frames[0].frame)
    let idrOnly = units(frames[0].frame.data).filter { H264NALUnitType.of($0[0]) == 5 }
    let bare = EncodedVideoFrame(data: H264AnnexB.stream(idrOnly), isKeyFrame: true, timestamp: 9)
    var assembler = H264AccessUnitAssembler()
    var delivered: [EncodedVideoFrame] = []
    for packet in Self.packets([bare], packetizer: &packetizer) {
      delivered += assembler.insert(packet).accessUnits
    }
    XCTAssertEqual(delivered.count, 1)
    XCTAssertEqual(units(delivered[0].data).map { H264NALUnitType.of($0[0]) }, [7, 8, 5])
  }

  func testLostFragmentDropsTheAccessUnitAndWaitsForIDR() throws {
    let frames = try encodedFrames(count: 4)
    var packetizer = H264Packetizer()
    var all = Self.packets(frames.map(\.frame), packetizer: &packetizer)
    // Lose the second packet of the IDR (its first FU-A).
    all.remove(at: 1)
    var assembler = H264AccessUnitAssembler()
    var delivered = 0
    var requested = false
    var reasons: [H264PayloadError] = []
    for packet in all {
      let output = assembler.insert(packet)
      delivered += output.accessUnits.count
      requested = requested || output.needsKeyFrame
      if let reason = output.dropped { reasons.append(reason) }
    }
    XCTAssertEqual(delivered, 0)
    XCTAssertTrue(requested)
    XCTAssertTrue(assembler.isWaitingForKeyFrame)
    XCTAssertEqual(reasons.first, .lostPacket)
    XCTAssertEqual(assembler.droppedAccessUnits, 4)
  }

  func testMalformedPayloadsAreDroppedWithAReason() {
    let cases: [([UInt8], H264PayloadError)] = [
      ([], .emptyPayload),
      ([0x80, 1], .forbiddenBit),
      ([0x00, 1, 2], .unsupportedNALType(0)),
      ([0x1E, 1, 2], .unsupportedNALType(30)),
      ([0x1F, 1, 2], .unsupportedNALType(31)),
      ([0x19, 1, 2], .unsupportedNALType(25)),
      ([0x18, 0x00, 0x09, 0x67, 1], .badAggregationLength),
      ([0x18, 0x00, 0x02, 0x67, 1, 0x00], .badAggregationLength),
      ([0x18, 0x00, 0x00], .badAggregationLength),
      ([0x18], .badAggregationLength),
      ([0x18, 0x00, 0x02, 0x1F, 1], .unsupportedNALType(31)),
      ([0x7C, 0xC5, 1], .badFragment),
      ([0x7C, 0x85], .badFragment),
      ([0x7C, 0x9E, 1], .unsupportedNALType(30)),
    ]
    for (payload, expected) in cases {
      XCTAssertThrowsError(try H264Depacketizer.parse(payload[...]), "\(payload)") { error in
        XCTAssertEqual(error as? H264PayloadError, expected, "\(payload)")
      }
    }
  }

  func testAccessUnitWhosePacketBeforeWasLostIsNotDelivered() throws {
    let frames = try encodedFrames(count: 3, width: 160, height: 120)
    var packetizer = H264Packetizer()
    var all = Self.packets(frames.map(\.frame), packetizer: &packetizer)
    // Lose the last packet of the IDR (its marker): the IDR is incomplete, and the next
    // access unit may have lost its first packet, so neither is delivered.
    let idrPackets = all.prefix { $0.timestamp == frames[0].frame.timestamp }.count
    all.remove(at: idrPackets - 1)
    var assembler = H264AccessUnitAssembler()
    var delivered = 0
    for packet in all { delivered += assembler.insert(packet).accessUnits.count }
    XCTAssertEqual(delivered, 0)
    XCTAssertEqual(assembler.droppedAccessUnits, 3)
  }

  func testFragmentWithoutStartIsCountedAndRequestsKeyFrame() {
    var assembler = H264AccessUnitAssembler()
    let output = assembler.insert(
      Packet(sequenceNumber: 1, timestamp: 10, marker: true, payload: [0x7C, 0x45, 1, 2, 3]))
    XCTAssertEqual(output.dropped, .fragmentWithoutStart)
    XCTAssertTrue(output.needsKeyFrame)
    XCTAssertEqual(assembler.droppedPackets, 1)
    XCTAssertEqual(assembler.droppedAccessUnits, 1)
  }

  func testSliceWithoutPPSIsDropped() throws {
    let frames = try encodedFrames(count: 1, width: 160, height: 120)
    let idrOnly = units(frames[0].frame.data).filter { H264NALUnitType.of($0[0]) == 5 }
    var assembler = H264AccessUnitAssembler()
    var dropped: [H264PayloadError] = []
    var sequence: UInt16 = 0
    for unit in idrOnly {
      sequence += 1
      let output = assembler.insert(
        Packet(sequenceNumber: sequence, timestamp: 0, marker: true, payload: unit))
      XCTAssertTrue(output.accessUnits.isEmpty)
      if let reason = output.dropped { dropped.append(reason) }
    }
    XCTAssertEqual(dropped.first, .missingParameterSet)
  }

  func testSPSClaimingHugePictureIsDropped() throws {
    var writer = ExpGolombBitWriter()
    for (value, bits) in [(0x67, 8), (66, 8), (0xC0, 8), (31, 8)] { writer.bits(value, bits) }
    for value in [0, 0, 2, 1] { writer.ue(value) }
    writer.bits(0, 1)
    writer.ue(1023)
    writer.ue(1023)
    for bit in [1, 1, 0, 1] { writer.bits(bit, 1) }
    var assembler = H264AccessUnitAssembler()
    let output = assembler.insert(
      Packet(sequenceNumber: 7, timestamp: 0, marker: true, payload: writer.bytes))
    XCTAssertEqual(output.dropped, .pictureTooLarge)
    XCTAssertTrue(output.needsKeyFrame)
  }

  func testLatePacketsAreIgnored() throws {
    let frames = try encodedFrames(count: 2, width: 160, height: 120)
    var packetizer = H264Packetizer()
    let all = Self.packets(frames.map(\.frame), packetizer: &packetizer)
    var assembler = H264AccessUnitAssembler()
    var delivered = 0
    for packet in all { delivered += assembler.insert(packet).accessUnits.count }
    delivered += assembler.insert(all[0]).accessUnits.count
    XCTAssertEqual(delivered, 2)
    XCTAssertEqual(assembler.latePackets, 1)
  }
}

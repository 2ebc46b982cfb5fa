import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSMedia
@testable import WCSProtocols

/// The H.264 assembler's reorder window: a packet that comes late (a retransmission after the
/// jitter buffer let its gap through) still completes its access unit, as with VP8.
final class H264ReorderTests: XCTestCase {
  private typealias Packet = H264AccessUnitAssembler.Packet

  /// `count` pictures of the virtual camera at 320x240, an IDR every `keyFrameEvery`,
  /// packetized in mode 1 from sequence number 65 530 (so the numbering wraps).
  private func packets(count: Int, keyFrameEvery: Int? = nil) throws -> [Packet] {
    let camera = VirtualCamera(width: 320, height: 240)
    let encoder = try H264Encoder(
      configuration: .init(width: 320, height: 240, bitrateKbps: 800, maxNALUnitSize: 600))
    var frames: [EncodedVideoFrame] = []
    for index in 0..<count {
      if let keyFrameEvery, index > 0, index % keyFrameEvery == 0 { encoder.requestKeyFrame() }
      frames += try encoder.encode(
        camera.frame(index), timestamp: camera.rtpTimestamp(frameIndex: index))
    }
    var packetizer = H264Packetizer()
    return H264PayloadTests.packets(frames, packetizer: &packetizer, firstSequence: 65_530)
  }

  private func frameNumbers(_ units: [EncodedVideoFrame]) throws -> [UInt32] {
    let decoder = try H264Decoder()
    return try units.compactMap { unit in
      try decoder.decode(unit.data).flatMap { VirtualCamera.decodeFrameNumber(from: $0) }
    }
  }

  func testPacketArrivingWithinTheWindowCompletesItsAccessUnit() throws {
    var all = try packets(count: 10)
    XCTAssertGreaterThan(all.count, 20)
    // A packet of picture 3 or so arrives 12 packets late, as a retransmission would.
    let late = all.remove(at: all.count / 3)
    all.insert(late, at: all.count / 3 + 12)
    var assembler = H264AccessUnitAssembler(reorderWindow: 64)
    var delivered: [EncodedVideoFrame] = []
    var keyFrameRequests = 0
    for packet in all {
      let output = assembler.insert(packet)
      XCTAssertNil(output.dropped)
      // Asked for at the start, before the first IDR is whole; never after.
      if output.needsKeyFrame, !delivered.isEmpty { keyFrameRequests += 1 }
      delivered += output.accessUnits
    }
    XCTAssertEqual(try frameNumbers(delivered), Array(0..<10))
    XCTAssertEqual(assembler.droppedAccessUnits, 0)
    XCTAssertEqual(assembler.waitingPackets, 0)
    XCTAssertEqual(keyFrameRequests, 0)
  }

  func testWithoutAWindowTheSameLatePacketDropsPictures() throws {
    var all = try packets(count: 10)
    let late = all.remove(at: all.count / 3)
    all.insert(late, at: all.count / 3 + 12)
    var assembler = H264AccessUnitAssembler()
    var delivered: [EncodedVideoFrame] = []
    for packet in all { delivered += assembler.insert(packet).accessUnits }
    XCTAssertLessThan(delivered.count, 10)
    XCTAssertGreaterThan(assembler.droppedAccessUnits, 0)
    XCTAssertEqual(assembler.latePackets, 1)
  }

  func testLossBeyondTheWindowIsDeclaredAndAKeyFrameAskedFor() throws {
    var all = try packets(count: 30)
    all.remove(at: all.count / 4)
    var assembler = H264AccessUnitAssembler(reorderWindow: 8)
    var delivered: [EncodedVideoFrame] = []
    var droppedAt: Int?
    var waitedMost = 0
    for (index, packet) in all.enumerated() {
      let output = assembler.insert(packet)
      waitedMost = max(waitedMost, assembler.waitingPackets)
      if output.dropped == .lostPacket, droppedAt == nil {
        droppedAt = index
        XCTAssertTrue(output.needsKeyFrame)
      }
      delivered += output.accessUnits
    }
    // The loss is given up once 9 packets came after the gap, not at the first one.
    XCTAssertGreaterThanOrEqual(try XCTUnwrap(droppedAt), all.count / 4 + 8)
    XCTAssertLessThanOrEqual(waitedMost, 9, "the wait is bounded by the window")
    let numbers = try frameNumbers(delivered)
    XCTAssertEqual(numbers, Array(0..<UInt32(numbers.count)), "the pictures before the loss")
    XCTAssertLessThan(numbers.count, 30, "no IDR came after the loss")
  }

  func testWholeIDRAfterAGapIsDeliveredWithoutWaitingOutTheWindow() throws {
    var all = try packets(count: 12, keyFrameEvery: 6)
    // The IDR of picture 6 starts right after picture 5's marker packet.
    let idrTimestamp = VirtualCamera(width: 320, height: 240).rtpTimestamp(frameIndex: 6)
    let idrStart = try XCTUnwrap(all.firstIndex { $0.timestamp == idrTimestamp })
    XCTAssertTrue(all[idrStart - 1].marker)
    XCTAssertTrue(
      all[idrStart...].prefix { $0.timestamp == idrTimestamp }.contains {
        H264Depacketizer.startsKeyFrame($0.payload[...])
      })
    // A packet before picture 5's marker is lost for good.
    all.remove(at: idrStart - 2)
    var assembler = H264AccessUnitAssembler(reorderWindow: 512)
    var delivered: [EncodedVideoFrame] = []
    for packet in all { delivered += assembler.insert(packet).accessUnits }
    let numbers = try frameNumbers(delivered)
    XCTAssertEqual(numbers.first, 0)
    XCTAssertTrue(numbers.contains(6), "the IDR was delivered: \(numbers)")
    XCTAssertEqual(Array(numbers.drop { $0 < 6 }), Array(6..<12))
    XCTAssertFalse(numbers.contains(5), "picture 5 lost a packet")
    XCTAssertEqual(assembler.waitingPackets, 0)
  }

  func testDuplicatesAndOldPacketsWhileWaitingAreIgnored() throws {
    var all = try packets(count: 6)
    let late = all.remove(at: 5)
    all.insert(late, at: 9)
    all.insert(all[7], at: 8)  // a duplicate while the gap is open
    all.append(all[0])  // an old one at the end
    var assembler = H264AccessUnitAssembler(reorderWindow: 64)
    var delivered: [EncodedVideoFrame] = []
    for packet in all { delivered += assembler.insert(packet).accessUnits }
    XCTAssertEqual(try frameNumbers(delivered), Array(0..<6))
    XCTAssertEqual(assembler.latePackets, 2)
  }

  func testKeyFrameStartIsFoundInEachPacketShape() {
    // Single IDR NAL unit, first_mb_in_slice 0 (ue(v) "1").
    XCTAssertTrue(H264Depacketizer.startsKeyFrame([0x65, 0x88, 0x84]))
    // An IDR slice that does not start the picture (first_mb_in_slice 1: "010").
    XCTAssertFalse(H264Depacketizer.startsKeyFrame([0x65, 0x40, 0x84]))
    // Non-IDR slice, SPS alone.
    XCTAssertFalse(H264Depacketizer.startsKeyFrame([0x41, 0x9A, 0x00]))
    XCTAssertFalse(H264Depacketizer.startsKeyFrame([0x67, 0x42, 0x00]))
    // STAP-A: SPS (2 bytes), then IDR (2 bytes).
    XCTAssertTrue(H264Depacketizer.startsKeyFrame([0x18, 0, 2, 0x67, 0x42, 0, 2, 0x65, 0x88]))
    XCTAssertFalse(H264Depacketizer.startsKeyFrame([0x18, 0, 2, 0x67, 0x42, 0, 2, 0x68, 0xCE]))
    // A STAP-A size past the end is not read past it.
    XCTAssertFalse(H264Depacketizer.startsKeyFrame([0x18, 0, 9, 0x65, 0x88]))
    // FU-A: start of an IDR; its middle; the start of a non-IDR.
    XCTAssertTrue(H264Depacketizer.startsKeyFrame([0x7C, 0x85, 0x88, 0x84]))
    XCTAssertFalse(H264Depacketizer.startsKeyFrame([0x7C, 0x05, 0x88, 0x84]))
    XCTAssertFalse(H264Depacketizer.startsKeyFrame([0x7C, 0x81, 0x9A, 0x84]))
    XCTAssertFalse(H264Depacketizer.startsKeyFrame([0x7C, 0x85]))
    XCTAssertFalse(H264Depacketizer.startsKeyFrame([]))
  }
}

import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// A new source taking over a played stream (the connection makes a new receive stream for the
/// new SSRC, but the frames go to the same assembler) numbers its packets from a random point:
/// half the time that is "behind" the last frame delivered. The assembler must not take its
/// packets for late ones of the old source until the numbering catches up (tens of thousands of
/// packets: minutes of frozen video).
final class VP8FrameAssemblerRenumberingTests: XCTestCase {
  /// A key frame (or delta frame) of `parts` packets from `sequence` on.
  private func frame(
    _ sequence: UInt16, timestamp: UInt32, isKey: Bool, parts: Int = 2
  ) -> [VP8FrameAssembler.Packet] {
    (0..<parts).map { part in
      var payload: [UInt8] = [part == 0 ? 0x10 : 0x00]
      if part == 0 {
        payload +=
          isKey ? [0x00, 0x01, 0x00, 0x9D, 0x01, 0x2A, 1, 2, 3, 4] : [0x01, 0x02, 0x00, 7]
      } else {
        payload += [UInt8(part), 9]
      }
      return VP8FrameAssembler.Packet(
        sequenceNumber: sequence &+ UInt16(part), timestamp: timestamp,
        marker: part == parts - 1, payload: payload)
    }
  }

  private func run(oldStart: UInt16, newStart: UInt16) -> (old: Int, new: [UInt32], late: Int) {
    var assembler = VP8FrameAssembler()
    var delivered: [UInt32] = []
    var sequence = oldStart
    for index in 0..<50 {
      for packet in frame(sequence, timestamp: UInt32(index) * 3000, isKey: index == 0) {
        delivered += assembler.insert(packet).frames.map(\.frame.timestamp)
      }
      sequence &+= 2
    }
    let old = delivered.count
    delivered = []
    sequence = newStart
    for index in 0..<10 {
      let timestamp = 7_000_000 + UInt32(index) * 3000
      for packet in frame(sequence, timestamp: timestamp, isKey: index == 0) {
        delivered += assembler.insert(packet).frames.map(\.frame.timestamp)
      }
      sequence &+= 2
    }
    return (old, delivered, assembler.latePackets)
  }

  func testANewSourceNumberedFarBehindIsPlayedFromItsKeyFrame() {
    let expected = (0..<10).map { 7_000_000 + UInt32($0) * 3000 }
    // 20,000 behind; 30,000 behind across the 16-bit wrap; 40,000 ahead (= 25,536 behind).
    for (oldStart, newStart) in [(30_000, 10_000), (10_000, 45_536), (1_000, 41_000)] {
      let result = run(oldStart: UInt16(oldStart), newStart: UInt16(newStart))
      XCTAssertEqual(result.old, 50, "\(oldStart) -> \(newStart)")
      XCTAssertEqual(result.new, expected, "\(oldStart) -> \(newStart)")
      XCTAssertEqual(result.late, 0, "\(oldStart) -> \(newStart)")
    }
  }

  func testANewSourceNumberedAheadIsPlayedToo() {
    let result = run(oldStart: 1_000, newStart: 9_000)
    XCTAssertEqual(result.old, 50)
    XCTAssertEqual(result.new, (0..<10).map { 7_000_000 + UInt32($0) * 3000 })
  }

  /// A single stray packet far behind (a duplicate from long ago) is dropped as late and
  /// changes nothing: only two in a row, numbered one after the other, are a new numbering.
  func testAStrayPacketFarBehindIsOnlyLate() {
    var assembler = VP8FrameAssembler()
    var delivered = 0
    var sequence: UInt16 = 30_000
    for index in 0..<20 {
      if index == 10 {
        let stray = frame(1_000, timestamp: 5, isKey: true)[0]
        XCTAssertEqual(assembler.insert(stray).frames, [])
      }
      for packet in frame(sequence, timestamp: UInt32(index) * 3000, isKey: index == 0) {
        delivered += assembler.insert(packet).frames.count
      }
      sequence &+= 2
    }
    XCTAssertEqual(delivered, 20)
    XCTAssertEqual(assembler.latePackets, 1)
    XCTAssertFalse(assembler.isWaitingForKeyFrame)
  }

  /// Two stray old packets one after the other, but with a packet of the stream between them,
  /// are not two in a row: both stay late.
  func testStrayPacketsWithTheStreamBetweenThemAreOnlyLate() {
    var assembler = VP8FrameAssembler()
    var delivered = 0
    var sequence: UInt16 = 30_000
    let strays = frame(1_000, timestamp: 5, isKey: true)
    for index in 0..<20 {
      let packets = frame(sequence, timestamp: UInt32(index) * 3000, isKey: index == 0)
      if index == 10 {
        XCTAssertEqual(assembler.insert(strays[0]).frames, [])
        delivered += assembler.insert(packets[0]).frames.count
        XCTAssertEqual(assembler.insert(strays[1]).frames, [])
        delivered += assembler.insert(packets[1]).frames.count
      } else {
        for packet in packets { delivered += assembler.insert(packet).frames.count }
      }
      sequence &+= 2
    }
    XCTAssertEqual(delivered, 20)
    XCTAssertEqual(assembler.latePackets, 2)
    XCTAssertFalse(assembler.isWaitingForKeyFrame)
  }
}

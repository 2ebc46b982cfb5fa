import TestSupport
import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// Hostile streams for `VP8FrameAssembler`: a stored packet looks only at its own frame
/// (`deliverableFrame(containing:)`) before the first delivery of its drain, instead of scanning
/// the whole buffer. Hand-made streams where that matters most — a key frame awaited with the
/// buffer full (`maxBufferedPackets`), a frame completed by a late middle or first packet while
/// later frames are complete already (one insert then delivers a chain), the 16-bit wrap inside
/// such a frame, duplicates and frames sent backwards, a renumbering inside a frame, `restart()`
/// in the middle of a frame — and seeded streams built to starve key frames and reorder far,
/// each `insert` compared with `ReferenceVP8FrameAssembler` (the dictionary version that
/// rescans every frame start after every delivery): the same frames, key frame requests,
/// dropped packets and counters.
final class VP8AssemblerFrameLookupTests: XCTestCase {
  /// A packet of a synthetic VP8 stream: the descriptor (S bit for a frame start, a 15-bit
  /// PictureID when given), then a payload header with the P bit (key or delta) for a start.
  private static func packet(
    _ sequence: UInt16, timestamp: UInt32, marker: Bool, start: Bool, key: Bool = false,
    pictureID: UInt16? = nil, tag: UInt8 = 0
  ) -> VP8FrameAssembler.Packet {
    var payload: [UInt8] = [start ? 0x10 : 0x00]
    if let pictureID {
      payload[0] |= 0x80
      payload += [0x80, 0x80 | UInt8(pictureID >> 8 & 0x7F), UInt8(pictureID & 0xFF)]
    }
    if start {
      payload += key ? [0x00, tag, 0x00, 0x9D, 0x01, 0x2A, 1, 2, 3, 4] : [0x01, tag, 0x00, 7]
    } else {
      payload += [0x55, tag]
    }
    return .init(sequenceNumber: sequence, timestamp: timestamp, marker: marker, payload: payload)
  }

  /// The packets of one frame of `count` packets from `first`.
  private static func frame(
    first: UInt16, count: Int, timestamp: UInt32, key: Bool = false, pictureID: UInt16? = nil,
    tag: UInt8 = 0
  ) -> [VP8FrameAssembler.Packet] {
    (0..<count).map { part in
      packet(
        first &+ UInt16(part), timestamp: timestamp, marker: part == count - 1, start: part == 0,
        key: key, pictureID: pictureID, tag: tag &+ UInt8(part))
    }
  }

  /// The assembler and the reference side by side; `restart()` restarts the assembler and
  /// replaces the reference by a new one (it has no `restart`), its counters then compared as
  /// what was counted since.
  private struct Differential {
    var assembler: VP8FrameAssembler
    var reference: ReferenceVP8FrameAssembler
    let window: Int
    let buffered: Int
    var base = (late: 0, discarded: 0, dropped: 0)
    /// Frames delivered, inserts that delivered two frames or more, inserts whose first frame
    /// was completed by a packet other than its marker packet (a late middle or first packet),
    /// and inserts that differed from the reference.
    var delivered = 0
    var chains = 0
    var completedLate = 0
    var failures = 0

    init(window: Int, buffered: Int) {
      self.window = window
      self.buffered = buffered
      assembler = VP8FrameAssembler(reorderWindow: window, maxBufferedPackets: buffered)
      reference = ReferenceVP8FrameAssembler(reorderWindow: window, maxBufferedPackets: buffered)
    }

    mutating func restart() {
      assembler.restart()
      reference = ReferenceVP8FrameAssembler(reorderWindow: window, maxBufferedPackets: buffered)
      base = (assembler.latePackets, assembler.discardedFrames, assembler.droppedPackets)
    }

    /// Inserts `packet` into both; false (after failing) when they differ.
    @discardableResult
    mutating func insert(
      _ packet: VP8FrameAssembler.Packet, _ context: @autoclosure () -> String,
      file: StaticString = #filePath, line: UInt = #line
    ) -> VP8FrameAssembler.Output {
      let output = assembler.insert(packet)
      let expected = reference.insert(packet)
      let same =
        output == expected
        && assembler.latePackets - base.late == reference.latePackets
        && assembler.discardedFrames - base.discarded == reference.discardedFrames
        && assembler.droppedPackets - base.dropped == reference.droppedPackets
        && assembler.isWaitingForKeyFrame == reference.isWaitingForKeyFrame
      if !same {
        failures += 1
        XCTFail(
          "\(context()): got \(Self.describe(output)) waiting \(assembler.isWaitingForKeyFrame)"
            + " late \(assembler.latePackets - base.late)"
            + " discarded \(assembler.discardedFrames - base.discarded); want"
            + " \(Self.describe(expected)) waiting \(reference.isWaitingForKeyFrame)"
            + " late \(reference.latePackets) discarded \(reference.discardedFrames)",
          file: file, line: line)
      }
      delivered += output.frames.count
      if output.frames.count > 1 { chains += 1 }
      if let first = output.frames.first, packet.sequenceNumber != first.lastSequenceNumber {
        completedLate += 1
      }
      return output
    }

    static func describe(_ output: VP8FrameAssembler.Output) -> String {
      let frames = output.frames.map {
        "\($0.firstSequenceNumber)-\($0.lastSequenceNumber)\($0.frame.isKeyFrame ? "K" : "")"
      }
      return
        "\(frames) key \(output.needsKeyFrame) dropped \(output.dropped.map { "\($0)" } ?? "-")"
    }
  }

  /// A key frame is awaited while hundreds of delta packets fill the buffer to
  /// `maxBufferedPackets` and beyond (trimmed); the key frame's middle packet is held back
  /// while ten delta frames after it complete; when it comes, one insert delivers the key frame
  /// and the ten after it. Then the same with the held packet arriving only once the buffer has
  /// moved past it (late: nothing delivered, the wait goes on), and with PictureIDs.
  func testKeyFrameAwaitedWithAFullBufferThenCompletedByALateMiddlePacket() {
    for (withPictureID, heldLong) in [(false, false), (true, false), (false, true), (true, true)] {
      var run = Differential(window: 8, buffered: 64)
      var sequence: UInt16 = 65_000
      var pictureID: UInt16 = 0x7FF0
      var timestamp: UInt32 = 0xFFFF_0000
      func next(_ count: Int, key: Bool = false) -> [VP8FrameAssembler.Packet] {
        defer {
          sequence &+= UInt16(count)
          pictureID = (pictureID &+ 1) % 0x8000
          timestamp &+= 3000
        }
        return Self.frame(
          first: sequence, count: count, timestamp: timestamp, key: key,
          pictureID: withPictureID ? pictureID : nil, tag: UInt8(truncatingIfNeeded: sequence))
      }
      let context = "pictureID \(withPictureID), held long \(heldLong)"
      // 100 delta frames of three packets: 300 packets while waiting, the buffer trimmed.
      for index in 0..<100 {
        for packet in next(3) { run.insert(packet, "\(context), delta \(index)") }
      }
      let key = next(5, key: true)
      for (part, packet) in key.enumerated() where part != 2 {
        run.insert(packet, "\(context), key part \(part)")
      }
      for index in 0..<(heldLong ? 30 : 10) {
        for packet in next(3) { run.insert(packet, "\(context), after key \(index)") }
      }
      let output = run.insert(key[2], "\(context), the key frame's middle packet")
      if heldLong {
        XCTAssertEqual(output.frames, [], context)
        XCTAssertTrue(run.assembler.isWaitingForKeyFrame, context)
      } else {
        XCTAssertEqual(output.frames.count, 11, context)
        XCTAssertEqual(output.frames.first?.frame.isKeyFrame, true, context)
        XCTAssertFalse(run.assembler.isWaitingForKeyFrame, context)
      }
      // A new key frame, complete, ends any wait; the stream goes on.
      for packet in next(4, key: true) { run.insert(packet, "\(context), second key") }
      for index in 0..<5 {
        for packet in next(2) { run.insert(packet, "\(context), tail \(index)") }
      }
      XCTAssertFalse(run.assembler.isWaitingForKeyFrame, context)
    }
  }

  /// After a key frame, frame 2's middle packet is late while frames 3 to 5 are complete (they
  /// do not follow the last delivered frame: no delivery); the late packet completes frame 2,
  /// and that one insert delivers frames 2 to 5. Across the 16-bit wrap (frame 2 straddles it),
  /// with and without PictureIDs; then a variant where frame 4 is a key frame (delivered at
  /// once, skipping 2 and 3, so the late packet is then late), and one where frame 2's first
  /// packet is the late one, and one where every packet comes twice and each frame is sent
  /// backwards (marker first).
  func testLatePacketCompletesAFrameWhileLaterOnesAreComplete() {
    for variant in 0..<8 {
      let withPictureID = variant & 1 == 1
      let keyInTheMiddle = variant & 2 == 2
      let lateFirst = variant & 4 == 4
      let context = "variant \(variant)"
      var run = Differential(window: 30, buffered: 2048)
      // Frame 1 (key) at 65,530...65,532; frame 2 at 65,533...65,537 (wraps after 65,535).
      let starts: [UInt16] = [65_530, 65_533, 2, 5, 7, 10]
      let counts = [3, 5, 3, 2, 3, 1]
      var frames: [[VP8FrameAssembler.Packet]] = []
      for (index, first) in starts.enumerated() {
        frames.append(
          Self.frame(
            first: first, count: counts[index], timestamp: UInt32(index) * 3000,
            key: index == 0 || (keyInTheMiddle && index == 3),
            pictureID: withPictureID ? UInt16(100 + index) : nil, tag: UInt8(index * 16)))
      }
      for packet in frames[0] { run.insert(packet, "\(context), frame 1") }
      let held = lateFirst ? 0 : 2
      for (part, packet) in frames[1].enumerated() where part != held {
        run.insert(packet, "\(context), frame 2 part \(part)")
      }
      for index in 2..<5 {
        for packet in frames[index] { run.insert(packet, "\(context), frame \(index + 1)") }
      }
      let output = run.insert(frames[1][held], "\(context), frame 2's late packet")
      if keyInTheMiddle {
        XCTAssertEqual(output.frames, [], context)
      } else {
        XCTAssertEqual(output.frames.map(\.firstSequenceNumber), [65_533, 2, 5, 7], context)
      }
      for packet in frames[5] { run.insert(packet, "\(context), frame 6") }
      XCTAssertEqual(run.delivered, 6 - (keyInTheMiddle ? 2 : 0), context)

      // Every packet twice, each frame's packets backwards: the start completes each frame.
      var twice = Differential(window: 30, buffered: 2048)
      for (index, frame) in frames.enumerated() {
        for packet in frame.reversed() {
          twice.insert(packet, "\(context), backwards frame \(index + 1)")
          twice.insert(packet, "\(context), backwards frame \(index + 1) again")
        }
      }
      XCTAssertEqual(twice.delivered, 6, context)
    }
  }

  /// A renumbering (two packets in a row far behind the last delivered frame) that starts in
  /// the middle of a frame, one far packet alone (late, not a renumbering), and `restart()`
  /// with a frame half received, the new numbering overlapping the old one.
  func testRenumberingAndRestartInTheMiddleOfAFrame() {
    var run = Differential(window: 16, buffered: 64)
    var sequence: UInt16 = 40_000
    for index in 0..<10 {
      for packet in Self.frame(
        first: sequence, count: 3, timestamp: UInt32(index) * 3000, key: index == 0)
      {
        run.insert(packet, "before, frame \(index)")
      }
      sequence &+= 3
    }
    // One packet 20,000 behind, alone: late.
    run.insert(
      Self.packet(20_000, timestamp: 1, marker: true, start: true, key: true), "lone far packet")
    // A new numbering 30,000 behind, beginning with the middle of a frame (its start lost):
    // two packets in a row far behind, then frames.
    sequence = 10_000
    run.insert(
      Self.packet(sequence, timestamp: 90_000, marker: false, start: false), "renumbered middle")
    run.insert(
      Self.packet(sequence &+ 1, timestamp: 90_000, marker: true, start: false), "renumbered end")
    sequence &+= 2
    for index in 0..<6 {
      for packet in Self.frame(
        first: sequence, count: 2, timestamp: 93_000 + UInt32(index) * 3000, key: index == 1)
      {
        run.insert(packet, "renumbered, frame \(index)")
      }
      sequence &+= 2
    }
    XCTAssertFalse(run.assembler.isWaitingForKeyFrame)
    // Half a frame, then a restart; the new source numbers from just before the old.
    for packet in Self.frame(first: sequence, count: 4, timestamp: 200_000).prefix(2) {
      run.insert(packet, "half a frame")
    }
    run.restart()
    XCTAssertTrue(run.assembler.isWaitingForKeyFrame)
    sequence &-= 5
    for index in 0..<6 {
      let frame = Self.frame(
        first: sequence, count: 3, timestamp: 5_000 + UInt32(index) * 3000, key: index == 2)
      // The middle packet of each frame late, after the next frame's first packet.
      run.insert(frame[0], "restarted, frame \(index) start")
      run.insert(frame[2], "restarted, frame \(index) end")
      run.insert(frame[1], "restarted, frame \(index) middle")
      sequence &+= 3
    }
    XCTAssertEqual(run.delivered, 10 + 5 + 4)
  }

  /// Seeded streams built against the one-frame look: key frames rare (long waits with the
  /// buffer full), frames of one to eight packets, reordering up to 30 places (middle and
  /// marker packets late, later frames complete before), duplicates, bursts, far delays, jumps
  /// of the numbering, small buffers and windows, and `restart()` at random points.
  func testSeededStarvedAndFarReorderedStreams() {
    var random = SplitMix64(seed: 0x0F0E_A5E4)
    var totals = (delivered: 0, chains: 0, completedLate: 0, restarts: 0, keyRequests: 0)
    for run in 0..<160 {
      let window = Int.random(in: 1...24, using: &random)
      let buffered = Bool.random(using: &random) ? 64 : Int.random(in: 65...300, using: &random)
      var differential = Differential(window: window, buffered: buffered)
      let withPictureID = Bool.random(using: &random)
      var sequence = UInt16.random(in: 0...UInt16.max, using: &random)
      var pictureID = UInt16.random(in: 0..<0x8000, using: &random)
      // Half the streams starved of key frames, half with one every ten frames or so.
      let keyChance = Bool.random(using: &random) ? 0.02 : 0.1
      var sent: [VP8FrameAssembler.Packet] = []
      for index in 0..<Int.random(in: 30...150, using: &random) {
        let key = index == 0 ? random.chance(0.7) : random.chance(keyChance)
        let count = Int.random(in: 1...8, using: &random)
        sent += Self.frame(
          first: sequence, count: count, timestamp: UInt32(truncatingIfNeeded: index * 3000),
          key: key, pictureID: withPictureID ? pictureID : nil, tag: UInt8(index & 0xFF))
        sequence &+= UInt16(count)
        pictureID = (pictureID &+ 1) % 0x8000
        if random.chance(0.01) { sequence &+= UInt16.random(in: 3_000...62_000, using: &random) }
      }
      let packets = VP8LinkImpairments(
        lossRates: 0...0.05, burst: (0.005, 1...12), duplicateChance: 0.05, reorderChance: 0.3,
        reorderReach: .drawn(1...30), delayedPackets: 0...4, delayDistances: 10...80
      ).deliver(sent, random: &random)
      for (index, packet) in packets.enumerated() {
        if random.chance(0.002) {
          differential.restart()
          totals.restarts += 1
        }
        let output = differential.insert(packet, "run \(run), packet \(index)")
        if output.needsKeyFrame { totals.keyRequests += 1 }
        guard differential.failures == 0 else { return }
      }
      totals.delivered += differential.delivered
      totals.chains += differential.chains
      totals.completedLate += differential.completedLate
    }
    print("assembler frame lookup: \(totals)")
    XCTAssertGreaterThan(totals.delivered, 1_200)
    XCTAssertGreaterThan(totals.chains, 150)
    XCTAssertGreaterThan(totals.completedLate, 400)
    XCTAssertGreaterThan(totals.restarts, 50)
    XCTAssertGreaterThan(totals.keyRequests, 1_000)
  }
}

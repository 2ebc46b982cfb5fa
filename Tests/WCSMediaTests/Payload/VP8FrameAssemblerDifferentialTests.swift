import TestSupport
import XCTest

@testable import WCSCodecs
@testable import WCSMedia
@testable import WCSProtocols

/// The VP8 frame assembler (one-pass `drain` since 4e62df5, packets in a sorted array instead of
/// a dictionary keyed by sequence number since perfpoll) against the algorithm it replaced (a
/// dictionary, and a filtered, sorted list of frame starts per delivered frame), on seeded
/// random streams with loss, reordering, duplicates, late packets, malformed payloads, key
/// frames, PictureIDs of every width, wraps of the 16-bit sequence number and jumps of it (a
/// restarted sender): every `insert` gives the same output and the same counters (also since
/// perfdec4, where a stored packet only looks at its own frame before the first delivery).
final class VP8FrameAssemblerDifferentialTests: XCTestCase {
  /// Random RTP packets of a VP8 stream as a lossy, reordering link delivers them.
  private struct StreamMaker {
    var random: SplitMix64

    mutating func chance(_ probability: Double) -> Bool { random.chance(probability) }

    mutating func packets() -> [VP8FrameAssembler.Packet] {
      let pictureIDBits = [0, 7, 15].randomElement(using: &random) ?? 0
      // A third of the streams start just before the 16-bit sequence number wraps.
      var sequence =
        chance(0.3)
        ? UInt16.max - UInt16.random(in: 0...60, using: &random)
        : UInt16.random(in: 0...UInt16.max, using: &random)
      var pictureID = UInt16.random(in: 0..<0x8000, using: &random)
      var sent: [VP8FrameAssembler.Packet] = []
      let frames = Int.random(in: 20...120, using: &random)
      for index in 0..<frames {
        let isKey = index == 0 || chance(0.08)
        // Now and then a frame reuses the previous timestamp (a broken sender).
        let timestamp = UInt32(chance(0.03) ? max(0, index - 1) : index) * 3000
        let count = Int.random(in: 1...4, using: &random)
        for part in 0..<count {
          var payload: [UInt8] = []
          var first: UInt8 = part == 0 ? 0x10 : 0x00
          if part > 0, chance(0.05) { first = 0x11 }  // S=1 in partition 1: no frame start
          if pictureIDBits != 0 { first |= 0x80 }
          payload.append(first)
          if pictureIDBits != 0 {
            payload.append(0x80)
            if pictureIDBits == 7 {
              payload.append(UInt8(pictureID & 0x7F))
            } else {
              payload += [0x80 | UInt8(pictureID >> 8 & 0x7F), UInt8(pictureID & 0xFF)]
            }
          }
          if part == 0 {
            if isKey {
              let startCode: [UInt8] = chance(0.02) ? [0, 0, 0] : [0x9D, 0x01, 0x2A]
              payload += [0x00, UInt8(index & 0xFF), 0x00] + startCode + [1, 2, 3, 4]
            } else {
              payload += [0x01, UInt8(index & 0xFF), 0x00, 7]
            }
          } else if !chance(0.02) {  // else empty: a malformed packet
            payload += [UInt8(part), UInt8(index & 0xFF)]
          }
          sent.append(
            .init(
              sequenceNumber: sequence, timestamp: timestamp, marker: part == count - 1,
              payload: payload))
          sequence &+= 1
        }
        // Now and then the numbering jumps (a restarted sender, or a huge loss), forwards or
        // backwards.
        if chance(0.01) { sequence &+= UInt16.random(in: 100...65_000, using: &random) }
        // Now and then the sender's PictureID skips one, repeats (two frames then follow the
        // same one: the lowest sequence number must win) or jumps (a restarted sender).
        if chance(0.02) {
          pictureID = UInt16.random(in: 0..<0x8000, using: &random)
        } else if !chance(0.05) {
          pictureID = (pictureID &+ (chance(0.03) ? 2 : 1)) % 0x8000
        }
      }
      return link(sent)
    }

    /// Loses (also in bursts), duplicates, reorders nearby and delays far some packets.
    mutating func link(_ sent: [VP8FrameAssembler.Packet]) -> [VP8FrameAssembler.Packet] {
      VP8LinkImpairments(
        lossRates: 0...0.15, burst: (0.01, 1...40), duplicateChance: 0.04, reorderChance: 0.2,
        reorderReach: .drawn(0...8), delayedPackets: 0...3, delayDistances: 30...150
      ).deliver(sent, random: &random)
    }
  }

  func testOnePassDrainMatchesTheSortedScanOnRandomStreams() {
    var random = SplitMix64(seed: 0x5EED_0D1F)
    var totals = (
      frames: 0, keyRequests: 0, discarded: 0, late: 0, dropped: 0, keyFrames: 0, wraps: 0
    )
    for run in 0..<400 {
      var maker = StreamMaker(random: SplitMix64(seed: random.next()))
      let window = Int.random(in: 1...40, using: &random)
      let buffered = Bool.random(using: &random) ? 64 : 2048
      var assembler = VP8FrameAssembler(reorderWindow: window, maxBufferedPackets: buffered)
      // The same through `insert(_:into:)`, the frames handed to a sink as they complete.
      var sinkAssembler = VP8FrameAssembler(reorderWindow: window, maxBufferedPackets: buffered)
      var reference = ReferenceVP8FrameAssembler(
        reorderWindow: window, maxBufferedPackets: buffered)
      let packets = maker.packets()
      if zip(packets, packets.dropFirst()).contains(where: {
        $0.sequenceNumber > 0xFF00 && $1.sequenceNumber < 0x0100
      }) {
        totals.wraps += 1
      }
      for (index, packet) in packets.enumerated() {
        let output = assembler.insert(packet)
        let expected = reference.insert(
          .init(
            sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp,
            marker: packet.marker, payload: packet.payload))
        XCTAssertEqual(output.frames, expected.frames, "run \(run), packet \(index): frames")
        var sink = CollectingFrameSink()
        let status = sinkAssembler.insert(packet, into: &sink)
        XCTAssertEqual(sink.frames, expected.frames, "run \(run), packet \(index): sink")
        XCTAssertEqual(status.needsKeyFrame, expected.needsKeyFrame, "run \(run), packet \(index)")
        XCTAssertEqual(status.dropped, expected.dropped, "run \(run), packet \(index)")
        XCTAssertEqual(
          sinkAssembler.discardedFrames, reference.discardedFrames, "run \(run), packet \(index)")
        XCTAssertEqual(output.needsKeyFrame, expected.needsKeyFrame, "run \(run), packet \(index)")
        XCTAssertEqual(output.dropped, expected.dropped, "run \(run), packet \(index)")
        XCTAssertEqual(assembler.latePackets, reference.latePackets, "run \(run), packet \(index)")
        XCTAssertEqual(
          assembler.discardedFrames, reference.discardedFrames, "run \(run), packet \(index)")
        XCTAssertEqual(
          assembler.isWaitingForKeyFrame, reference.isWaitingForKeyFrame,
          "run \(run), packet \(index)")
        guard output == expected else { return }
        totals.frames += output.frames.count
        totals.keyFrames += output.frames.filter(\.frame.isKeyFrame).count
        totals.keyRequests += output.needsKeyFrame ? 1 : 0
      }
      XCTAssertEqual(assembler.droppedPackets, reference.droppedPackets, "run \(run)")
      totals.discarded += assembler.discardedFrames
      totals.late += assembler.latePackets
      totals.dropped += assembler.droppedPackets
    }
    // The streams exercised every path: delivery, key frames, PLI, skipped frames, late and
    // malformed packets.
    print("differential drain: \(totals)")
    XCTAssertGreaterThan(totals.frames, 4_000)
    XCTAssertGreaterThan(totals.keyFrames, 1_000)
    XCTAssertGreaterThan(totals.keyRequests, 100)
    XCTAssertGreaterThan(totals.discarded, 100)
    XCTAssertGreaterThan(totals.late, 100)
    XCTAssertGreaterThan(totals.dropped, 100)
    XCTAssertGreaterThan(totals.wraps, 50)
  }
}

/// Frames from `VP8FrameAssembler.insert(_:into:)`, as `insert(_:)` gives them.
private struct CollectingFrameSink: VP8FrameSink {
  var frames: [VP8FrameAssembler.Frame] = []

  mutating func deliver(
    _ frame: VP8FrameAssembler.DeliveredFrame, data: UnsafeBufferPointer<UInt8>
  ) {
    frames.append(
      .init(
        frame: EncodedVideoFrame(
          data: Array(data), isKeyFrame: frame.isKeyFrame, timestamp: frame.timestamp),
        pictureID: frame.pictureID, firstSequenceNumber: frame.firstSequenceNumber,
        lastSequenceNumber: frame.lastSequenceNumber))
  }
}

/// The assembler as it was before 4e62df5 (597ad2b), as the reference: `drain` builds the sorted
/// list of frame starts and scans it again after every delivered frame.
struct ReferenceVP8FrameAssembler {
  typealias Packet = VP8FrameAssembler.Packet
  typealias Frame = VP8FrameAssembler.Frame
  typealias Output = VP8FrameAssembler.Output

  private struct Stored {
    var timestamp: UInt32
    var marker: Bool
    var startsFrame: Bool
    var pictureID: UInt16?
    var pictureIDModulus: UInt16
    var data: ArraySlice<UInt8>
  }

  /// Packets a missing sequence number may lag behind the newest before it counts as lost.
  let reorderWindow: Int
  /// Most packets buffered; older ones are discarded past this (bounds memory on a bad link).
  let maxBufferedPackets: Int
  /// Packets rejected as malformed.
  private(set) var droppedPackets = 0
  /// Packets ignored because they belong to frames already delivered or abandoned (late or
  /// duplicate).
  private(set) var latePackets = 0
  /// Frames thrown away because a packet before them was lost and they were not key frames.
  private(set) var discardedFrames = 0
  /// True until the next key frame is delivered (at the start and after a loss).
  private(set) var isWaitingForKeyFrame = true

  private var packets: [Int64: Stored] = [:]
  private var highest: Int64?
  private var lastDelivered: Int64?
  private var lastPictureID: UInt16?
  private var requestedAt: Int64?
  private var waitingSince: Int64?
  private var renumberingCandidate: Packet?

  /// An assembler.
  /// - Parameters:
  ///   - reorderWindow: packets, at least 1 (default 30).
  ///   - maxBufferedPackets: at least 64 (default 2048).
  init(reorderWindow: Int = 30, maxBufferedPackets: Int = 2048) {
    self.reorderWindow = max(1, reorderWindow)
    self.maxBufferedPackets = max(64, maxBufferedPackets)
  }

  /// Takes one packet and returns the frames that became decodable.
  mutating func insert(_ packet: Packet) -> Output {
    var output = Output()
    let parsed: VP8PayloadPacket
    do {
      parsed = try VP8Depacketizer.parse(packet.payload)
    } catch {
      droppedPackets += 1
      output.dropped = error
      return output
    }
    let sequence = extend(packet.sequenceNumber)
    if let lastDelivered, sequence <= lastDelivered {
      // Since review7: two packets in a row, one after the other, further behind than the
      // buffer holds are a new numbering.
      if lastDelivered - sequence > Int64(maxBufferedPackets) {
        if let candidate = renumberingCandidate,
          packet.sequenceNumber == candidate.sequenceNumber &+ 1
        {
          packets = [:]
          highest = nil
          self.lastDelivered = nil
          lastPictureID = nil
          requestedAt = nil
          waitingSince = nil
          renumberingCandidate = nil
          isWaitingForKeyFrame = true
          latePackets -= 1
          output = insert(candidate)
          let next = insert(packet)
          output.frames += next.frames
          output.needsKeyFrame = output.needsKeyFrame || next.needsKeyFrame
          return output
        }
        renumberingCandidate = packet
      } else {
        renumberingCandidate = nil
      }
      latePackets += 1
      return output
    }
    // Only two in a row make a new numbering.
    if renumberingCandidate != nil { renumberingCandidate = nil }
    if packets[sequence] != nil {
      latePackets += 1
      return output
    }
    packets[sequence] = Stored(
      timestamp: packet.timestamp, marker: packet.marker,
      startsFrame: parsed.descriptor.startsFrame, pictureID: parsed.descriptor.pictureID,
      pictureIDModulus: parsed.descriptor.pictureIDModulus, data: parsed.data)
    if highest.map({ sequence > $0 }) ?? true { highest = sequence }
    trimBuffer()
    drain(into: &output)
    detectLoss(into: &output)
    return output
  }

  private mutating func extend(_ sequence: UInt16) -> Int64 {
    guard let highest else { return Int64(sequence) + 0x1_0000 }
    var candidate = (highest & ~0xFFFF) | Int64(sequence)
    if candidate - highest > 0x8000 {
      candidate -= 0x1_0000
    } else if highest - candidate > 0x8000 {
      candidate += 0x1_0000
    }
    return candidate
  }

  /// First and last sequence numbers of the complete frame starting at `first`, if complete.
  private func completeFrame(startingAt first: Int64) -> Int64? {
    guard let head = packets[first], head.startsFrame else { return nil }
    var sequence = first
    while let packet = packets[sequence], packet.timestamp == head.timestamp {
      if packet.marker { return sequence }
      if sequence != first, packet.startsFrame { return nil }
      sequence += 1
    }
    return nil
  }

  private func follows(first: Int64, pictureID: UInt16?, modulus: UInt16) -> Bool {
    guard let lastDelivered else { return false }
    if first == lastDelivered + 1 { return true }
    if let pictureID, let lastPictureID {
      return pictureID == (lastPictureID &+ 1) % modulus
    }
    return false
  }

  private mutating func drain(into output: inout Output) {
    var progress = true
    while progress {
      progress = false
      let starts = packets.filter { $0.value.startsFrame }.keys.sorted()
      for first in starts {
        guard let last = completeFrame(startingAt: first), let head = packets[first] else {
          continue
        }
        let isKey = head.data.first.map { $0 & 0x01 == 0 } ?? false
        let inOrder =
          !isWaitingForKeyFrame
          && follows(first: first, pictureID: head.pictureID, modulus: head.pictureIDModulus)
        if isKey || inOrder {
          deliver(first: first, last: last, isKey: isKey, into: &output)
          progress = true
          break
        }
      }
    }
  }

  private mutating func deliver(first: Int64, last: Int64, isKey: Bool, into output: inout Output) {
    guard let head = packets[first] else { return }
    var data: [UInt8] = []
    for sequence in first...last {
      if let packet = packets[sequence] { data += packet.data }
    }
    // Everything up to the frame's end is now either in it or obsolete.
    let obsolete = packets.keys.filter { $0 <= last }
    let skippedFrames = obsolete.filter { $0 < first && packets[$0]?.startsFrame == true }.count
    discardedFrames += skippedFrames
    for sequence in obsolete { packets[sequence] = nil }
    lastDelivered = last
    lastPictureID = head.pictureID
    if isKey {
      isWaitingForKeyFrame = false
      requestedAt = nil
      waitingSince = nil
    }
    output.frames.append(
      Frame(
        frame: EncodedVideoFrame(data: data, isKeyFrame: isKey, timestamp: head.timestamp),
        pictureID: head.pictureID, firstSequenceNumber: UInt16(truncatingIfNeeded: first),
        lastSequenceNumber: UInt16(truncatingIfNeeded: last)))
  }

  private mutating func detectLoss(into output: inout Output) {
    guard let highest else { return }
    if !isWaitingForKeyFrame, let lastDelivered {
      // The oldest sequence number still missing after the last delivered frame.
      var missing = lastDelivered + 1
      while packets[missing] != nil, missing < highest { missing += 1 }
      if packets[missing] == nil, highest - missing > Int64(reorderWindow) {
        isWaitingForKeyFrame = true
        waitingSince = missing
        requestKeyFrame(into: &output)
      }
      return
    }
    guard isWaitingForKeyFrame else { return }
    let since = waitingSince ?? highest
    waitingSince = since
    // No whole key frame within the reorder window (at the start, or the one asked for was hit by
    // loss too): ask (again), at most once per two windows.
    if highest - since > Int64(reorderWindow) { requestKeyFrame(into: &output) }
  }

  private mutating func requestKeyFrame(into output: inout Output) {
    if let requestedAt, let highest, highest - requestedAt <= Int64(reorderWindow) * 2 {
      return
    }
    requestedAt = highest
    output.needsKeyFrame = true
  }

  private mutating func trimBuffer() {
    guard packets.count > maxBufferedPackets, let highest else { return }
    let limit = highest - Int64(maxBufferedPackets)
    for sequence in packets.keys where sequence <= limit { packets[sequence] = nil }
  }
}

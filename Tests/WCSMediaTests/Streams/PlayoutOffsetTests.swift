import TestSupport
import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// Hostile instants for the playout times: `PlayoutInstant` offsets (instants as `Duration`s
/// from one origin), `VideoRenderQueue` keeping decode times as offsets (and taking a lone frame
/// from the end), and `AudioReceiver`'s `PlayoutState` with its next playout time as an offset,
/// at instants long before the origin, a few attoseconds around it and thousands of years after.
final class PlayoutOffsetTests: XCTestCase {
  /// Instants around `PlayoutInstant.origin`: far before, close, far after, attoseconds apart.
  private static func instant(_ random: inout SplitMix64) -> ContinuousClock.Instant {
    let span: Int128
    switch Int.random(in: 0..<4, using: &random) {
    case 0: span = 1_000  // attoseconds
    case 1: span = 1_000_000_000_000_000_000  // a second
    case 2: span = 1 << 90  // ~39,000 years
    default: span = 1 << 64
    }
    let magnitude = Int128(truncatingIfNeeded: random.next()) << 64 | Int128(random.next())
    let offset = (magnitude < 0 ? -magnitude : magnitude) % (span + 1)
    let signed = Bool.random(using: &random) ? offset : -offset
    return PlayoutInstant.origin.advanced(by: Duration(attoseconds: signed))
  }

  /// An offset converts back to its instant exactly, and offsets order and subtract as their
  /// instants do, to the attosecond.
  func testOffsetsConvertBackExactlyAndKeepOrderAndDifferences() {
    var random = SplitMix64(seed: 0x0FF5_E75)
    var edges: [ContinuousClock.Instant] = [
      PlayoutInstant.origin,
      PlayoutInstant.origin.advanced(by: Duration(attoseconds: 1)),
      PlayoutInstant.origin.advanced(by: Duration(attoseconds: -1)),
      PlayoutInstant.origin - .seconds(Int64(1) << 40),
      PlayoutInstant.origin + .seconds(Int64(1) << 40),
      ContinuousClock.now,
    ]
    for _ in 0..<20_000 { edges.append(Self.instant(&random)) }
    for (index, instant) in edges.enumerated() {
      let offset = PlayoutInstant.offset(of: instant)
      XCTAssertEqual(PlayoutInstant.instant(at: offset), instant, "instant \(index)")
      let other = edges[Int.random(in: 0..<edges.count, using: &random)]
      let otherOffset = PlayoutInstant.offset(of: other)
      XCTAssertEqual(offset < otherOffset, instant < other, "instant \(index)")
      XCTAssertEqual(offset == otherOffset, instant == other, "instant \(index)")
      XCTAssertEqual(otherOffset - offset, instant.duration(to: other), "instant \(index)")
    }
  }

  /// The queue as it was before the offsets (3471750): decode times as instants, frames always
  /// taken with `removeFirst`.
  private struct InstantRenderQueue {
    let capacity: Int
    var frames: [Int] = []
    var decodedAt: [ContinuousClock.Instant] = []

    mutating func releaseNext(now: ContinuousClock.Instant, extraDelay: Duration)
      -> (frame: Int, heldFor: Duration)?
    {
      guard !frames.isEmpty, decodedAt[0] + extraDelay <= now || frames.count > capacity else {
        return nil
      }
      let decoded = decodedAt.removeFirst()
      return (frames.removeFirst(), now - decoded)
    }
  }

  /// `VideoRenderQueue` against the instant queue on seeded pushes and releases: decode times
  /// on both sides of the origin and far from it, extra delays negative, zero and large, small
  /// capacities (frames going out early), one frame held (taken from the end) and many; every
  /// release, held-for duration, count and deadline is the same.
  func testRenderQueueMatchesTheInstantQueue() {
    var random = SplitMix64(seed: 0x5E1E_A5E)
    var totals = (released: 0, overCapacity: 0, lone: 0)
    for run in 0..<300 {
      let capacity = Int.random(in: 1...30, using: &random)
      var queue = VideoRenderQueue<Int>(capacity: capacity)
      var reference = InstantRenderQueue(capacity: capacity)
      var clock = Self.instant(&random)
      var next = 0
      for step in 0..<80 {
        let context = "run \(run), step \(step)"
        let extraDelay = Duration(
          attoseconds: Int128(
            Int64.random(
              in: -2_000_000_000_000_000...100_000_000_000_000_000,
              using: &random)))
        if Bool.random(using: &random) {
          // Decode times move forward mostly, back now and then (a clock read late).
          clock = clock.advanced(
            by: Duration(
              attoseconds: Int128(
                Int64.random(
                  in: -1_000_000...40_000_000_000_000_000,
                  using: &random))))
          queue.push(next, decodedAt: clock)
          reference.frames.append(next)
          reference.decodedAt.append(clock)
          next += 1
        } else {
          let now = clock.advanced(
            by: Duration(
              attoseconds: Int128(
                Int64.random(
                  in: -10_000_000_000_000_000...200_000_000_000_000_000,
                  using: &random))))
          let lone = queue.count == 1
          while true {
            let over = reference.frames.count > capacity
            let got = queue.releaseNext(now: now, extraDelay: extraDelay)
            let want = reference.releaseNext(now: now, extraDelay: extraDelay)
            XCTAssertEqual(got?.frame, want?.frame, context)
            XCTAssertEqual(got?.heldFor, want?.heldFor, context)
            guard want != nil else { break }
            totals.released += 1
            if over { totals.overCapacity += 1 }
            if lone { totals.lone += 1 }
          }
        }
        XCTAssertEqual(queue.count, reference.frames.count, context)
        XCTAssertEqual(
          queue.nextDeadline(extraDelay: extraDelay),
          reference.decodedAt.first.map { $0 + extraDelay },
          context)
      }
    }
    print("render queue attack: \(totals)")
    XCTAssertGreaterThan(totals.released, 3_000)
    XCTAssertGreaterThan(totals.overCapacity, 300)
    XCTAssertGreaterThan(totals.lone, 300)
  }

  /// `AudioReceiver` far from the origin: the first packet's playout is its arrival plus the
  /// playout delay to the attosecond, each next frame 20 ms later, and a batch insert
  /// (`insert(contentsOf:)`) plays exactly as packet-by-packet inserts do, with loss,
  /// duplicates, reordering, a wrap and undecodable payloads (concealment, errors).
  func testAudioPlayoutTimesAreExactFarFromTheOrigin() throws {
    var random = SplitMix64(seed: 0xA0D1_0FA5)
    for run in 0..<24 {
      let delay = Duration(
        attoseconds: Int128(Int64.random(in: 0...300_000_000_000_000_000, using: &random)))
      let single = try AudioReceiver(channels: run % 2 + 1, playoutDelay: delay)
      let batched = try AudioReceiver(channels: run % 2 + 1, playoutDelay: delay)
      var arrival = Self.instant(&random)
      var sequence = UInt16.max - UInt16.random(in: 0...20, using: &random)
      var batch: [ReceivedRTPPacket] = []
      var firstInserted: ContinuousClock.Instant?
      var pulled = 0
      for index in 0..<120 {
        let context = "run \(run), packet \(index)"
        if Int.random(in: 0..<10, using: &random) > 0 {
          // Random bytes: libopus takes some, rejects others (errors, then concealment).
          let payload = (0..<Int.random(in: 1...60, using: &random)).map { _ in
            UInt8.random(in: 0...255, using: &random)
          }
          let packet = ReceivedRTPPacket(
            packet: RTPPacket(
              header: RTPHeader(
                marker: false, payloadType: 111, sequenceNumber: sequence,
                timestamp: UInt32(index) &* 960, ssrc: 9),
              payload: payload),
            arrival: arrival)
          batch.append(packet)
          if Int.random(in: 0..<20, using: &random) == 0 { batch.append(packet) }
        }
        if batch.count > 1, Int.random(in: 0..<8, using: &random) == 0 {
          batch.swapAt(batch.count - 1, batch.count - 2)
        }
        sequence &+= 1
        arrival += .milliseconds(20)
        guard Int.random(in: 0..<3, using: &random) == 0 else { continue }
        for packet in batch { single.insert(packet) }
        batched.insert(contentsOf: batch)
        firstInserted = firstInserted ?? batch.first?.arrival
        batch.removeAll()
        let now = arrival - .milliseconds(Int.random(in: 0...200, using: &random))
        let frames = single.pull(now: now)
        XCTAssertEqual(frames, batched.pull(now: now), context)
        if pulled == 0, let firstInserted {
          // The first packet plays `delay` after its arrival, each next frame 20 ms later.
          XCTAssertEqual(
            single.nextDeadline, firstInserted + delay + .milliseconds(20) * frames.count, context)
        }
        pulled += frames.count
        XCTAssertEqual(single.nextDeadline, batched.nextDeadline, context)
        var statistics = (single.statistics, batched.statistics)
        statistics.0.decodeCPUTime = 0
        statistics.1.decodeCPUTime = 0
        XCTAssertEqual(statistics.0, statistics.1, context)
      }
      XCTAssertGreaterThan(pulled, 0, "run \(run)")
    }
  }
}

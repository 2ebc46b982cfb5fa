import TestSupport
import XCTest

@testable import WCSEngine
@testable import WCSMedia
@testable import WCSPeerConnection
@testable import WCSProtocols

/// The play path's flat receive (`PacketReception.receiveInOrder`, taken by `receiveRTP` for
/// nearly every packet) against the layered one it short-cuts (`admit` → the source's
/// `receive` → its deadline, as `receiveLayered` composes them): two receptions with the same
/// routed video and audio sources get the same seeded packets, one through the flat path with
/// the layered one behind it, the other through the layered path only, and must agree after
/// every packet on what was handed out, the deadline armed, the counters, the statistics
/// (jitter, loss), the NACK state, the jitter buffer (its contents as released, delay, minimum
/// transit) and the transport-wide arrivals (the feedback they make).
///
/// The packets: loss, reordering, duplicates, 16-bit wraps, very late packets, restarts of the
/// numbering, RTX, CSRCs, padding, one-byte extensions (the transport-wide number first, after
/// another element, after padding, behind id 15, of the wrong length, truncated, too long to
/// hold inline), two-byte and other extensions, truncated and malformed packets, a wrong
/// payload type, an unknown SSRC, an audio source replaced by another, a closed connection.
final class InOrderRTPReceptionEquivalenceTests: XCTestCase {
  private static let videoSSRC: UInt32 = 0x1111_0001
  private static let audioSSRC: UInt32 = 0x2222_0002
  private static let videoPayloadType: UInt8 = 96
  private static let audioPayloadType: UInt8 = 111
  private static let rtxPayloadType: UInt8 = 97
  /// The loop's origin and the connection's clock origin (an odd offset: no rounding hides).
  private static let loopOrigin = virtualTime(0)
  private static let clockOrigin = loopOrigin + .nanoseconds(1_234_567_891)

  /// What one path did with one packet.
  private enum Outcome: Equatable {
    case skipped
    case closed
    case malformed
    case unrouted(feedbackDue: MediaInstant?)
    case received(packets: [ReceivedRTPPacket], rtcp: [RTCPPacket], deadline: MediaInstant)
  }

  /// The source `NativeMediaConnection.makeReceiver` makes for `ssrc` at `now`.
  private static func entry(ssrc: UInt32, isVideo: Bool, at now: MediaInstant)
    -> NativeMediaConnection.ReceiveEntry
  {
    let configuration = RTPReceiveStream.Configuration(
      ssrc: ssrc, localSSRC: 1, payloadType: isVideo ? videoPayloadType : audioPayloadType,
      clockRate: isVideo ? 90_000 : 48_000, nackEnabled: isVideo, buffersPackets: isVideo)
    return NativeMediaConnection.ReceiveEntry(
      stream: RTPReceiveStream(configuration: configuration, now: now), ssrc: ssrc,
      isVideo: isVideo)
  }

  /// `receiveLayered` without the connection around it: RTX unwrapped to the video source
  /// (as `route` does), unknown sources dropped, the output delivered and recycled.
  private static func layered(
    _ reception: inout NativeMediaConnection.PacketReception, _ raw: UnsafeRawBufferPointer,
    ssrc: UInt32, at now: MediaInstant
  ) -> Outcome {
    guard raw.count >= 12 else { return .skipped }
    switch reception.admit(raw, ssrc: ssrc, now: now, clockOrigin: clockOrigin, play: true) {
    case .closed: return .closed
    case .malformed: return .malformed
    case .admitted(var packet, let routed, let feedbackDue):
      var entry = routed
      if entry == nil, packet.header.payloadType == rtxPayloadType,
        let restored = try? RTXPacketFormat.unwrap(
          packet, ssrc: videoSSRC, payloadType: videoPayloadType),
        let video = reception.route(videoSSRC)
      {
        packet = restored
        entry = video
        reception.videoBytes += UInt64(raw.count)
      }
      guard let entry else { return .unrouted(feedbackDue: feedbackDue) }
      let (result, deadline) = NativeMediaConnection.receive(
        packet, now: now, in: &entry.stream, deadline: true)
      var packets: [ReceivedRTPPacket] = []
      var rtcp: [RTCPPacket] = []
      if case .success(let output) = result {
        packets = Array(output.packets)
        rtcp = output.rtcp
        if !entry.isVideo { entry.stream.recycle(output.packets) }
      }
      return .received(
        packets: packets, rtcp: rtcp, deadline: feedbackDue.map { min($0, deadline) } ?? deadline)
    }
  }

  /// `receiveRTP`: the flat path when it takes the packet, else the layered one.
  private static func flat(
    _ reception: inout NativeMediaConnection.PacketReception, _ raw: UnsafeRawBufferPointer,
    ssrc: UInt32, at now: MediaInstant, taken: inout (video: Int, audio: Int)
  ) -> Outcome {
    guard raw.count >= 12 else { return .skipped }
    if var accepted = reception.receiveInOrder(raw, ssrc: ssrc, now: now, clockOrigin: clockOrigin)
    {
      if accepted.entry.isVideo { taken.video += 1 } else { taken.audio += 1 }
      let packets = Array(accepted.packets)
      if !accepted.packets.isEmpty {
        var handed: [ReceivedRTPPacket] = []
        swap(&handed, &accepted.packets)
        accepted.entry.stream.recycle(handed)
      }
      return .received(packets: packets, rtcp: [], deadline: accepted.deadline)
    }
    return layered(&reception, raw, ssrc: ssrc, at: now)
  }

  // MARK: - Packets

  /// The extension a test packet carries.
  private enum Extension {
    case none
    /// One-byte elements as (id, value), with `padding` zero octets before them.
    case oneByte([(UInt8, [UInt8])], padding: Int)
    /// Raw one-byte extension data (for malformed elements).
    case oneByteData([UInt8])
    case twoByte([(UInt8, [UInt8])])
    case other(profile: UInt16, data: [UInt8])
  }

  private static func wire(
    ssrc: UInt32, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32, marker: Bool,
    csrcs: [UInt32] = [], headerExtension: Extension = .none, payload: [UInt8],
    padding: Int = 0, version: UInt8 = 2
  ) -> [UInt8] {
    var bytes: [UInt8] = []
    func append32(_ value: UInt32) {
      bytes += [
        UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF),
        UInt8(value & 0xFF),
      ]
    }
    var extensionProfile: UInt16?
    var data: [UInt8] = []
    switch headerExtension {
    case .none: break
    case .oneByte(let elements, let padding):
      extensionProfile = 0xBEDE
      data = [UInt8](repeating: 0, count: padding)
      for (id, value) in elements { data += [id << 4 | UInt8(value.count - 1)] + value }
    case .oneByteData(let raw):
      extensionProfile = 0xBEDE
      data = raw
    case .twoByte(let elements):
      extensionProfile = 0x1000
      for (id, value) in elements { data += [id, UInt8(value.count)] + value }
    case .other(let profile, let raw):
      extensionProfile = profile
      data = raw
    }
    while data.count % 4 != 0 { data.append(0) }
    bytes.append(
      version << 6 | (padding > 0 ? 0x20 : 0) | (extensionProfile != nil ? 0x10 : 0)
        | UInt8(csrcs.count))
    bytes.append((marker ? 0x80 : 0) | payloadType)
    bytes += [UInt8(sequenceNumber >> 8), UInt8(sequenceNumber & 0xFF)]
    append32(timestamp)
    append32(ssrc)
    for csrc in csrcs { append32(csrc) }
    if let extensionProfile {
      let words = UInt16(data.count / 4)
      bytes += [UInt8(extensionProfile >> 8), UInt8(extensionProfile & 0xFF)]
      bytes += [UInt8(words >> 8), UInt8(words & 0xFF)]
      bytes += data
    }
    bytes += payload
    if padding > 0 { bytes += [UInt8](repeating: 0, count: padding - 1) + [UInt8(padding)] }
    return bytes
  }

  // MARK: - Comparison

  private static func assertSame(
    _ a: NativeMediaConnection.PacketReception, _ b: NativeMediaConnection.PacketReception,
    now: Double, _ context: @autoclosure () -> String, file: StaticString = #filePath,
    line: UInt = #line
  ) {
    XCTAssertEqual(a.counters, b.counters, "counters \(context())", file: file, line: line)
    XCTAssertEqual(a.videoBytes, b.videoBytes, "videoBytes \(context())", file: file, line: line)
    XCTAssertEqual(
      a.transportFeedbackGenerator.nextDeadline, b.transportFeedbackGenerator.nextDeadline,
      "feedback deadline \(context())", file: file, line: line)
    XCTAssertEqual(
      a.transportFeedbackGenerator.recordedState, b.transportFeedbackGenerator.recordedState,
      "feedback state \(context())", file: file, line: line)
    var feedbackA = a.transportFeedbackGenerator
    var feedbackB = b.transportFeedbackGenerator
    XCTAssertEqual(
      feedbackA.flush(), feedbackB.flush(), "feedback \(context())", file: file, line: line)
    XCTAssertEqual(a.routes.count, b.routes.count, file: file, line: line)
    for (x, y) in zip(a.routes, b.routes) {
      XCTAssertEqual(x.ssrc, y.ssrc, file: file, line: line)
      let s = x.stream
      let t = y.stream
      let what = "ssrc \(x.ssrc) \(context())"
      XCTAssertEqual(s.counters, t.counters, "stream counters \(what)", file: file, line: line)
      XCTAssertEqual(
        s.statistics.packetsReceived, t.statistics.packetsReceived, what, file: file, line: line)
      XCTAssertEqual(
        s.statistics.jitter, t.statistics.jitter, "jitter \(what)", file: file, line: line)
      XCTAssertEqual(s.statistics.restarts, t.statistics.restarts, what, file: file, line: line)
      XCTAssertEqual(
        s.statistics.extendedHighestSequence, t.statistics.extendedHighestSequence, what,
        file: file, line: line)
      XCTAssertEqual(
        s.statistics.cumulativeLost, t.statistics.cumulativeLost, what, file: file, line: line)
      var statisticsA = s.statistics
      var statisticsB = t.statistics
      XCTAssertEqual(
        statisticsA.makeReportBlock(now: now), statisticsB.makeReportBlock(now: now),
        "report block \(what)", file: file, line: line)
      XCTAssertEqual(
        s.nackGenerator.missingSequenceNumbers, t.nackGenerator.missingSequenceNumbers,
        "missing \(what)", file: file, line: line)
      XCTAssertEqual(
        s.nackGenerator.recovered, t.nackGenerator.recovered, what, file: file, line: line)
      XCTAssertEqual(
        s.nackGenerator.needsKeyFrame, t.nackGenerator.needsKeyFrame, what, file: file, line: line)
      XCTAssertEqual(s.jitterBuffer.count, t.jitterBuffer.count, what, file: file, line: line)
      XCTAssertEqual(
        s.jitterBuffer.delay, t.jitterBuffer.delay, "delay \(what)", file: file, line: line)
      XCTAssertEqual(
        s.jitterBuffer.duplicates, t.jitterBuffer.duplicates, what, file: file, line: line)
      XCTAssertEqual(
        s.jitterBuffer.latePackets, t.jitterBuffer.latePackets, what, file: file, line: line)
      // The minimum transit and delay show in the held packets' playout deadlines.
      XCTAssertEqual(
        s.jitterBuffer.nextDeadline, t.jitterBuffer.nextDeadline, "buffer deadline \(what)",
        file: file, line: line)
      XCTAssertEqual(
        s.nextDeadline, t.nextDeadline, "stream deadline \(what)", file: file, line: line)
      XCTAssertEqual(s.lastPacketAt, t.lastPacketAt, "last packet \(what)", file: file, line: line)
    }
  }

  /// Every held packet, released at once from copies of the streams (arrival instants too).
  private static func assertSameHeld(
    _ a: NativeMediaConnection.PacketReception, _ b: NativeMediaConnection.PacketReception,
    _ context: @autoclosure () -> String, file: StaticString = #filePath, line: UInt = #line
  ) {
    for (x, y) in zip(a.routes, b.routes) {
      var s = x.stream
      var t = y.stream
      let far = loopOrigin + .seconds(100_000)
      XCTAssertEqual(
        s.poll(now: far), t.poll(now: far), "held \(context())", file: file, line: line)
    }
  }

  // MARK: - The drive

  /// `hostile`: sequence gaps at MAX_DROPOUT's edges, timestamps with huge jitter (up to
  /// half the 32-bit range either way, jumps the jitter buffer takes as outliers and then as
  /// its new minimum) and packets arriving at the same instant.
  private func drive(
    seed: UInt64, steps: Int, transportWideCCID: UInt8?, rtx: Bool, hostile: Bool = false
  ) {
    var generator = SplitMix64(seed: seed)
    var start = Self.loopOrigin + .milliseconds(5)
    var flat = NativeMediaConnection.PacketReception()
    var reference = NativeMediaConnection.PacketReception()
    for reception in [0, 1] {
      var value = NativeMediaConnection.PacketReception()
      value.transportWideCCID = transportWideCCID
      value.rtxPayloadType = rtx ? Self.rtxPayloadType : nil
      value.routes = [
        Self.entry(ssrc: Self.videoSSRC, isVideo: true, at: start),
        Self.entry(ssrc: Self.audioSSRC, isVideo: false, at: start),
      ]
      if reception == 0 { flat = value } else { reference = value }
    }
    var video = RTPTestNumbering(next: 65_300, dropoutEdges: hostile)
    var audio = RTPTestNumbering(next: 65_500, dropoutEdges: hostile)
    var timestampShift: UInt32 = 0
    var audioSSRC = Self.audioSSRC
    var oldAudioSSRC: UInt32?
    var rtxSequence: UInt16 = 100
    var transportSequence: UInt16 = 65_000
    var taken = (video: 0, audio: 0)
    var received = 0
    for step in 0..<steps {
      // 0...25 ms between packets (any nanosecond), now and then a silence of up to 3 s.
      let gapNanoseconds =
        hostile && Double.random(in: 0..<1, using: &generator) < 0.1
        ? 0
        : Double.random(in: 0..<1, using: &generator) < 0.01
          ? Int64.random(in: 25_000_000...3_000_000_000, using: &generator)
          : Int64.random(in: 0...25_000_000, using: &generator)
      start += .nanoseconds(gapNanoseconds)
      let now = start
      let roll = Double.random(in: 0..<1, using: &generator)
      if roll < 0.06 {
        // Polls: the streams' releases and feedback, the transport feedback.
        let instant = now
        for (x, y) in zip(flat.routes, reference.routes) {
          let output = x.stream.poll(now: instant)
          let expected = y.stream.poll(now: instant)
          XCTAssertEqual(output, expected, "poll, step \(step)")
          if x.isVideo {
            x.stream.recycleReleased(output.packets)
            y.stream.recycleReleased(expected.packets)
          }
        }
        let micros = (now - Self.clockOrigin).microseconds
        XCTAssertEqual(
          flat.transportFeedbackGenerator.poll(now: micros),
          reference.transportFeedbackGenerator.poll(now: micros), "feedback, step \(step)")
        continue
      }
      if roll < 0.065 {
        // The audio source replaced by another (after the old one's silence, in the driver).
        oldAudioSSRC = audioSSRC
        audioSSRC &+= 1
        audio = RTPTestNumbering(
          next: UInt16.random(in: 0...UInt16.max, using: &generator), dropoutEdges: hostile)
        flat.routes[1] = Self.entry(ssrc: audioSSRC, isVideo: false, at: now)
        reference.routes[1] = Self.entry(ssrc: audioSSRC, isVideo: false, at: now)
        continue
      }
      if step == steps - 20 {
        flat.closed = true
        reference.closed = true
      }
      let isVideo = Double.random(in: 0..<1, using: &generator) < 0.7
      var ssrc = isVideo ? Self.videoSSRC : audioSSRC
      var payloadType = isVideo ? Self.videoPayloadType : Self.audioPayloadType
      let sequenceNumber = isVideo ? video.draw(using: &generator) : audio.draw(using: &generator)
      var timestamp =
        isVideo
        ? UInt32(truncatingIfNeeded: Int(sequenceNumber) / 3 * 3_000) &+ 4_000_000_000
        : UInt32(truncatingIfNeeded: Int(sequenceNumber) * 960) &+ 4_294_000_000
      if hostile {
        let timing = Double.random(in: 0..<1, using: &generator)
        if timing < 0.01 {
          // The sender's timestamps jump for good (either way, up to half the range).
          timestampShift &+= UInt32.random(in: 0...UInt32.max, using: &generator)
        } else if timing < 0.1 {
          // One packet's timestamp far off (an outlier of any size).
          timestamp &+= UInt32.random(in: 0...UInt32.max, using: &generator)
        } else if timing < 0.5 {
          timestamp &+= UInt32.random(in: 0...90_000, using: &generator)
        }
        timestamp &+= timestampShift
      }
      // The transport-wide number: mostly the next, sometimes reordered or repeated.
      var twcc = transportSequence
      let twccRoll = Double.random(in: 0..<1, using: &generator)
      if twccRoll < 0.05 {
        twcc &-= UInt16.random(in: 1...20, using: &generator)
      } else if twccRoll < 0.07 {
        // Late beyond the feedback's history (500 ms): pruned, or reported again.
        twcc &-= UInt16.random(in: 21...300, using: &generator)
      } else {
        // Now and then numbers lost on the way, for the late ones to fill.
        transportSequence &+=
          Double.random(in: 0..<1, using: &generator) < 0.05
          ? UInt16.random(in: 2...6, using: &generator) : 1
      }
      let id = transportWideCCID ?? 5
      let twccValue = [UInt8(twcc >> 8), UInt8(twcc & 0xFF)]
      var headerExtension = Extension.oneByte([(id, twccValue)], padding: 0)
      var csrcs: [UInt32] = []
      var padding = 0
      var version: UInt8 = 2
      var payload = (0..<Int.random(in: 0...40, using: &generator)).map { _ in
        UInt8.random(in: 0...255, using: &generator)
      }
      let shape = Double.random(in: 0..<1, using: &generator)
      switch shape {
      case ..<0.70: break
      case ..<0.74: headerExtension = .none
      case ..<0.76: headerExtension = .oneByte([(2, [9]), (id, twccValue)], padding: 0)
      case ..<0.77: headerExtension = .oneByte([(id, twccValue), (3, [1, 2, 3])], padding: 2)
      case ..<0.78: headerExtension = .oneByte([(id, [7])], padding: 0)
      case ..<0.79: headerExtension = .oneByte([(id, [7, 8, 9])], padding: 0)
      case ..<0.80:
        headerExtension = .oneByte([(4, [1, 2]), (id, twccValue), (id, [3, 4])], padding: 1)
      case ..<0.81: headerExtension = .oneByteData([0xF0, 1, id << 4 | 1] + twccValue)
      case ..<0.815: headerExtension = .oneByteData([id << 4 | 1] + twccValue + [0x37, 1])
      case ..<0.82:
        headerExtension = .oneByte(
          [(id, twccValue), (6, [UInt8](repeating: 1, count: 16))], padding: 0)
      case ..<0.83: headerExtension = .twoByte([(id, twccValue)])
      case ..<0.835: headerExtension = .other(profile: 0xABCD, data: [1, 2, 3, 4])
      case ..<0.85: csrcs = [7, 8]
      case ..<0.87: padding = Int.random(in: 1...8, using: &generator)
      case ..<0.88: payloadType = isVideo ? Self.audioPayloadType : 100
      case ..<0.89:
        ssrc = 0x5555_0005
      case ..<0.895:
        if let oldAudioSSRC { ssrc = oldAudioSSRC }
      case ..<0.90: version = 1
      case ..<0.93:
        if rtx, isVideo {
          // An RTX packet repairing a video packet (its own SSRC and numbering).
          payloadType = Self.rtxPayloadType
          ssrc = 0x3333_0003
          payload = [UInt8(sequenceNumber >> 8), UInt8(sequenceNumber & 0xFF)] + payload
          rtxSequence &+= 1
        }
      default: payload = []
      }
      var bytes = Self.wire(
        ssrc: ssrc, payloadType: payloadType,
        sequenceNumber: payloadType == Self.rtxPayloadType ? rtxSequence : sequenceNumber,
        timestamp: timestamp, marker: Bool.random(using: &generator), csrcs: csrcs,
        headerExtension: headerExtension, payload: payload, padding: padding, version: version)
      if Double.random(in: 0..<1, using: &generator) < 0.02 {
        // Truncated anywhere (below the fixed header too).
        bytes.removeLast(Int.random(in: 1...bytes.count, using: &generator))
      }
      let outcomes = bytes.withUnsafeBytes { raw -> (Outcome, Outcome) in
        // What `PeerConnection.receiveSRTP` hands over: the SSRC read from the bytes.
        let seen = PeerConnection.ssrc(ofRTP: raw)
        let a = Self.flat(&flat, raw, ssrc: seen, at: now, taken: &taken)
        let b = Self.layered(&reference, raw, ssrc: seen, at: now)
        return (a, b)
      }
      received += 1
      XCTAssertEqual(outcomes.0, outcomes.1, "step \(step)")
      Self.assertSame(flat, reference, now: now.seconds, "step \(step)")
      if step % 50 == 0 { Self.assertSameHeld(flat, reference, "step \(step)") }
    }
    Self.assertSameHeld(flat, reference, "end")
    // The flat path took most packets, the layered one the rest.
    XCTAssertGreaterThan(taken.video + taken.audio, received / 2, "seed \(seed)")
    XCTAssertGreaterThan(taken.audio, received / 8, "seed \(seed)")
    XCTAssertLessThan(taken.video + taken.audio, received, "seed \(seed)")
  }

  func testFlatAndLayeredReceiveAgreeWithTransportWideNumbersAndRTX() {
    drive(seed: 1, steps: 4_000, transportWideCCID: 5, rtx: true)
    drive(seed: 2, steps: 4_000, transportWideCCID: 14, rtx: true)
  }

  func testFlatAndLayeredReceiveAgreeWithoutTransportWideNumbersOrRTX() {
    drive(seed: 3, steps: 3_000, transportWideCCID: nil, rtx: false)
  }

  /// Sequence gaps either side of MAX_DROPOUT, timestamps jittering by up to half their range
  /// and jumping for good, packets at the same instant.
  func testFlatAndLayeredReceiveAgreeUnderHostileTiming() {
    drive(seed: 4, steps: 4_000, transportWideCCID: 5, rtx: true, hostile: true)
    drive(seed: 5, steps: 3_000, transportWideCCID: nil, rtx: false, hostile: true)
  }

  /// The jitter buffer's in-order steps on their own, against `insert` (and, unbuffered, the
  /// release that follows it), whatever the caller checks before: wherever `appendsInOrder` /
  /// `passesThroughInOrder` say yes, the step leaves the buffer as `insert` does, through loss,
  /// reordering, duplicates, packets late after a release and 16-bit wraps.
  func testJitterBufferInOrderStepsMatchInsert() {
    for releasingAtOnce in [false, true] {
      var generator = SplitMix64(seed: releasingAtOnce ? 41 : 42)
      let origin = virtualTime(2)
      var flat = JitterBuffer(clockRate: 90_000)
      var reference = JitterBuffer(clockRate: 90_000)
      var next: Int64 = 0x1_0000 + 65_400
      var seconds = 0.0
      var taken = 0
      for step in 0..<4_000 {
        seconds += Double.random(in: 0...0.02, using: &generator)
        let instant = origin + .seconds(seconds)
        if !releasingAtOnce, Double.random(in: 0..<1, using: &generator) < 0.15 {
          var released: [ReceivedRTPPacket] = []
          var expected: [ReceivedRTPPacket] = []
          let now = instant
          flat.release(now: now, into: &released)
          reference.release(now: now, into: &expected)
          XCTAssertEqual(released, expected, "release, step \(step)")
          continue
        }
        let roll = Double.random(in: 0..<1, using: &generator)
        var sequence = next
        if roll < 0.1 {
          sequence -= Int64.random(in: 1...300, using: &generator)
        } else {
          if roll < 0.15 { next += Int64.random(in: 1...20, using: &generator) }
          sequence = next
          next += 1
        }
        let packet = RTPPacket(
          header: RTPHeader(
            payloadType: 96, sequenceNumber: UInt16(truncatingIfNeeded: sequence),
            timestamp: UInt32(truncatingIfNeeded: sequence / 3 * 3_000), ssrc: 7),
          payload: [UInt8(truncatingIfNeeded: sequence)])
        var out: [ReceivedRTPPacket] = []
        var expected: [ReceivedRTPPacket] = []
        if releasingAtOnce {
          if flat.passesThroughInOrder(sequence) {
            taken += 1
            flat.passThroughInOrder(packet, arrival: instant, sequence: sequence, into: &out)
          } else if flat.insert(
            packet, arrival: instant, sequence: sequence, releasingAtOnce: true, into: &out)
            == .buffered
          {
            flat.release(now: .distantFuture, into: &out)
          }
          if reference.insert(
            packet, arrival: instant, sequence: sequence, releasingAtOnce: true, into: &expected)
            == .buffered
          {
            reference.release(now: .distantFuture, into: &expected)
          }
        } else {
          if flat.appendsInOrder(sequence) {
            taken += 1
            flat.appendInOrder(packet, arrival: instant, sequence: sequence)
          } else {
            _ = flat.insert(
              packet, arrival: instant, sequence: sequence, releasingAtOnce: false, into: &out)
          }
          _ = reference.insert(
            packet, arrival: instant, sequence: sequence, releasingAtOnce: false, into: &expected)
        }
        XCTAssertEqual(out, expected, "step \(step)")
        XCTAssertEqual(flat.count, reference.count, "step \(step)")
        XCTAssertEqual(flat.duplicates, reference.duplicates, "step \(step)")
        XCTAssertEqual(flat.latePackets, reference.latePackets, "step \(step)")
        XCTAssertEqual(flat.nextDeadline, reference.nextDeadline, "step \(step)")
      }
      var rest: [ReceivedRTPPacket] = []
      var expectedRest: [ReceivedRTPPacket] = []
      flat.release(now: .distantFuture, into: &rest)
      reference.release(now: .distantFuture, into: &expectedRest)
      XCTAssertEqual(rest, expectedRest)
      XCTAssertGreaterThan(taken, 2_000, "releasing at once: \(releasingAtOnce)")
    }
  }

  /// The common packet as the flat path reads it is the packet `RTPPacket.parse` gives, and
  /// its transport-wide number the one `TransportWideCC.sequenceNumber` finds.
  func testInOrderPacketMatchesTheParsedOne() throws {
    let bytes = Self.wire(
      ssrc: 0xDEAD_BEEF, payloadType: 96, sequenceNumber: 65_535, timestamp: 0xFFFF_FFF0,
      marker: true, headerExtension: .oneByte([(2, [9]), (5, [0x12, 0x34])], padding: 1),
      payload: [1, 2, 3, 4, 5])
    try bytes.withUnsafeBytes { raw in
      let header = try XCTUnwrap(
        InOrderRTPPacket(raw, ssrc: PeerConnection.ssrc(ofRTP: raw), transportWideCCID: 5))
      let parsed = try RTPPacket.parse(raw)
      XCTAssertEqual(header.packet(), parsed)
      XCTAssertEqual(header.transportSequenceNumber, 0x1234)
      XCTAssertEqual(TransportWideCC.sequenceNumber(in: parsed.header, id: 5), 0x1234)
      XCTAssertEqual(parsed.payload, [1, 2, 3, 4, 5])
      XCTAssertEqual(parsed.header.sequenceNumber, 65_535)
    }
  }
}

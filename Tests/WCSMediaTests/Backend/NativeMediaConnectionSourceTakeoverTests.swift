import Foundation
import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSEngine
@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSMediaSeam
@testable import WCSProtocols

/// A relay switching publishers on one played connection, end to end: a real play-mode
/// `NativeMediaConnection` on loopback, answered by a `LoopbackRelay` whose player side the test
/// drives with SRTP. A new SSRC after the old one's silence (`sourceTakeoverSilence`) is played,
/// even numbered ~1,000 behind the old source's last packet with unrelated RTP timestamps; a new
/// SSRC that comes sooner is refused (counted as malformed, nothing of it played).
final class NativeMediaConnectionSourceTakeoverTests: XCTestCase {
  /// A play connection of its own backend and loop, answered by a relay the test sends through.
  private final class FarSideCall {
    let loop = EventLoop(label: "SourceTakeover")
    let relay: LoopbackRelay
    let player: NativeMediaConnection
    let states = BackendTestBox<[MediaConnectionState]>([])
    let frames = BackendTestBox<[VideoFrame]>([])
    let audio = BackendTestBox<[AudioFrame]>([])

    init(audio playsAudio: Bool, video playsVideo: Bool) throws {
      let backend = NativeMediaBackend(
        configuration: NativeMediaBackend.Configuration(loop: loop, peerConnection: .loopback))
      relay = LoopbackRelay(loop: loop)
      let states = states
      let frames = frames
      let audio = audio
      guard
        let player = try backend.makeConnection(
          MediaConnectionRequest(
            direction: .play, audio: playsAudio ? .init() : nil, video: playsVideo ? .init() : nil,
            renderer: VideoFrameCallbackRenderer { frame in frames.mutate { $0.append(frame) } }),
          onStateChange: { state in states.mutate { $0.append(state) } })
          as? NativeMediaConnection
      else { throw MediaBackendError.unavailable("not a NativeMediaConnection") }
      self.player = player
      player.setPlayoutSink(PlayoutAudioCallbackSink { frame in audio.mutate { $0.append(frame) } })
    }

    func connect(_ test: XCTestCase) throws {
      try test.apply(answer: try relay.answerPlayer(try test.offer(of: player)), to: player)
      test.waitForBackend("player connected", timeout: 10) { states.value.last == .connected }
    }

    /// The player's count of dropped RTP packets (malformed, unknown payload type, refused
    /// source), read on its loop.
    func malformedPackets(_ test: XCTestCase) -> Int? {
      let box = BackendTestBox<NativeMediaConnection.DetailedStatistics?>(nil)
      player.detailedStatistics { value in box.mutate { $0 = value } }
      test.waitForBackend("statistics", timeout: 10) { box.value != nil }
      return box.value?.malformedPackets
    }

    /// Sends `packets` one group at a time, `interval` apart, as a source in real time would;
    /// returns when the last one left.
    func send(_ groups: [[[UInt8]]], interval: TimeInterval) throws {
      for (index, group) in groups.enumerated() {
        if index > 0 { Thread.sleep(forTimeInterval: interval) }
        try relay.sendToPlayer(rtp: group, rtcp: [])
      }
    }

    func close() {
      player.close()
      relay.close()
    }
  }

  /// A little over the silence after which a new source may take over (arrival times are the
  /// kernel's, a little after the sends the test times from).
  private static let takeoverWait =
    RTPPlaySession.sourceTakeoverSilence.duration + .milliseconds(250)

  /// Sleeps until `takeoverWait` after `instant`.
  private func sleepUntilTakeover(after instant: ContinuousClock.Instant) {
    let remaining = instant + Self.takeoverWait - .now
    if remaining > .zero {
      Thread.sleep(forTimeInterval: Double(remaining.attoseconds) / 1e18)
    }
  }

  /// A retransmission (RFC 4588) the far side sends: the first packet of frame `frame` goes out
  /// only on `ssrc`, after the frame's other packets (at once: no timing to depend on).
  private struct Repair {
    var frame: Int
    var ssrc: UInt32
    var payloadType: UInt8
    var sequenceNumber: UInt16
  }

  /// The wire bytes of `stream`'s packets, one array per frame, as source `ssrc` sends them with
  /// `payloadType` and its own RTP timestamp base (and a packet repaired by RTX, when given).
  private func wire(
    _ stream: VP8TestStream, ssrc: UInt32, payloadType: UInt8, timestampBase: UInt32,
    repair: Repair? = nil
  ) throws -> [[[UInt8]]] {
    var groups = stream.packets.map { frame in
      frame.map { received in
        var packet = received.packet
        packet.header.ssrc = ssrc
        packet.header.payloadType = payloadType
        packet.header.timestamp &+= timestampBase
        return packet
      }
    }
    if let repair, groups.indices.contains(repair.frame), !groups[repair.frame].isEmpty {
      let held = groups[repair.frame].removeFirst()
      groups[repair.frame].append(
        RTXPacketFormat.wrap(
          held, ssrc: repair.ssrc, payloadType: repair.payloadType,
          sequenceNumber: repair.sequenceNumber))
    }
    return try groups.map { try $0.map { try $0.serialized() } }
  }

  private func lastSequenceNumber(of stream: VP8TestStream) throws -> UInt16 {
    try XCTUnwrap(stream.packets.last?.last?.packet.header.sequenceNumber)
  }

  /// Whether `rendered` are exactly `pictures` (size, strides and all three planes).
  private func assertRendered(
    _ rendered: ArraySlice<VideoFrame>, equal pictures: [I420Image], _ source: String,
    file: StaticString = #filePath, line: UInt = #line
  ) {
    XCTAssertEqual(rendered.count, pictures.count, "\(source): pictures", file: file, line: line)
    for (index, (frame, picture)) in zip(rendered, pictures).enumerated() {
      let shown = I420Image(frame)
      XCTAssertEqual(shown?.width, picture.width, "\(source) \(index)", file: file, line: line)
      XCTAssertEqual(shown?.height, picture.height, "\(source) \(index)", file: file, line: line)
      XCTAssertTrue(
        shown == picture, "\(source) picture \(index) differs from the reference decode",
        file: file, line: line)
    }
  }

  /// `count` 20 ms Opus packets of a `frequency` Hz tone (amplitude 10,000), one per array, as
  /// source `ssrc` sends them: sequence numbers from `firstSequence`, timestamps from
  /// `timestampBase`, 960 apart.
  private func opusTone(
    _ frequency: Double, count: Int, ssrc: UInt32, payloadType: UInt8, firstSequence: UInt16,
    timestampBase: UInt32
  ) throws -> [[[UInt8]]] {
    let encoder = try OpusEncoder()
    let size = OpusEncoder.frameSize
    return try (0..<count).map { index in
      let samples = (0..<size).map { offset in
        Int16(10_000 * sin(2 * Double.pi * frequency * Double(index * size + offset) / 48_000))
      }
      let timestamp = timestampBase &+ UInt32(index * size)
      let header = RTPHeader(
        marker: index == 0, payloadType: payloadType,
        sequenceNumber: firstSequence &+ UInt16(index), timestamp: timestamp, ssrc: ssrc)
      let payload = try encoder.encode(PCMAudioFrame(samples: samples, channels: 1))
      return [try RTPPacket(header: header, payload: payload).serialized()]
    }
  }

  /// The dominant frequency (Hz, by zero crossings) of every 100 ms of `frames`' first channel
  /// that is louder than 3,000 at its peak.
  private func playedTones(_ frames: [AudioFrame]) -> [Double] {
    let samples = frames.flatMap { frame in
      stride(from: 0, to: frame.samples.count, by: max(1, frame.channels)).map { frame.samples[$0] }
    }
    let window = 4_800
    return stride(from: 0, to: samples.count - window + 1, by: window).compactMap { start in
      let slice = Array(samples[start..<start + window])
      guard slice.map({ abs(Int($0)) }).max() ?? 0 > 3_000 else { return nil }
      return zeroCrossingFrequency(slice, sampleRate: 48_000)
    }
  }

  private func plays(_ frequency: Double, in tones: [Double]) -> Bool {
    tones.contains { abs($0 - frequency) < frequency * 0.05 }
  }

  /// Video, and its RTX stream: A (with a packet repaired on RTX SSRC 1), then within A's
  /// silence a second media SSRC and a second RTX SSRC (both refused), then after the silence B
  /// (with a packet repaired on a third RTX SSRC), numbered 1,000 behind A's last packet.
  func testNewVideoSourceBehindTheOldNumberingIsPlayedAfterTheSilence() throws {
    let call = try FarSideCall(audio: false, video: true)
    defer { call.close() }
    try call.connect(self)
    let (payloadType, negotiatedRTX) = call.loop.submit {
      (call.player.videoPayloadType, call.player.rtxPayloadType)
    }
    let rtxPayloadType = try XCTUnwrap(negotiatedRTX, "RTX negotiated with the relay")

    // Three sizes, so that no source's pictures pass for another's.
    let sourceA = try VP8TestStream(count: 12, firstSequence: 40_000)
    let lastOfA = try lastSequenceNumber(of: sourceA)
    let early = try VP8TestStream(count: 6, width: 240, height: 180, firstSequence: lastOfA &- 500)
    let sourceB = try VP8TestStream(
      count: 12, width: 160, height: 120, firstSequence: lastOfA &- 1_000)
    let interval = Double(VP8TestStream.frameInterval) / 90_000

    let malformedBefore = try XCTUnwrap(call.malformedPackets(self))
    try call.send(
      wire(
        sourceA, ssrc: 0xA0A0_0001, payloadType: payloadType, timestampBase: 7_000_000,
        repair: Repair(frame: 5, ssrc: 0xA0A0_00FF, payloadType: rtxPayloadType, sequenceNumber: 9)
      ),
      interval: interval)
    let lastOfASent = ContinuousClock.now

    // Another media SSRC, and another RTX SSRC, while A is silent for less than the takeover
    // silence: refused.
    var earlyWire = try wire(
      early, ssrc: 0xC0C0_0003, payloadType: payloadType, timestampBase: 123_456_789)
    let earlyRTX = try RTXPacketFormat.wrap(
      RTPPacket(
        header: RTPHeader(
          marker: false, payloadType: payloadType, sequenceNumber: lastOfA,
          timestamp: 7_000_000, ssrc: 0xA0A0_0001), payload: [0x10, 0, 0]),
      ssrc: 0xC0C0_00FF, payloadType: rtxPayloadType, sequenceNumber: 1
    ).serialized()
    earlyWire.append([earlyRTX])
    try call.send(earlyWire, interval: 0.005)
    let earlyAfter = ContinuousClock.now - lastOfASent
    let earlyPackets = earlyWire.joined().count
    waitForBackend("A's pictures", timeout: 10) {
      call.frames.value.count >= sourceA.pictures.count
    }
    assertRendered(call.frames.value[...], equal: sourceA.pictures, "A")
    waitForBackend("the early sources counted as malformed", timeout: 10) {
      (call.malformedPackets(self) ?? 0) >= malformedBefore + earlyPackets
    }
    XCTAssertLessThan(
      earlyAfter, RTPPlaySession.sourceTakeoverSilence.duration,
      "the early sources came within the silence")
    XCTAssertEqual(call.malformedPackets(self), malformedBefore + earlyPackets)

    // B after the silence: 1,000 behind A's numbering, unrelated timestamps, a key frame first.
    sleepUntilTakeover(after: lastOfASent)
    try call.send(
      wire(
        sourceB, ssrc: 0xB0B0_0002, payloadType: payloadType, timestampBase: 3_500_000_000,
        repair: Repair(
          frame: 5, ssrc: 0xB0B0_00FF, payloadType: rtxPayloadType, sequenceNumber: 60_000)),
      interval: interval)
    let expected = sourceA.pictures.count + sourceB.pictures.count
    waitForBackend("B's pictures", timeout: 10) { call.frames.value.count >= expected }
    // Anything late (an early-source picture let through) would show up here.
    Thread.sleep(forTimeInterval: 0.1)
    let rendered = call.frames.value
    XCTAssertEqual(rendered.count, expected, "pictures rendered: A's, then B's, nothing else")
    assertRendered(rendered.prefix(sourceA.pictures.count), equal: sourceA.pictures, "A")
    assertRendered(rendered.dropFirst(sourceA.pictures.count), equal: sourceB.pictures, "B")
    XCTAssertFalse(rendered.contains { $0.width == early.pictures.first?.width })
    XCTAssertEqual(call.malformedPackets(self), malformedBefore + earlyPackets)
    XCTAssertEqual(call.states.value.last, .connected)
  }

  func testNewAudioSourceIsPlayedAfterTheSilence() throws {
    let call = try FarSideCall(audio: true, video: false)
    defer { call.close() }
    try call.connect(self)
    let payloadType = call.loop.submit { call.player.audioPayloadType }
    let malformedBefore = try XCTUnwrap(call.malformedPackets(self))

    try call.send(
      opusTone(
        440, count: 30, ssrc: 0xA0A0_0011, payloadType: payloadType, firstSequence: 20_000,
        timestampBase: 1_000_000),
      interval: 0.02)
    let lastOfASent = ContinuousClock.now

    // Another SSRC within A's silence: refused, its 2 kHz never played.
    let early = try opusTone(
      2_000, count: 10, ssrc: 0xC0C0_0013, payloadType: payloadType, firstSequence: 30_000,
      timestampBase: 77_777)
    try call.send(early, interval: 0.005)
    let earlyAfter = ContinuousClock.now - lastOfASent
    waitForBackend("A's 440 Hz played", timeout: 10) {
      plays(440, in: playedTones(call.audio.value))
    }
    waitForBackend("the early source counted as malformed", timeout: 10) {
      (call.malformedPackets(self) ?? 0) >= malformedBefore + early.count
    }
    XCTAssertLessThan(
      earlyAfter, RTPPlaySession.sourceTakeoverSilence.duration,
      "the early source came within the silence")

    // B after the silence: numbered 1,000 behind A's last packet, unrelated timestamps.
    sleepUntilTakeover(after: lastOfASent)
    let playedBeforeB = call.audio.value.count
    try call.send(
      opusTone(
        1_000, count: 30, ssrc: 0xB0B0_0012, payloadType: payloadType,
        firstSequence: 20_029 &- 1_000, timestampBase: 3_000_000_000),
      interval: 0.02)
    waitForBackend("B's 1 kHz played", timeout: 10) {
      plays(1_000, in: playedTones(Array(call.audio.value.dropFirst(playedBeforeB))))
    }
    let tones = playedTones(call.audio.value)
    XCTAssertTrue(plays(440, in: tones), "A played: \(tones)")
    XCTAssertTrue(plays(1_000, in: tones), "B played: \(tones)")
    XCTAssertFalse(plays(2_000, in: tones), "the early source played: \(tones)")
    XCTAssertEqual(call.malformedPackets(self), malformedBefore + early.count)
    XCTAssertEqual(call.states.value.last, .connected)
  }
}

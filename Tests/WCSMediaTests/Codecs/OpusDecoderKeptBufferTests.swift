import TestSupport
import XCTest

@testable import WCSCodecs
@testable import WCSMedia

/// Attacks on `OpusDecoder` decoding into the buffer it keeps: one decoder fed, in a seeded
/// random order, packets of the largest duration (120 ms: 48 CELT frames of 2.5 ms, the whole
/// buffer), one frame too many (122.5 ms, rejected), the shortest (2.5 ms) right after the
/// longest, stereo packets to a mono decoder and mono to stereo, random bytes, concealment and
/// FEC of every clamped length, and empty packets. Each result is compared with a decoder that
/// writes into a new zero-filled array per call (the previous implementation): a sample of an
/// earlier, longer frame left in the kept buffer, or a count off by a channel, would differ.
final class OpusDecoderKeptBufferTests: XCTestCase {
  /// A code 3 packet (RFC 6716 §3.2.5) of `frames` CBR CELT frames of 2.5 ms, each of
  /// `frameBytes` random bytes; stereo when `stereo`.
  private static func celtPacket(
    frames: Int, frameBytes: Int, stereo: Bool, random: inout SplitMix64
  ) -> [UInt8] {
    // Config 16 + 8 * bandwidth: CELT-only, 2.5 ms (RFC 6716 §3.1, Table 2).
    let config = UInt8(16 + 4 * Int.random(in: 0...3, using: &random))
    let toc = config << 3 | (stereo ? 0x04 : 0) | 0x03
    return [toc, UInt8(frames)]
      + (0..<frames * frameBytes).map { _ in UInt8.random(in: 0...255, using: &random) }
  }

  func testKeptBufferGivesExactlyEachCallsSamplesWhateverCameBefore() throws {
    var random = SplitMix64(seed: 0x0_7105_A77C)
    var counts = (longest: 0, tooLong: 0, shortAfterLong: 0, crossChannel: 0, errors: 0)
    for channels in [1, 2] {
      let decoder = try OpusDecoder(channels: channels)
      let reference = try ZeroFilledOpusDecoder(channels: channels)
      let encoders = [
        try OpusEncoder(configuration: .init(channels: 1, bitrate: 16_000, inbandFEC: true)),
        try OpusEncoder(configuration: .init(channels: 2, bitrate: 96_000)),
      ]
      var previousWasLongest = false
      for index in 0..<1_500 {
        let context = "channels \(channels), call \(index)"
        let got: Result<[Int16], OpusError>
        let want: Result<[Int16], OpusError>
        var isLongest = false
        switch Int.random(in: 0..<9, using: &random) {
        case 0, 1:
          // 120 ms: 48 frames of 2.5 ms, empty (each concealed) or with random bytes.
          let packet = Self.celtPacket(
            frames: 48, frameBytes: Int.random(in: 0...3, using: &random),
            stereo: Bool.random(using: &random), random: &random)
          got = ZeroFilledOpusDecoder.result { () throws(OpusError) in try decoder.decode(packet) }
          want = reference.run(packet, frameSize: OpusDecoder.maxFrameSize, fec: false)
          isLongest = true
          counts.longest += 1
        case 2:
          // 122.5 ms: more than any packet may hold.
          let packet = Self.celtPacket(frames: 49, frameBytes: 1, stereo: false, random: &random)
          got = ZeroFilledOpusDecoder.result { () throws(OpusError) in try decoder.decode(packet) }
          want = reference.run(packet, frameSize: OpusDecoder.maxFrameSize, fec: false)
          if case .success = want { XCTFail("\(context): a 122.5 ms packet decoded") }
          counts.tooLong += 1
        case 3:
          // 2.5 ms, after anything.
          let packet = Self.celtPacket(
            frames: 1, frameBytes: Int.random(in: 1...40, using: &random),
            stereo: Bool.random(using: &random), random: &random)
          got = ZeroFilledOpusDecoder.result { () throws(OpusError) in try decoder.decode(packet) }
          want = reference.run(packet, frameSize: OpusDecoder.maxFrameSize, fec: false)
          if previousWasLongest { counts.shortAfterLong += 1 }
        case 4, 5:
          // A real 20 ms packet of the other channel count or the same.
          let source = Int.random(in: 0...1, using: &random)
          let samples = (0..<960 * (source + 1)).map { Int16(truncatingIfNeeded: $0 &* 97) }
          let packet = try encoders[source].encode(
            PCMAudioFrame(samples: samples, channels: source + 1))
          got = ZeroFilledOpusDecoder.result { () throws(OpusError) in try decoder.decode(packet) }
          want = reference.run(packet, frameSize: OpusDecoder.maxFrameSize, fec: false)
          if source + 1 != channels { counts.crossChannel += 1 }
        case 6:
          let lost =
            [-1, 0, 119, 120, 121, 960, 5759, 5760, 5761, 100_000].randomElement(
              using: &random) ?? 960
          got = ZeroFilledOpusDecoder.result { () throws(OpusError) in
            try decoder.decode(nil, lostSamples: lost)
          }
          want = reference.run(nil, frameSize: lost, fec: false)
        case 7:
          // FEC from a random packet (mostly no LBRR: concealment, or an error), any length.
          let packet = (0..<Int.random(in: 0...80, using: &random)).map { _ in
            UInt8.random(in: 0...255, using: &random)
          }
          let size = [-5, 0, 120, 480, 961, 2880, 5760, 6000].randomElement(using: &random) ?? 960
          got = ZeroFilledOpusDecoder.result { () throws(OpusError) in
            try decoder.decodeFEC(from: packet, frameSize: size)
          }
          want = reference.run(packet, frameSize: size, fec: true)
        default:
          // Random bytes, empty included.
          let packet = (0..<Int.random(in: 0...200, using: &random)).map { _ in
            UInt8.random(in: 0...255, using: &random)
          }
          got = ZeroFilledOpusDecoder.result { () throws(OpusError) in try decoder.decode(packet) }
          want = reference.run(packet, frameSize: OpusDecoder.maxFrameSize, fec: false)
        }
        previousWasLongest = isLongest
        if case .failure = want { counts.errors += 1 }
        // Compared without printing thousands of samples when they differ.
        XCTAssertTrue(got == want, context)
        if case .success(let samples) = got { XCTAssertEqual(samples.count % channels, 0, context) }
      }
    }
    print("opus attack: \(counts)")
    XCTAssertGreaterThan(counts.longest, 200)
    XCTAssertGreaterThan(counts.tooLong, 100)
    XCTAssertGreaterThan(counts.shortAfterLong, 20)
    XCTAssertGreaterThan(counts.crossChannel, 100)
    XCTAssertGreaterThan(counts.errors, 200)
  }

  /// A 120 ms packet fills the whole kept buffer: 5760 samples per channel come out.
  func testLongestPacketDecodesToTheWholeBuffer() throws {
    var random = SplitMix64(seed: 120)
    for channels in [1, 2] {
      let decoder = try OpusDecoder(channels: channels)
      let packet = Self.celtPacket(frames: 48, frameBytes: 0, stereo: false, random: &random)
      XCTAssertEqual(try decoder.decode(packet).samples.count, 5760 * channels)
      XCTAssertEqual(try decoder.lastPacketDuration(), 5760)
      let tooLong = Self.celtPacket(frames: 49, frameBytes: 0, stereo: false, random: &random)
      XCTAssertThrowsError(try decoder.decode(tooLong))
    }
  }
}

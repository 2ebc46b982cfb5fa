import TestSupport
import XCTest

@testable import WCSCodecs
@testable import WCSMedia
@testable import WCSProtocols

/// `OpusDecoder` decoding into a buffer it keeps (then copying exactly the decoded samples out)
/// against decoding as it did before (a zero-filled array of the largest frame per call, cut to
/// the decoded prefix), and `AudioReceiver.insert(contentsOf:)` against one `insert` per
/// packet: the same samples bit for bit, the same errors, the same playout.
final class OpusDecoderBufferEquivalenceTests: XCTestCase {
  private static func samples(_ index: Int, channels: Int, frameSamples: Int) -> [Int16] {
    (0..<frameSamples * channels).map { sample -> Int16 in
      let t = Double(index * frameSamples + sample / channels) / 48_000
      let tone = sample % channels == 0 ? 440.0 : 660.0
      return Int16(7000 * sin(2 * Double.pi * tone * t) + 1500 * sin(2 * Double.pi * 2100 * t))
    }
  }

  func testDecodedSamplesAndErrorsMatchTheZeroFilledDecode() throws {
    var random = SplitMix64(seed: 0x0B05_DEC)
    var compared = (decoded: 0, fec: 0, concealed: 0, errors: 0)
    for channels in [1, 2] {
      // Bitrates from SILK (FEC) to CELT; 20 ms packets decode to 960 samples per channel, a
      // prefix of the 5760 the buffer holds.
      for bitrate in [12_000, 24_000, 64_000, 128_000] {
        let frameSamples = 960
        let encoder = try OpusEncoder(
          configuration: .init(
            channels: channels, bitrate: bitrate, inbandFEC: true, expectedPacketLossPercent: 20))
        let decoder = try OpusDecoder(channels: channels)
        let reference = try ZeroFilledOpusDecoder(channels: channels)
        for index in 0..<60 {
          let frame = PCMAudioFrame(
            samples: Self.samples(index, channels: channels, frameSamples: frameSamples),
            channels: channels)
          var packet = try encoder.encode(frame)
          let context = "channels \(channels), \(bitrate) bit/s, packet \(index)"
          switch Int.random(in: 0..<12, using: &random) {
          case 0:
            // Lost: concealment of a random length (clamped to 120 ... 5760 alike).
            let lost =
              [0, 119, 120, 480, 960, 2880, 5760, 9000].randomElement(using: &random) ?? 960
            XCTAssertEqual(
              ZeroFilledOpusDecoder.result { () throws(OpusError) in
                try decoder.decode(nil, timestamp: 7, lostSamples: lost)
              }, reference.decode(nil, lostSamples: lost), context)
            compared.concealed += 1
            continue
          case 1:
            // FEC from this packet for the one before it, for lost frames of several sizes.
            let size = [60, 480, 960, 1920, 7000].randomElement(using: &random) ?? 960
            XCTAssertEqual(
              ZeroFilledOpusDecoder.result { () throws(OpusError) in
                try decoder.decodeFEC(from: packet, frameSize: size, timestamp: 7)
              }, reference.decodeFEC(packet, frameSize: size), context)
            compared.fec += 1
          case 2:
            // Damaged: a TOC of code 3 with a bad frame count, or cut short.
            if Bool.random(using: &random) {
              packet = [packet[0] | 0x03, 0x00]
            } else {
              packet = Array(packet.prefix(1)) + [0xFF, 0xFF]
            }
          case 3:
            packet = []
          default:
            break
          }
          let got = ZeroFilledOpusDecoder.result { () throws(OpusError) in
            try decoder.decode(packet, timestamp: UInt32(index))
          }
          let want = reference.decode(packet)
          XCTAssertEqual(got, want, context)
          if case .failure = want { compared.errors += 1 } else { compared.decoded += 1 }
        }
      }
    }
    print("opus buffer equivalence: \(compared)")
    XCTAssertGreaterThan(compared.decoded, 300)
    XCTAssertGreaterThan(compared.fec, 20)
    XCTAssertGreaterThan(compared.concealed, 20)
    XCTAssertGreaterThan(compared.errors, 20)
  }

  func testInsertContentsOfMatchesOneInsertPerPacket() throws {
    let encoder = try OpusEncoder(
      configuration: .init(bitrate: 24_000, inbandFEC: true, expectedPacketLossPercent: 20))
    let receiver = try AudioReceiver(channels: 1)
    let reference = try AudioReceiver(channels: 1)
    var random = SplitMix64(seed: 0x1A5E_47)
    let origin = MediaInstant.now()
    var batch: [ReceivedRTPPacket] = []
    var sequence = UInt16.max - 30
    var played = 0
    for index in 0..<400 {
      let now = origin + .milliseconds(20 * index)
      let payload = try encoder.encode(
        PCMAudioFrame(samples: Self.samples(index, channels: 1, frameSamples: 960), channels: 1))
      // Loss, duplicates, jumps of the numbering; packets handed over in batches of 0 ... 3.
      if Int.random(in: 0..<100, using: &random) == 0 {
        sequence &+= UInt16.random(in: 100...60_000, using: &random)
      }
      let packet = ReceivedRTPPacket(
        packet: RTPPacket(
          header: RTPHeader(
            payloadType: 111, sequenceNumber: sequence, timestamp: UInt32(960 * index), ssrc: 9),
          payload: payload),
        arrival: now + .microseconds(Int.random(in: 0...15_000, using: &random)))
      sequence &+= 1
      if Int.random(in: 0..<7, using: &random) != 0 { batch.append(packet) }
      if Int.random(in: 0..<20, using: &random) == 0 { batch.append(packet) }
      if Int.random(in: 0..<3, using: &random) == 0 {
        batch.reverse()
        receiver.insert(contentsOf: batch)
        for received in batch { reference.insert(received) }
        batch.removeAll()
      }
      let frames = receiver.pull(now: now)
      XCTAssert(frames == reference.pull(now: now), "turn \(index)")
      XCTAssertEqual(receiver.nextDeadline, reference.nextDeadline, "turn \(index)")
      var statistics = receiver.statistics
      statistics.decodeCPUTime = reference.statistics.decodeCPUTime
      XCTAssertEqual(statistics, reference.statistics, "turn \(index)")
      played += frames.count
    }
    XCTAssertGreaterThan(played, 350)
    XCTAssertGreaterThan(receiver.statistics.fecRecoveredFrames, 0)
    XCTAssertGreaterThan(receiver.statistics.latePackets, 0)
  }
}

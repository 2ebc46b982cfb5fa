import CWebRTCCore
import XCTest

/// libopus through CWebRTCCore: a 1 kHz tone survives encode → decode at 64 kb/s.
final class OpusBindingTests: XCTestCase {
  private let sampleRate = 48_000
  /// 20 ms at 48 kHz (RFC 7587 §4.2 frame durations).
  private let frameSamples = 960

  func testOneKilohertzToneSurvivesEncodeAndDecode() throws {
    var error: Int32 = 0
    guard let encoder = opus_encoder_create(Int32(sampleRate), 1, OPUS_APPLICATION_AUDIO, &error),
      error == OPUS_OK
    else { throw BindingTestError.cCall("opus_encoder_create", code: Int(error)) }
    defer { opus_encoder_destroy(encoder) }
    guard let decoder = opus_decoder_create(Int32(sampleRate), 1, &error), error == OPUS_OK else {
      throw BindingTestError.cCall("opus_decoder_create", code: Int(error))
    }
    defer { opus_decoder_destroy(decoder) }

    XCTAssertEqual(wcs_opus_encoder_set(encoder, OPUS_SET_BITRATE_REQUEST, 64_000), OPUS_OK)
    var bitrate: Int32 = 0
    XCTAssertEqual(wcs_opus_encoder_get(encoder, OPUS_GET_BITRATE_REQUEST, &bitrate), OPUS_OK)
    XCTAssertEqual(bitrate, 64_000)
    var lookahead: Int32 = 0
    XCTAssertEqual(wcs_opus_encoder_get(encoder, OPUS_GET_LOOKAHEAD_REQUEST, &lookahead), OPUS_OK)
    XCTAssertGreaterThan(lookahead, 0)
    XCTAssertLessThan(Int(lookahead), 2 * frameSamples, "skipping 2 frames covers codec delay")
    var decoderRate: Int32 = 0
    XCTAssertEqual(
      wcs_opus_decoder_get(decoder, OPUS_GET_SAMPLE_RATE_REQUEST, &decoderRate), OPUS_OK)
    XCTAssertEqual(decoderRate, 48_000)
    XCTAssertEqual(wcs_opus_encoder_reset(encoder), OPUS_OK)
    XCTAssertEqual(wcs_opus_decoder_reset(decoder), OPUS_OK)

    let input: [Int16] = (0..<sampleRate).map {
      Int16(16_000 * sin(2 * Double.pi * 1000 * Double($0) / Double(sampleRate)))
    }
    var decoded: [Int16] = []
    var encodedBytes = 0
    var packet = [UInt8](repeating: 0, count: 4000)
    var frame = [Int16](repeating: 0, count: frameSamples)
    for start in stride(from: 0, to: input.count, by: frameSamples) {
      let pcm = Array(input[start..<start + frameSamples])
      let length = opus_encode(encoder, pcm, Int32(frameSamples), &packet, Int32(packet.count))
      XCTAssertGreaterThan(length, 0, "opus_encode at sample \(start)")
      guard length > 0 else { return }
      encodedBytes += Int(length)
      let samples = opus_decode(decoder, packet, length, &frame, Int32(frameSamples), 0)
      XCTAssertEqual(Int(samples), frameSamples)
      decoded += frame.prefix(max(0, Int(samples)))
    }
    XCTAssertEqual(decoded.count, input.count)
    // 64 kb/s for 1 s is 8000 octets; VBR may wander, but not by a factor of two.
    XCTAssertGreaterThan(encodedBytes, 4000)
    XCTAssertLessThan(encodedBytes, 12_000)

    let skip = 2 * frameSamples
    let decodedSignal = decoded.dropFirst(skip).map { Double($0) }
    let inputSignal = input.dropFirst(skip).map { Double($0) }
    let rate = Double(sampleRate)

    let coarseWindow = Array(decodedSignal.prefix(4800))
    let coarsePeak = SignalAnalysis.dominantFrequency(
      coarseWindow, candidates: stride(from: 50.0, through: 8000, by: 10).map { $0 },
      sampleRate: rate)
    let finePeak = SignalAnalysis.dominantFrequency(
      decodedSignal, candidates: stride(from: 960.0, through: 1040, by: 1).map { $0 },
      sampleRate: rate)
    XCTAssertEqual(coarsePeak ?? 0, 1000, accuracy: 20)
    XCTAssertEqual(finePeak ?? 0, 1000, accuracy: 20)
    let bandShare = SignalAnalysis.bandEnergyFraction(
      decodedSignal, low: 950, high: 1050, sampleRate: rate)
    XCTAssertGreaterThan(bandShare, 0.9, "share of energy in 950-1050 Hz")

    let levelDifference =
      20 * log10(SignalAnalysis.rms(decodedSignal) / SignalAnalysis.rms(inputSignal))
    XCTAssertEqual(levelDifference, 0, accuracy: 3, "decoded level in dB relative to the input")
  }
}

import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSMedia

final class OpusCodecTests: XCTestCase {
  func testToneRoundTripKeepsFrequencyAndEnergy() throws {
    let microphone = VirtualMicrophone(signal: .tone(frequency: 1000), amplitude: 10000)
    let encoder = try OpusEncoder(configuration: .init(channels: 1, bitrate: 32_000))
    let decoder = try OpusDecoder(channels: 1)
    var decoded: [PCMAudioFrame] = []
    for index in 0..<50 {
      let packet = try encoder.encode(microphone.frame(index))
      XCTAssertFalse(packet.isEmpty)
      XCTAssertLessThan(packet.count, 400)
      decoded.append(try decoder.decode(packet, timestamp: UInt32(index * 960)))
    }
    XCTAssertEqual(try decoder.lastPacketDuration(), 960)
    for frame in decoded { XCTAssertEqual(frame.samplesPerChannel, 960) }
    XCTAssertEqual(decoded[7].timestamp, 7 * 960)
    // Skip the first frames: the codec delay and start-up ramp.
    let tail = decoded[10...].flatMap(\.samples)
    XCTAssertEqual(CodecAudioAnalysis.dominantFrequency(in: tail), 1000)
    let sourceEnergy = microphone.frame(20).energy  // 10000² / 2
    let decodedEnergy = PCMAudioFrame(samples: tail, channels: 1).energy
    XCTAssertEqual(decodedEnergy / sourceEnergy, 1, accuracy: 0.2)
    // A 1 kHz tone has almost nothing at 3 kHz after decoding.
    XCTAssertGreaterThan(
      CodecAudioAnalysis.power(at: 1000, in: tail),
      100 * CodecAudioAnalysis.power(at: 3000, in: tail))
  }

  func testInBandFECRecoversLostPacketBetterThanConcealment() throws {
    // A sweep changes from frame to frame, so concealment (which extends the past) cannot guess it.
    let microphone = VirtualMicrophone(
      signal: .chirp(from: 300, to: 3000, period: 0.37), amplitude: 12000)
    let encoder = try OpusEncoder(
      configuration: .init(
        channels: 1, bitrate: 32_000, inbandFEC: true, expectedPacketLossPercent: 20))
    let packets = try (0..<40).map { try encoder.encode(microphone.frame($0)) }
    let lost = 30

    let reference = try OpusDecoder()
    var expected: PCMAudioFrame?
    for index in 0...lost {
      let frame = try reference.decode(packets[index])
      if index == lost { expected = frame }
    }
    let original = try XCTUnwrap(expected)

    let withFEC = try OpusDecoder()
    let withPLC = try OpusDecoder()
    for index in 0..<lost {
      _ = try withFEC.decode(packets[index])
      _ = try withPLC.decode(packets[index])
    }
    let recovered = try withFEC.decodeFEC(from: packets[lost + 1], timestamp: UInt32(lost * 960))
    let concealed = try withPLC.decode(nil)
    XCTAssertEqual(recovered.samplesPerChannel, 960)
    XCTAssertEqual(recovered.timestamp, UInt32(lost * 960))
    XCTAssertEqual(concealed.samplesPerChannel, 960)

    XCTAssertEqual(recovered.energy / original.energy, 1, accuracy: 0.35)
    let fecError = CodecAudioAnalysis.meanSquaredError(recovered.samples, original.samples)
    let plcError = CodecAudioAnalysis.meanSquaredError(concealed.samples, original.samples)
    // Measured: FEC error ≈ 6 % of the frame's energy, concealment's ≈ 140 %.
    XCTAssertLessThan(fecError * 5, plcError)
    XCTAssertLessThan(fecError, original.energy * 0.15)
    // The next packet still decodes normally after the recovery.
    XCTAssertEqual(try withFEC.decode(packets[lost + 1]).samplesPerChannel, 960)
  }

  func testStereoRoundTrip() throws {
    let rate = Double(PCMAudioFrame.sampleRate)
    let encoder = try OpusEncoder(configuration: .init(channels: 2, bitrate: 64_000))
    let decoder = try OpusDecoder(channels: 2)
    var output: [Int16] = []
    for index in 0..<30 {
      var samples = [Int16](repeating: 0, count: 960 * 2)
      for i in 0..<960 {
        let t = Double(index * 960 + i) / rate
        samples[2 * i] = Int16(9000 * sin(2 * Double.pi * 600 * t))
        samples[2 * i + 1] = Int16(9000 * sin(2 * Double.pi * 1500 * t))
      }
      let packet = try encoder.encode(PCMAudioFrame(samples: samples, channels: 2))
      let frame = try decoder.decode(packet)
      XCTAssertEqual(frame.channels, 2)
      XCTAssertEqual(frame.samples.count, 1920)
      if index >= 10 { output += frame.samples }
    }
    let left = stride(from: 0, to: output.count, by: 2).map { output[$0] }
    let right = stride(from: 1, to: output.count, by: 2).map { output[$0] }
    XCTAssertEqual(CodecAudioAnalysis.dominantFrequency(in: left), 600)
    XCTAssertEqual(CodecAudioAnalysis.dominantFrequency(in: right), 1500)
  }

  func testSettingsReadBack() throws {
    let configuration = OpusEncoder.Configuration(
      channels: 1, bitrate: 24_000, inbandFEC: true, expectedPacketLossPercent: 15, dtx: true,
      complexity: 5)
    let encoder = try OpusEncoder(configuration: configuration)
    XCTAssertEqual(try encoder.currentConfiguration(), configuration)
    try encoder.setBitrate(48_000)
    try encoder.setExpectedPacketLoss(percent: 3)
    let changed = try encoder.currentConfiguration()
    XCTAssertEqual(changed.bitrate, 48_000)
    XCTAssertEqual(changed.expectedPacketLossPercent, 3)
  }

  func testErrorsAreTyped() throws {
    XCTAssertThrowsError(try OpusEncoder(configuration: .init(channels: 3))) { error in
      XCTAssertEqual((error as? OpusError)?.operation, .invalidInput)
    }
    let encoder = try OpusEncoder()
    XCTAssertThrowsError(try encoder.encode(PCMAudioFrame(samples: [1, 2, 3], channels: 1)))
    XCTAssertThrowsError(try encoder.setExpectedPacketLoss(percent: 150)) { error in
      let opus = error as? OpusError
      XCTAssertEqual(opus?.operation, .control)
      XCTAssertEqual(opus?.code, -1)
      XCTAssertEqual(opus?.message, "invalid argument")
    }
    let decoder = try OpusDecoder()
    XCTAssertThrowsError(try decoder.decode([])) { error in
      XCTAssertEqual((error as? OpusError)?.operation, .invalidInput)
    }
    XCTAssertThrowsError(try decoder.decodeFEC(from: []))
    // TOC code 3 (arbitrary frame count) with a missing frame-count byte is invalid (RFC 6716 §3.2.5).
    XCTAssertThrowsError(try decoder.decode([0x03])) { error in
      XCTAssertEqual((error as? OpusError)?.operation, .decode)
      XCTAssertEqual((error as? OpusError)?.code, -4)
    }
  }
}

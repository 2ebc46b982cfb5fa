import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSMedia

final class G711Tests: XCTestCase {
  func testKnownMuLawValues() {
    // Values of the ITU-T G.711 µ-law table (and the classic Sun reference implementation).
    XCTAssertEqual(G711.muLaw(0), 0xFF)
    XCTAssertEqual(G711.muLaw(-1), 0x7F)
    XCTAssertEqual(G711.muLaw(32767), 0x80)
    XCTAssertEqual(G711.muLaw(-32768), 0x00)
    XCTAssertEqual(G711.muLaw(1000), 0xCE)
    XCTAssertEqual(G711.muLaw(-1000), 0x4E)
    XCTAssertEqual(G711.linear(muLaw: 0xFF), 0)
    XCTAssertEqual(G711.linear(muLaw: 0x80), 32124)
    XCTAssertEqual(G711.linear(muLaw: 0x00), -32124)
    XCTAssertEqual(G711.linear(muLaw: 0xCE), 988)
    XCTAssertEqual(G711.linear(muLaw: 0xFE), 8)
  }

  func testKnownALawValues() {
    XCTAssertEqual(G711.aLaw(0), 0xD5)
    XCTAssertEqual(G711.aLaw(-1), 0x55)
    XCTAssertEqual(G711.aLaw(32767), 0xAA)
    XCTAssertEqual(G711.aLaw(-32768), 0x2A)
    XCTAssertEqual(G711.aLaw(1000), 0xFA)
    XCTAssertEqual(G711.linear(aLaw: 0xD5), 8)
    XCTAssertEqual(G711.linear(aLaw: 0x55), -8)
    XCTAssertEqual(G711.linear(aLaw: 0xAA), 32256)
    XCTAssertEqual(G711.linear(aLaw: 0x2A), -32256)
    XCTAssertEqual(G711.linear(aLaw: 0xFA), 1008)
    XCTAssertEqual(G711.Law.muLaw.payloadType, 0)
    XCTAssertEqual(G711.Law.aLaw.payloadType, 8)
  }

  func testRoundTripErrorWithinHalfAStepForEverySample() {
    // G.711 keeps 4 mantissa bits after the leading one, so the reconstruction error is at most
    // 1/32 of the magnitude plus the smallest step (clipping above 32635 adds up to 643 in µ-law).
    for law in [G711.Law.muLaw, .aLaw] {
      var worstRelative = 0.0
      for value in Int(Int16.min)...Int(Int16.max) {
        let sample = Int16(value)
        let back = G711.decode(G711.encode([sample], law: law), law: law)[0]
        let error = abs(Int(back) - value)
        XCTAssertLessThanOrEqual(error, abs(value) / 32 + 16, "\(law) \(value) -> \(back)")
        if abs(value) > 1000 {
          worstRelative = max(worstRelative, Double(error) / Double(abs(value)))
        }
      }
      XCTAssertLessThan(worstRelative, 0.035)
    }
  }

  func testEveryCodeDecodesAndReencodesToItself() {
    for byte in 0...255 {
      let code = UInt8(byte)
      let mu = G711.linear(muLaw: code)
      // 0x7F is µ-law's "negative zero", which encodes back as the positive 0xFF.
      XCTAssertEqual(G711.muLaw(mu), code == 0x7F ? 0xFF : code)
      XCTAssertEqual(G711.aLaw(G711.linear(aLaw: code)), code)
    }
  }
}

final class G711AudioConverterTests: XCTestCase {
  private func roundTrip(frequency: Double, law: G711.Law) -> (sent: [Int16], received: [Int16]) {
    let microphone = VirtualMicrophone(signal: .tone(frequency: frequency), amplitude: 10000)
    var encoder = G711AudioConverter(law: law)
    var decoder = G711AudioConverter(law: law)
    var sent: [Int16] = []
    var received: [Int16] = []
    for index in 0..<10 {
      let frame = microphone.frame(index)
      let payload = encoder.encode(frame)
      XCTAssertEqual(payload.count, 160)
      let back = decoder.decode(payload, timestamp: frame.timestamp)
      XCTAssertEqual(back.samplesPerChannel, 960)
      if index >= 2 {
        sent += frame.samples
        received += back.samples
      }
    }
    return (sent, received)
  }

  func testTelephoneBandToneSurvivesBothLaws() {
    for law in [G711.Law.muLaw, .aLaw] {
      let (sent, received) = roundTrip(frequency: 1000, law: law)
      XCTAssertEqual(CodecAudioAnalysis.dominantFrequency(in: received), 1000)
      let ratio =
        PCMAudioFrame(samples: received, channels: 1).energy
        / PCMAudioFrame(samples: sent, channels: 1).energy
      XCTAssertEqual(ratio, 1, accuracy: 0.1)
    }
  }

  func testToneAboveNyquistOf8kHzIsFilteredNotAliased() {
    // 6 kHz would alias to 2 kHz without the low-pass filter.
    let (sent, received) = roundTrip(frequency: 6000, law: .muLaw)
    let ratio =
      PCMAudioFrame(samples: received, channels: 1).energy
      / PCMAudioFrame(samples: sent, channels: 1).energy
    XCTAssertLessThan(ratio, 0.01)  // at least 20 dB down
  }
}

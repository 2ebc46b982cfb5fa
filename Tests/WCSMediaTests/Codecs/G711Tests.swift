import XCTest

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

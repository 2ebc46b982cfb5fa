import XCTest

@testable import WCSCodecs

/// A configuration OpenH264 refuses is an error, not a crash (the encoder was freed twice).
final class H264EncoderRefusalTests: XCTestCase {
  func testAConfigurationOpenH264RefusesThrowsInitialization() {
    XCTAssertThrowsError(
      try H264Encoder(
        configuration: .init(width: 64, height: 48, bitrateKbps: 200, maxNALUnitSize: 400))
    ) { error in
      XCTAssertEqual((error as? H264Error)?.reason, .initialization, "\(error)")
    }
  }
}

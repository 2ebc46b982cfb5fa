import WCSMedia
import XCTest

final class AudioPlaybackConversionTests: XCTestCase {
  func testChannelConversionForPlayback() {
    let mono = PCMAudioFrame(samples: [100, -200, 300], channels: 1)
    XCTAssertEqual(
      AudioPlaybackDevice.convert(mono, toChannels: 2), [100, 100, -200, -200, 300, 300])
    let stereo = PCMAudioFrame(samples: [100, 300, -32768, -32768, 32767, 32765], channels: 2)
    XCTAssertEqual(AudioPlaybackDevice.convert(stereo, toChannels: 1), [200, -32768, 32766])
    XCTAssertEqual(AudioPlaybackDevice.convert(stereo, toChannels: 2), stereo.samples)
  }
}

import XCTest

@testable import WCSDevices
@testable import WCSMedia

/// Which ALSA hint names are offered as microphones and speakers.
final class AudioDeviceEnumeratorFilterTests: XCTestCase {
  func testOnlyNamesThatReachASoundCardAreListed() {
    let cardNames = [
      "hw:CARD=PCH,DEV=0", "plughw:CARD=PCH,DEV=0", "sysdefault:CARD=PCH", "front:CARD=PCH,DEV=0",
      "dsnoop:CARD=PCH,DEV=0",
    ]
    for name in cardNames {
      XCTAssertTrue(AudioDeviceEnumerator.isSoundCardPCM(name, cardsPresent: true), name)
      XCTAssertTrue(AudioDeviceEnumerator.isSoundCardPCM(name, cardsPresent: false), name)
    }
    // libasound2-plugins' converters and routers have no device behind them.
    for name in [
      "lavrate", "samplerate", "speexrate", "upmix", "vdownmix", "jack", "oss", "pulse", "null",
    ] {
      XCTAssertFalse(AudioDeviceEnumerator.isSoundCardPCM(name, cardsPresent: true), name)
    }
    XCTAssertTrue(AudioDeviceEnumerator.isSoundCardPCM("default", cardsPresent: true))
    XCTAssertFalse(AudioDeviceEnumerator.isSoundCardPCM("default", cardsPresent: false))
    XCTAssertFalse(AudioDeviceEnumerator.isSoundCardPCM("sysdefault", cardsPresent: false))
  }
}

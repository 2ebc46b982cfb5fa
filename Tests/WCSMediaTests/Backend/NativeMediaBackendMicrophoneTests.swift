import Foundation
import XCTest

@testable import WCSDevices
@testable import WCSEngine
@testable import WCSMedia
@testable import WCSMediaSeam

/// A PulseAudio microphone feeding a publish connection, against a private server the test
/// starts: a 1 kHz tone played into a null sink is captured from its monitor
/// (`pulse:test.monitor`), published and heard by the loopback player.
final class NativeMediaBackendMicrophoneTests: XCTestCase {
  private var pulse: PrivatePulseAudio?

  override func setUpWithError() throws {
    pulse = try PrivatePulseAudio()
  }

  override func tearDown() {
    pulse?.stop()
    pulse = nil
  }

  func testPulseAudioMicrophoneIsPublished() throws {
    let call = try LoopbackCall(
      publish: MediaConnectionRequest(
        direction: .publish, audio: .init(deviceID: "pulse:test.monitor"), video: nil)
    ) { configuration in
      var configuration = configuration
      configuration.systemDevices = NativeSystemDevices(
        videoIO: FakeV4L2DeviceIO(devices: [:]), audioBackend: .pulseAudio)
      return NativeMediaBackend(configuration: configuration)
    }
    defer { call.close() }
    try call.connectPublisher(self)
    try call.connectPlayer(self)
    let speaker = try AudioPlaybackDevice(device: "test", channels: 1, backend: .pulseAudio)
    let tone = VirtualMicrophone(signal: .tone(frequency: 1000), amplitude: 8000)
    let deadline = Date().addingTimeInterval(20)
    var index = 0
    func loud() -> [AudioFrame] {
      call.audio.value.filter { ($0.samples.map { abs(Int($0)) }.max() ?? 0) > 3000 }
    }
    // `write` blocks at the sink's real-time pace.
    while loud().count < 30, Date() < deadline {
      try speaker.write(tone.frame(index))
      index += 1
    }
    let samples = loud().dropFirst(5).prefix(20).flatMap(\.samples)
    XCTAssertGreaterThanOrEqual(samples.count, 20 * 960, "the player heard the microphone")
    XCTAssertEqual(zeroCrossingFrequency(samples, sampleRate: 48_000), 1000, accuracy: 20)
  }

  /// A microphone the sound server does not have fails the offer with its reason.
  func testMissingMicrophoneIsRefused() throws {
    let call = try LoopbackCall(
      publish: MediaConnectionRequest(
        direction: .publish, audio: .init(deviceID: "pulse:nothing-here"), video: nil))
    defer { call.close() }
    XCTAssertThrowsError(try offer(of: call.publisher)) { error in
      guard case .deviceUnavailable(let reason) = error as? MediaBackendError else {
        return XCTFail("\(error)")
      }
      XCTAssertTrue(reason.contains("nothing-here"), reason)
    }
  }
}

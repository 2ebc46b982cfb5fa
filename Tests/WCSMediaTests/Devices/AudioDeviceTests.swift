import Dispatch
import Foundation
import Synchronization
import WCSMedia
import XCTest

/// PulseAudio capture and playback against a private server the test starts: a 1 kHz tone played
/// into a null sink comes back from its monitor source.
final class AudioDeviceTests: XCTestCase {
  private var pulse: PrivatePulseAudio?

  override func setUpWithError() throws {
    pulse = try PrivatePulseAudio()
  }

  override func tearDown() {
    pulse?.stop()
    pulse = nil
  }

  func testToneFromNullSinkMonitorIsOneKilohertz() throws {
    let speaker = try AudioPlaybackDevice(device: "test", channels: 1, backend: .pulseAudio)
    let microphone = try AudioCaptureDevice(
      device: "test.monitor", channels: 1, backend: .pulseAudio)
    XCTAssertEqual(speaker.backend, .pulseAudio)
    XCTAssertEqual(microphone.backend, .pulseAudio)

    let frames = Mutex<[PCMAudioFrame]>([])
    let enough = DispatchSemaphore(value: 0)
    microphone.start { event in
      guard case .frame(let frame) = event else { return }
      let loud = frames.withLock {
        $0.append(frame)
        return $0.filter { $0.energy > 1_000_000 }.count
      }
      if loud == 15 { enough.signal() }
    }
    let tone = VirtualMicrophone(signal: .tone(frequency: 1000), amplitude: 8000)
    let deadline = Date().addingTimeInterval(5)
    var index = 0
    while enough.wait(timeout: .now()) == .timedOut, Date() < deadline {
      try speaker.write(tone.frame(index))
      index += 1
    }
    microphone.stop()
    let captured = frames.withLock { $0 }
    let loud = captured.filter { $0.energy > 1_000_000 }
    XCTAssertGreaterThanOrEqual(loud.count, 15, "the monitor carried the tone within 5 s")
    XCTAssertEqual(
      zip(captured, captured.dropFirst()).filter { $1.timestamp &- $0.timestamp != 960 }.count, 0,
      "capture timestamps advance 960 per 20 ms frame")
    let samples = loud.suffix(10).flatMap(\.samples).map(Double.init)
    XCTAssertEqual(samples.count, 9600)
    let peak = ToneAnalysis.dominantFrequency(samples, from: 10, to: 4000, stepHz: 10)
    XCTAssertEqual(peak, 1000, accuracy: 10, "dominant frequency of what the monitor recorded")
  }

  func testEnumerationListsTheNullSinkAndItsMonitor() throws {
    let listing = AudioDeviceEnumerator.list(backend: .pulseAudio)
    XCTAssertEqual(listing.errors, [])
    XCTAssertEqual(listing.speakers.map(\.id), ["test"])
    let monitor = try XCTUnwrap(listing.microphones.first { $0.id == "test.monitor" })
    XCTAssertTrue(monitor.isMonitor)
    XCTAssertEqual(monitor.backend, .pulseAudio)
    XCTAssertFalse(monitor.label.isEmpty)

    let io = FakeV4L2DeviceIO(devices: [
      "/dev/video0": FakeV4L2DeviceIO.Device(
        capability: FakeV4L2DeviceIO.capture("Fake Webcam", bus: "usb-1"),
        formats: [.yuyv: [V4L2Size(width: 640, height: 480): []]])
    ])
    let all = MediaDeviceEnumerator(videoIO: io, audioBackend: .pulseAudio, includeMonitors: true)
      .list()
    XCTAssertEqual(all.errors, [])
    XCTAssertEqual(
      all.devices(of: .camera).map(\.id), [MediaDeviceEnumerator.virtualCameraID, "/dev/video0"])
    XCTAssertEqual(all.devices(of: .camera).map(\.source), [.virtual, .v4l2])
    XCTAssertEqual(
      all.devices(of: .microphone).map(\.id),
      [MediaDeviceEnumerator.virtualMicrophoneID, "test.monitor"])
    XCTAssertEqual(all.devices(of: .speaker).map(\.id), ["test"])
    XCTAssertEqual(all.devices(of: .speaker).map(\.source), [.pulseAudio])
    let withoutMonitors = MediaDeviceEnumerator(videoIO: io, audioBackend: .pulseAudio).list()
    XCTAssertEqual(
      withoutMonitors.devices(of: .microphone).map(\.id),
      [MediaDeviceEnumerator.virtualMicrophoneID])
  }

  func testMissingSourceAndDeadServerGiveTypedErrors() throws {
    XCTAssertThrowsError(
      try AudioCaptureDevice(device: "no-such-source", backend: .pulseAudio)
    ) { error in
      XCTAssertEqual(
        error as? AudioDeviceError, .deviceNotFound(backend: .pulseAudio, device: "no-such-source"))
    }
    pulse?.terminateServer()
    XCTAssertThrowsError(try AudioCaptureDevice(backend: .pulseAudio)) { error in
      guard case .openFailed(.pulseAudio, let reason) = error as? AudioDeviceError else {
        return XCTFail("expected openFailed, got \(error)")
      }
      XCTAssertFalse(reason.isEmpty)
    }
    let listing = AudioDeviceEnumerator.list(backend: .pulseAudio)
    XCTAssertEqual(listing.speakers, [])
    XCTAssertEqual(listing.errors.count, 1)
    if !FileManager.default.fileExists(atPath: "/dev/snd") {
      // No server and no sound card: automatic gives up with both reasons.
      XCTAssertThrowsError(try AudioCaptureDevice()) { error in
        guard case .noSoundServer(let reason) = error as? AudioDeviceError else {
          return XCTFail("expected noSoundServer, got \(error)")
        }
        XCTAssertTrue(reason.contains("ALSA"), reason)
      }
    }
  }
}

import Foundation
import Synchronization
import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSEngine
@testable import WCSMedia
@testable import WCSMediaSeam

/// A played stream's audio on the default sound output, against a private PulseAudio server the
/// test starts with one null sink (so it is the default): the virtual microphone's 440 Hz tone is
/// published, relayed on loopback, decoded by the player, played on the default output and
/// recorded back from the sink's monitor.
final class AudioPlaybackSpeakerTests: XCTestCase {
  private var pulse: PrivatePulseAudio?
  private static let toneHz = 440.0

  override func setUpWithError() throws {
    pulse = try PrivatePulseAudio()
  }

  override func tearDown() {
    pulse?.stop()
    pulse = nil
  }

  private static func toneCall(playOutput: MediaConnectionRequest.AudioOutput = .none) throws
    -> LoopbackCall
  {
    try LoopbackCall(
      publish: MediaConnectionRequest(direction: .publish, audio: .init(), video: nil),
      playOutput: playOutput
    ) { configuration in
      var configuration = configuration
      configuration.systemDevices = nil
      return NativeMediaBackend(configuration: configuration)
    }
  }

  /// Records the null sink's monitor until `count` frames louder than `threshold` (mean energy
  /// per sample) arrived or `timeout` seconds passed; returns every frame recorded.
  private func recordMonitor(loudFrames count: Int, threshold: Double = 1_000_000, timeout: Double)
    throws -> [PCMAudioFrame]
  {
    let monitor = try AudioCaptureDevice(device: "test.monitor", channels: 1, backend: .pulseAudio)
    let frames = Mutex<[PCMAudioFrame]>([])
    monitor.start { event in
      guard case .frame(let frame) = event else { return }
      frames.withLock { $0.append(frame) }
    }
    _ = waitUntil(timeout: timeout) {
      frames.withLock { $0.filter { $0.energy > threshold }.count } >= count
    }
    monitor.stop()
    return frames.withLock { $0 }
  }

  /// Records `count` frames of the monitor after skipping `skip` (what was still queued).
  private func recordMonitor(frames count: Int, skipping skip: Int) throws -> [PCMAudioFrame] {
    let monitor = try AudioCaptureDevice(device: "test.monitor", channels: 1, backend: .pulseAudio)
    var frames: [PCMAudioFrame] = []
    for index in 0..<(skip + count) {
      let frame = try monitor.readFrame()
      if index >= skip { frames.append(frame) }
    }
    return frames
  }

  private func assertTone(
    _ recorded: [PCMAudioFrame], file: StaticString = #filePath, line: UInt = #line
  ) {
    let loud = recorded.filter { $0.energy > 1_000_000 }
    XCTAssertGreaterThanOrEqual(
      loud.count, 25, "the default output carried the played audio", file: file, line: line)
    let samples = loud.suffix(20).flatMap(\.samples).map(Double.init)
    guard samples.count == 20 * 960 else { return }
    let peak = ToneAnalysis.dominantFrequency(samples, from: 300, to: 600, stepHz: 1)
    XCTAssertEqual(
      peak, Self.toneHz, accuracy: 3,
      "dominant frequency of what the sink played", file: file, line: line)
    let rms = (samples.reduce(0) { $0 + $1 * $1 } / Double(samples.count)).squareRoot()
    // The microphone's sine has amplitude 8000 (RMS 5657); Opus keeps it within a few dB.
    XCTAssertGreaterThan(rms, 2500, "level well above silence", file: file, line: line)
  }

  /// `setAudioOutput(.defaultDevice)` plays the tone on the default sink; `.none` closes the
  /// device and the sink is silent again; the speaker's queue did not back up.
  func testPlayedToneReachesTheDefaultOutputUntilStopped() throws {
    let call = try Self.toneCall()
    defer { call.close() }
    try call.connectPublisher(self)
    try call.connectPlayer(self)
    waitForBackend("the player decodes audio") { call.audio.value.count >= 10 }

    let before = try recordMonitor(frames: 5, skipping: 0)
    XCTAssertLessThan(before.map(\.energy).max() ?? -1, 100, "nothing plays before it is asked")

    try call.player.setAudioOutput(.defaultDevice)
    let speaker = try XCTUnwrap(call.player.audioOutputSink)
    XCTAssertEqual(speaker.backend, .pulseAudio)
    XCTAssertNil(speaker.deviceName, "the default output")
    assertTone(try recordMonitor(loudFrames: 40, timeout: 10))
    XCTAssertNil(call.player.audioOutputFailure)
    XCTAssertGreaterThan(speaker.writtenFrames, 40)

    try call.player.setAudioOutput(.none)
    XCTAssertNil(call.player.audioOutputSink)
    let writtenAtStop = speaker.writtenFrames
    let after = try recordMonitor(frames: 10, skipping: 15)
    XCTAssertLessThan(after.map(\.energy).max() ?? -1, 100, "the monitor is silent after .none")
    XCTAssertEqual(speaker.writtenFrames, writtenAtStop, "nothing is written after .none")
    XCTAssertGreaterThan(call.audio.value.count, 50, "the playout sink still gets the audio")
  }

  /// Twenty quick on/off toggles: each `.none` closes the device it replaced (nothing is written
  /// to it after), the last `.defaultDevice` plays the tone, and one sink is open at the end.
  func testQuickTogglesLeaveOneOutputPlaying() throws {
    let call = try Self.toneCall()
    defer { call.close() }
    try call.connectPublisher(self)
    try call.connectPlayer(self)
    waitForBackend("the player decodes audio") { call.audio.value.count >= 10 }
    var replaced: [SpeakerPlayoutSink] = []
    for _ in 0..<10 {
      try call.player.setAudioOutput(.defaultDevice)
      replaced.append(try XCTUnwrap(call.player.audioOutputSink))
      try call.player.setAudioOutput(.none)
      XCTAssertNil(call.player.audioOutputSink)
    }
    let writtenByReplaced = replaced.map(\.writtenFrames)
    try call.player.setAudioOutput(.defaultDevice)
    let speaker = try XCTUnwrap(call.player.audioOutputSink)
    assertTone(try recordMonitor(loudFrames: 40, timeout: 10))
    XCTAssertNil(call.player.audioOutputFailure)
    XCTAssertEqual(replaced.map(\.writtenFrames), writtenByReplaced, "closed outputs stay closed")
    XCTAssertGreaterThan(speaker.writtenFrames, 40)
  }

  /// `Audio.output = .defaultDevice` in the play request opens the output with the offer.
  func testRequestedOutputPlaysFromTheStart() throws {
    let call = try Self.toneCall(playOutput: .defaultDevice)
    defer { call.close() }
    try call.connectPublisher(self)
    try call.connectPlayer(self)
    assertTone(try recordMonitor(loudFrames: 40, timeout: 10))
    XCTAssertNotNil(call.player.audioOutputSink)
    call.close()
    let after = try recordMonitor(frames: 10, skipping: 15)
    XCTAssertLessThan(
      after.map(\.energy).max() ?? -1, 100, "closing the connection closes the output")
  }

  /// `setAudioOutput(.none)` before the offer wins over the request's `.defaultDevice`: no
  /// device is opened, the sink stays silent while the player decodes audio.
  func testSetAudioOutputBeforeTheOfferWinsOverTheRequest() throws {
    let call = try Self.toneCall(playOutput: .defaultDevice)
    defer { call.close() }
    try call.player.setAudioOutput(.none)
    try call.connectPublisher(self)
    try call.connectPlayer(self)
    waitForBackend("the player decodes audio") { call.audio.value.count >= 25 }
    XCTAssertNil(call.player.audioOutputSink)
    let recorded = try recordMonitor(frames: 10, skipping: 0)
    XCTAssertLessThan(recorded.map(\.energy).max() ?? -1, 100, "nothing plays")
  }

  /// A sink that does not exist and a publish connection are refused with their reason; the
  /// connections go on.
  func testMissingSinkAndPublisherAreRefused() throws {
    let call = try Self.toneCall()
    defer { call.close() }
    try call.connectPublisher(self)
    try call.connectPlayer(self)
    XCTAssertThrowsError(try call.player.setAudioOutput(.device("no-such-sink"))) { error in
      XCTAssertEqual(
        error as? MediaBackendError,
        .audioOutputUnavailable(
          "\(AudioDeviceError.deviceNotFound(backend: .pulseAudio, device: "no-such-sink"))"))
    }
    XCTAssertNil(call.player.audioOutputSink)
    XCTAssertTrue(call.player.audioOutputFailure?.contains("no-such-sink") == true)
    XCTAssertThrowsError(try call.publisher.setAudioOutput(.defaultDevice)) { error in
      guard case .audioOutputUnavailable(let reason) = error as? MediaBackendError else {
        return XCTFail("\(error)")
      }
      XCTAssertTrue(reason.contains("publish"), reason)
    }
    let received = call.audio.value.count
    waitForBackend("the player still plays") { call.audio.value.count >= received + 10 }
    XCTAssertEqual(call.playStates.value.last, .connected)
  }

  /// 100 blocks queued at once: `play` never blocks, at most `capacity` wait, the oldest are
  /// dropped and counted, every block is either written or dropped; after `close()` nothing more
  /// is written.
  func testSpeakerQueueDropsTheOldestWhenTheDeviceFallsBehind() throws {
    let speaker = try SpeakerPlayoutSink(device: "test", channels: 1, backend: .pulseAudio)
    let tone = VirtualMicrophone(signal: .tone(frequency: Self.toneHz))
    for index in 0..<100 {
      let frame = tone.frame(index)
      speaker.play(AudioFrame(sampleRate: 48_000, channels: 1, samples: frame.samples))
    }
    speaker.play(AudioFrame(sampleRate: 44_100, channels: 1, samples: [0, 0]))
    XCTAssertGreaterThanOrEqual(speaker.droppedFrames, 50, "the device cannot take 2 s at once")
    XCTAssertTrue(
      waitUntil(timeout: 5) { speaker.writtenFrames + speaker.droppedFrames == 101 },
      "written \(speaker.writtenFrames) + dropped \(speaker.droppedFrames) = 101")
    XCTAssertNil(speaker.failure)
    speaker.close()
    let written = speaker.writtenFrames
    speaker.play(AudioFrame(sampleRate: 48_000, channels: 1, samples: tone.frame(0).samples))
    usleep(100_000)
    XCTAssertEqual(speaker.writtenFrames, written, "nothing is written after close")
  }
}

import Foundation
import XCTest

@testable import WCSDevices
@testable import WCSEngine
@testable import WCSMedia
@testable import WCSMediaSeam

/// An app capturer as on iOS: an `RTCVideoCapturer` subclass adopting `FPWCSVideoCapturer`,
/// delivering the virtual camera's pictures from frame 5000 on while started.
private final class PatternCapturer: RTCVideoCapturer, FPWCSVideoCapturer, @unchecked Sendable {
  // @unchecked Sendable: `timer` is touched under the calls the engine serializes; the boxes
  // are locked.
  let calls = BackendTestBox<[String]>([])
  private var timer: (any DispatchSourceTimer)?
  private let queue = DispatchQueue(label: "PatternCapturer")

  func startCapture(with device: CaptureDevice?, format: VideoCaptureFormat?, fps: Int) {
    let width = format?.width ?? 320
    let height = format?.height ?? 240
    calls.mutate { $0.append("start \(width)x\(height)@\(fps)") }
    let camera = VirtualCamera(width: width, height: height, frameRate: fps)
    let counter = QueueCounter()
    let source = DispatchSource.makeTimerSource(queue: queue)
    source.schedule(deadline: .now(), repeating: .milliseconds(1000 / max(fps, 1)))
    source.setEventHandler { [weak self] in
      let index = 5000 + counter.next()
      self?.deliver(VideoFrame(camera.frame(index), timestampNs: Int64(index) * 33_333_333))
    }
    source.resume()
    timer = source
  }

  func stopCapture() {
    calls.mutate { $0.append("stop") }
    timer?.cancel()
    timer = nil
  }

  func lockCameraOrientation() {}
  func unlockCameraOrientation() {}
}

final class NativeMediaBackendSourceTests: XCTestCase {
  /// The app's capturer replaces the camera: started with the constraints' format, its
  /// pictures reach the player, stopped on close.
  func testCustomCapturerIsPublished() throws {
    let capturer = PatternCapturer()
    let call = try LoopbackCall(
      publish: MediaConnectionRequest(
        direction: .publish, audio: nil,
        video: .init(maxWidth: 320, maxHeight: 240, maxFrameRate: 25, capturer: capturer)))
    try call.connectPublisher(self)
    try call.connectPlayer(self)
    waitForBackend("capturer frames") { call.frameNumbers.count >= 10 }
    let numbers = call.frameNumbers
    XCTAssertGreaterThanOrEqual(numbers.first ?? 0, 5000)
    XCTAssertEqual(numbers, numbers.sorted())
    XCTAssertEqual(capturer.calls.value, ["start 320x240@25"])
    call.close()
    XCTAssertEqual(capturer.calls.value, ["start 320x240@25", "stop"])
  }

  /// With `useExternalAudioSource(true)`, the app's PCM (a 1 kHz tone in 10 ms blocks) is
  /// what the player hears.
  func testExternalAudioIsPublished() throws {
    let call = try LoopbackCall(
      publish: MediaConnectionRequest(direction: .publish, audio: .init(), video: nil)
    ) { configuration in
      let backend = NativeMediaBackend(configuration: configuration)
      backend.useExternalAudioSource(true)
      return backend
    }
    defer { call.close() }
    try call.connectPublisher(self)
    try call.connectPlayer(self)
    waitForBackend("connected") {
      call.publishStates.value.last == .connected && call.playStates.value.last == .connected
    }
    let block = 480
    for index in 0..<150 {
      let samples = (0..<block).map { sample in
        let t = Double(index * block + sample) / 48_000
        return Int16(8000 * sin(2 * Double.pi * 1000 * t))
      }
      call.backend.deliverExternalAudio(
        AudioFrame(sampleRate: 48_000, channels: 1, samples: samples))
      Thread.sleep(forTimeInterval: 0.01)
    }
    waitForBackend("tone played") {
      call.audio.value.contains { frame in
        frame.samples.map { abs(Int($0)) }.max() ?? 0 > 3000
      }
    }
    let loud = call.audio.value.filter { ($0.samples.map { abs(Int($0)) }.max() ?? 0) > 3000 }
    let samples = loud.dropFirst(2).prefix(20).flatMap(\.samples)
    XCTAssertEqual(zeroCrossingFrequency(samples, sampleRate: 48_000), 1000, accuracy: 20)
    // Other rates are refused rather than played at the wrong pitch. The 150 blocks above are
    // 75 frames of 20 ms, encoded on the send track's queue: all of them first, so the count
    // compared is not still moving with frames delivered earlier.
    waitForBackend("every delivered frame encoded") {
      (call.statistics(of: call.publisher, self)?.audioFramesEncoded ?? 0) >= 75
    }
    let before = call.statistics(of: call.publisher, self)?.audioFramesEncoded ?? 0
    call.backend.deliverExternalAudio(
      AudioFrame(sampleRate: 44_100, channels: 1, samples: [Int16](repeating: 1, count: 4410)))
    Thread.sleep(forTimeInterval: 0.05)
    XCTAssertEqual(call.statistics(of: call.publisher, self)?.audioFramesEncoded ?? 0, before)
  }

  /// `useStereo` publishes two-channel Opus (`stereo=1` munged into the answer) and the player
  /// decodes two channels carrying the tone.
  func testStereoAudioIsPlayedInTwoChannels() throws {
    let call = try LoopbackCall(
      publish: MediaConnectionRequest(
        direction: .publish, audio: .init(useFEC: true, useStereo: true, bitrate: 64_000),
        video: nil))
    defer { call.close() }
    try call.connectPublisher(self)
    try call.connectPlayer(self)
    waitForBackend("1 s of audio") { call.audio.value.count >= 50 }
    let frame = try XCTUnwrap(call.audio.value.last)
    XCTAssertEqual(frame.channels, 2)
    XCTAssertEqual(frame.samples.count, 2 * 960)
    let tail = call.audio.value.suffix(20).flatMap(\.samples)
    let left = stride(from: 0, to: tail.count, by: 2).map { tail[$0] }
    let right = stride(from: 1, to: tail.count, by: 2).map { tail[$0] }
    XCTAssertEqual(zeroCrossingFrequency(left, sampleRate: 48_000), 440, accuracy: 15)
    XCTAssertEqual(zeroCrossingFrequency(right, sampleRate: 48_000), 440, accuracy: 15)
  }

  /// The WAV playout sink writes the blocks it gets, readable back sample for sample.
  func testWAVPlayoutSinkWritesBlocks() throws {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "playout-\(UUID().uuidString).wav")
    defer { try? FileManager.default.removeItem(at: url) }
    let sink = try WAVPlayoutSink(url: url, channels: 1)
    let microphone = VirtualMicrophone()
    for index in 0..<3 {
      sink.play(
        AudioFrame(sampleRate: 48_000, channels: 1, samples: microphone.frame(index).samples))
    }
    sink.play(AudioFrame(sampleRate: 48_000, channels: 2, samples: [1, 2]))
    try sink.close()
    sink.play(AudioFrame(sampleRate: 48_000, channels: 1, samples: [1, 2]))
    let file = try WAVFile(url: url)
    XCTAssertEqual(file.sampleRate, 48_000)
    XCTAssertEqual(file.channels, 1)
    XCTAssertEqual(file.samples, (0..<3).flatMap { microphone.frame($0).samples })
  }
}

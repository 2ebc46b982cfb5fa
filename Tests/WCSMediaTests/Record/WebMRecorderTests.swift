import Foundation
import XCTest

@testable import WCSDevices
@testable import WCSMedia
@testable import WCSRecording

final class WebMRecorderTests: XCTestCase {
  /// Feeds `seconds` of 320x240@30 VP8 and 20 ms Opus packets of a 440 Hz tone, interleaved by
  /// time as they would arrive; `skipLeadingFrames` encoded frames are never given to the recorder.
  private func record(
    to path: String, seconds: Int, videoStart: UInt32, audioStart: UInt32,
    keyFrameAt: Int? = nil, skipLeadingFrames: Int = 0
  ) throws -> WebMRecorder.Statistics {
    let recorder = try WebMRecorder(
      path: path, video: (width: 320, height: 240), audio: (sampleRate: 48_000, channels: 2))
    let vp8 = try TestVP8Encoder(width: 320, height: 240, framesPerSecond: 30)
    let opus = try TestOpusEncoder(channels: 2, frequency: 440)
    let videoFrames = seconds * 30
    let audioPackets = seconds * 50
    var video = 0
    var audio = 0
    while video < videoFrames || audio < audioPackets {
      // Both in milliseconds: video frame n at n*100/3 ms, audio packet n at n*20 ms.
      if video < videoFrames && (audio >= audioPackets || video * 100 <= audio * 60) {
        let frames = try vp8.encodeNext(forceKeyFrame: video == keyFrameAt)
        if video >= skipLeadingFrames {
          for frame in frames {
            try recorder.writeVideo(
              frame.bytes, isKeyFrame: frame.isKeyFrame,
              rtpTimestamp: videoStart &+ UInt32(video * 3000))
          }
        }
        video += 1
      } else {
        try recorder.writeAudio(
          try opus.encodeNext(), rtpTimestamp: audioStart &+ UInt32(audio * 960))
        audio += 1
      }
    }
    try recorder.finish()
    return recorder.statistics
  }

  private func assertDecodes(_ path: String, file: StaticString = #filePath, line: UInt = #line)
    throws
  {
    let ffmpeg = try ExternalTool.require("ffmpeg")
    let result = try ExternalTool.run(ffmpeg, ["-v", "error", "-i", path, "-f", "null", "-"])
    XCTAssertEqual(result.status, 0, "ffmpeg could not decode \(path)", file: file, line: line)
  }

  func testThreeSecondsOfVP8AndOpusGiveAPlayableWebM() throws {
    _ = try ExternalTool.require("ffprobe")
    let path = try ExternalTool.temporaryDirectory(for: self).appendingPathComponent("a.webm").path
    let statistics = try record(to: path, seconds: 3, videoStart: 1_000, audioStart: 77_000)
    XCTAssertEqual(statistics.videoFramesWritten, 90)
    XCTAssertEqual(statistics.audioPacketsWritten, 150)
    XCTAssertEqual(statistics.videoFramesDroppedBeforeKeyFrame, 0)

    let probe = try ProbeResult.probe(path)
    XCTAssertEqual(probe.streams.map(\.codecName), ["vp8", "opus"])
    XCTAssertEqual(probe.streams.first?.width, 320)
    XCTAssertEqual(probe.streams.first?.height, 240)
    XCTAssertEqual(probe.streams.first?.packets, 90)
    XCTAssertEqual(probe.streams.last?.packets, 150)
    XCTAssertEqual(probe.duration, 3.0, accuracy: 0.2)
    try assertDecodes(path)
  }

  func testRecordingReadsBackWithTheSourcePictureAndTone() throws {
    let path = try ExternalTool.temporaryDirectory(for: self).appendingPathComponent("r.webm").path
    _ = try record(to: path, seconds: 3, videoStart: 123_456, audioStart: 654_321)
    let reader = try MediaFileReader(path: path, audioChannels: 2)
    XCTAssertEqual(reader.info.video?.codecName, "vp8")
    XCTAssertEqual(reader.info.audio?.codecName, "opus")
    XCTAssertEqual(reader.info.audio?.channels, 2)
    var video: [DecodedVideoFrame] = []
    var audio: [Int16] = []
    while let sample = try reader.nextSample() {
      switch sample {
      case .video(let frame): video.append(frame)
      case .audio(let chunk): audio += chunk.samples
      }
    }
    XCTAssertEqual(video.count, 90)
    for (index, frame) in video.enumerated() {
      // 90 kHz RTP steps of 3000, stored in Matroska's 1 ms units.
      XCTAssertEqual(frame.ptsSeconds, Double(index) / 30, accuracy: 0.001)
    }
    // The first picture is the encoder's input: PSNR of the luma against the gradient.
    let first = try XCTUnwrap(video.first)
    var squaredError = 0.0
    for row in 0..<240 {
      for column in 0..<320 {
        let expected = Double(UInt8(truncatingIfNeeded: column + row))
        let actual = Double(first.y[row * first.yStride + column])
        squaredError += (expected - actual) * (expected - actual)
      }
    }
    let psnr = 10 * log10(255 * 255 / max(squaredError / (320 * 240), 1e-9))
    XCTAssertGreaterThan(psnr, 28)
    // Left channel of 1 s in the middle: the 440 Hz tone.
    let left = stride(from: 48_000 * 2, to: 48_000 * 4, by: 2).map { Double(audio[$0]) }
    XCTAssertEqual(
      ToneAnalysis.strongest(of: stride(from: 110.0, through: 1980, by: 110), in: left), 440)
  }

  func testTimestampsThatWrapPast2To32GiveTheRightDuration() throws {
    _ = try ExternalTool.require("ffprobe")
    let path = try ExternalTool.temporaryDirectory(for: self).appendingPathComponent("w.webm").path
    // Arbitrary starts 1 s (video) and 0.5 s (audio) before the 32-bit wrap.
    let statistics = try record(
      to: path, seconds: 3, videoStart: UInt32.max - 90_000 + 1_234,
      audioStart: UInt32.max - 24_000 + 17)
    XCTAssertEqual(statistics.videoFramesDroppedOutOfOrder, 0)
    XCTAssertEqual(statistics.audioPacketsDroppedOutOfOrder, 0)
    let probe = try ProbeResult.probe(path)
    XCTAssertEqual(probe.streams.first?.packets, 90)
    XCTAssertEqual(probe.duration, 3.0, accuracy: 0.2)
    try assertDecodes(path)
  }

  func testVideoStartsAtTheFirstKeyFrame() throws {
    _ = try ExternalTool.require("ffprobe")
    let path = try ExternalTool.temporaryDirectory(for: self).appendingPathComponent("k.webm").path
    // Frame 0 (the encoder's first key frame) is lost; frames 1...14 are delta frames that
    // cannot be decoded; frame 15 is a forced key frame.
    let statistics = try record(
      to: path, seconds: 3, videoStart: 3_000_000_000, audioStart: 5, keyFrameAt: 15,
      skipLeadingFrames: 1)
    XCTAssertEqual(statistics.videoFramesDroppedBeforeKeyFrame, 14)
    XCTAssertEqual(statistics.videoFramesWritten, 75)
    let probe = try ProbeResult.probe(path)
    XCTAssertEqual(probe.streams.first?.packets, 75)
    XCTAssertEqual(probe.streams.last?.packets, 150)
    // Video is rebased to its first key frame: 2.5 s of video, 3 s of audio.
    XCTAssertEqual(probe.duration, 3.0, accuracy: 0.2)
    try assertDecodes(path)
  }

  func testInvalidConfigurationsAreRejected() {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("never.webm").path
    XCTAssertThrowsError(try WebMRecorder(path: path, video: nil, audio: nil)) {
      XCTAssertEqual($0 as? WebMRecorderError, .noTracks)
    }
    XCTAssertThrowsError(
      try WebMRecorder(path: path, video: nil, audio: (sampleRate: 44_100, channels: 2))
    ) {
      XCTAssertEqual($0 as? WebMRecorderError, .unsupportedAudio(sampleRate: 44_100, channels: 2))
    }
    XCTAssertThrowsError(try WebMRecorder(path: path, video: (width: 0, height: 240), audio: nil)) {
      XCTAssertEqual($0 as? WebMRecorderError, .invalidVideoSize(width: 0, height: 240))
    }
  }

  func testUnwritablePathGivesFFmpegsMessage() {
    XCTAssertThrowsError(
      try WebMRecorder(
        path: "/nonexistent-dir-\(UUID().uuidString)/a.webm", video: (width: 320, height: 240),
        audio: nil)
    ) { error in
      guard case .ffmpeg(let ffmpegError) = error as? WebMRecorderError else {
        return XCTFail("expected an FFmpeg error, got \(error)")
      }
      XCTAssertTrue(ffmpegError.operation.hasPrefix("avio_open"))
      XCTAssertEqual(ffmpegError.message, "No such file or directory")
    }
  }

  func testWritingAfterFinishOrToAMissingTrackThrows() throws {
    let path = try ExternalTool.temporaryDirectory(for: self).appendingPathComponent("f.webm").path
    let recorder = try WebMRecorder(
      path: path, video: nil, audio: (sampleRate: 48_000, channels: 1))
    XCTAssertThrowsError(try recorder.writeVideo([0x10], isKeyFrame: true, rtpTimestamp: 0)) {
      XCTAssertEqual($0 as? WebMRecorderError, .trackNotRecorded("video"))
    }
    try recorder.finish()
    try recorder.finish()
    XCTAssertThrowsError(try recorder.writeAudio([0xF8, 0xFF, 0xFE], rtpTimestamp: 960)) {
      XCTAssertEqual($0 as? WebMRecorderError, .finished)
    }
  }
}

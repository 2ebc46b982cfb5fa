import Foundation
import XCTest

@testable import WCSDevices
@testable import WCSMedia

final class MediaFileReaderTests: XCTestCase {
  /// A real phone recording from Debian's forensics-samples-files package.
  private static let movie = "/usr/share/forensics-samples/original-files/movie2/movie-hello.mp4"

  private func requireMovie() throws -> String {
    guard FileManager.default.fileExists(atPath: Self.movie) else {
      throw XCTSkip(
        "\(Self.movie) is missing: apt-get install forensics-samples-files "
          + "(scripts/install-deps.sh test)")
    }
    return Self.movie
  }

  /// A 2 s WebM made by the ffmpeg CLI: 320x240@25 test pattern (VP8) and a 1 kHz sine (Opus).
  private func makeTestWebM() throws -> String {
    let ffmpeg = try ExternalTool.require("ffmpeg")
    let path = try ExternalTool.temporaryDirectory(for: self).appendingPathComponent("t.webm").path
    let result = try ExternalTool.run(
      ffmpeg,
      [
        "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-f", "lavfi", "-i",
        "sine=frequency=1000:sample_rate=48000", "-t", "2", "-c:v", "libvpx", "-b:v", "500k",
        "-c:a", "libopus", "-ac", "1", path,
      ])
    XCTAssertEqual(result.status, 0, "ffmpeg could not make the test file")
    return path
  }

  private func readAll(_ reader: MediaFileReader) throws -> (
    video: [DecodedVideoFrame], audio: [DecodedAudioChunk]
  ) {
    var video: [DecodedVideoFrame] = []
    var audio: [DecodedAudioChunk] = []
    var lastPTS = -Double.infinity
    while let sample = try reader.nextSample() {
      // nextSample() merges the streams in presentation order (within one audio chunk).
      XCTAssertGreaterThanOrEqual(sample.ptsSeconds, lastPTS - 0.021)
      lastPTS = max(lastPTS, sample.ptsSeconds)
      switch sample {
      case .video(let frame): video.append(frame)
      case .audio(let chunk): audio.append(chunk)
      }
    }
    return (video, audio)
  }

  func testRealRecordingStreamInfo() throws {
    let reader = try MediaFileReader(path: try requireMovie())
    XCTAssertEqual(reader.info.video?.codecName, "h264")
    XCTAssertEqual(reader.info.video?.width, 1280)
    XCTAssertEqual(reader.info.video?.height, 720)
    XCTAssertEqual(reader.info.video?.framesPerSecond ?? 0, 30, accuracy: 0.5)
    XCTAssertEqual(reader.info.audio?.codecName, "aac")
    XCTAssertEqual(reader.info.audio?.sampleRate, 48_000)
    XCTAssertEqual(reader.info.audio?.channels, 2)
    XCTAssertEqual(try XCTUnwrap(reader.duration), 8.32, accuracy: 0.1)
  }

  /// Neither stream asked for: the file is only probed, for its length (wcs-demo's default
  /// --duration); asking for a kind the file lacks is `.noMediaStreams`.
  func testProbeWithoutDecodersGivesTheDuration() throws {
    let path = try makeTestWebM()
    let probe = try MediaFileReader(path: path, decodeVideo: false, decodeAudio: false)
    XCTAssertEqual(try XCTUnwrap(probe.duration), 2, accuracy: 0.1)
    XCTAssertNil(probe.info.video)
    XCTAssertNil(probe.info.audio)
    XCTAssertNil(try probe.nextSample())

    let ffmpeg = try ExternalTool.require("ffmpeg")
    let silent = try ExternalTool.temporaryDirectory(for: self)
      .appendingPathComponent("video-only.webm").path
    let result = try ExternalTool.run(
      ffmpeg,
      [
        "-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-t", "1",
        "-c:v", "libvpx", silent,
      ])
    XCTAssertEqual(result.status, 0, "ffmpeg could not make the test file")
    XCTAssertThrowsError(try MediaFileReader(path: silent, decodeVideo: false)) { error in
      XCTAssertEqual(error as? MediaFileReaderError, .noMediaStreams)
    }
    XCTAssertNotNil(try MediaFileReader(path: silent).info.video)
  }

  func testRealRecordingDecodesEveryFrameAtTheRequestedSize() throws {
    let reader = try MediaFileReader(
      path: try requireMovie(), videoSize: (width: 640, height: 360), audioChannels: 2)
    let (video, audio) = try readAll(reader)
    // `ffprobe -count_frames` reads 249 video frames (8.3 s at 30.12 fps).
    XCTAssertEqual(video.count, 249)
    XCTAssertEqual(reader.corruptPacketsSkipped, 0)
    for (previous, next) in zip(video, video.dropFirst()) {
      XCTAssertGreaterThan(next.ptsSeconds, previous.ptsSeconds)
    }
    let first = try XCTUnwrap(video.first)
    XCTAssertEqual(first.width, 640)
    XCTAssertEqual(first.height, 360)
    XCTAssertEqual(first.y.count, 640 * 360)
    XCTAssertEqual(first.u.count, 320 * 180)
    XCTAssertEqual(first.v.count, 320 * 180)
    XCTAssertEqual(first.yStride, 640)
    XCTAssertEqual(first.uStride, 320)
    XCTAssertEqual(first.ptsSeconds, 0, accuracy: 0.05)
    XCTAssertEqual(try XCTUnwrap(video.last).ptsSeconds, 8.27, accuracy: 0.1)
    // A real picture, not a blank one.
    XCTAssertGreaterThan(Set(first.y).count, 50)

    XCTAssertTrue(audio.allSatisfy { $0.samples.count == 960 * 2 && $0.channels == 2 })
    XCTAssertEqual(Double(audio.count) * 0.02, 8.32, accuracy: 0.1)
    for (previous, next) in zip(audio, audio.dropFirst()) {
      XCTAssertEqual(next.ptsSeconds - previous.ptsSeconds, 0.02, accuracy: 1e-9)
    }
    XCTAssertTrue(audio.contains { chunk in chunk.samples.contains { abs(Int($0)) > 1000 } })
  }

  func testGeneratedFileGivesFiftyFramesAndA1kHzTone() throws {
    let path = try makeTestWebM()
    let reader = try MediaFileReader(path: path, audioChannels: 1)
    XCTAssertEqual(reader.info.video?.codecName, "vp8")
    XCTAssertEqual(reader.info.audio?.codecName, "opus")
    let (video, audio) = try readAll(reader)
    XCTAssertEqual(video.count, 50)
    XCTAssertEqual(video.first?.width, 320)
    XCTAssertEqual(video.first?.height, 240)
    // Frame 49 of 25 fps; the ffmpeg CLI's muxer shifts video by a few ms of Opus codec delay.
    XCTAssertEqual(try XCTUnwrap(video.first).ptsSeconds, 0, accuracy: 0.01)
    XCTAssertEqual(try XCTUnwrap(video.last).ptsSeconds, 1.96, accuracy: 0.01)
    XCTAssertEqual(try XCTUnwrap(audio.first).ptsSeconds, 0, accuracy: 0.001)
    XCTAssertTrue(audio.allSatisfy { $0.samples.count == 960 && $0.channels == 1 })
    XCTAssertEqual(Double(audio.count) * 0.02, 2.0, accuracy: 0.1)

    // 0.5 s from the middle of the tone; the strongest of 100...4000 Hz must be 1 kHz.
    let pcm = audio.dropFirst(25).prefix(25).flatMap(\.samples).map(Double.init)
    let candidates = stride(from: 100.0, through: 4000, by: 100)
    let strongest = try XCTUnwrap(ToneAnalysis.strongest(of: candidates, in: pcm))
    XCTAssertEqual(strongest, 1000)

    // Same size as the source: the picture is the decoder's own, bit for bit.
    let ffmpeg = try ExternalTool.require("ffmpeg")
    let reference = try ExternalTool.run(
      ffmpeg,
      ["-v", "error", "-i", path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
    let first = try XCTUnwrap(video.first)
    XCTAssertEqual(Array(reference.output), first.y + first.u + first.v)
  }

  func testOtherContainersAndCodecsOfTheSameRecording() throws {
    let movie = try requireMovie()
    // The Ogg file's Vorbis timestamps are broken (ffprobe shows its first audio frame at
    // -4.13 s, advancing 0.34 s per 1024 samples), so only its video is read.
    let expected: [(suffix: String, video: String, width: Int, audio: String, withAudio: Bool)] = [
      ("avi", "h264", 1024, "aac", true), ("mpeg", "mpeg2video", 640, "mp2", true),
      ("ogg", "theora", 720, "vorbis", false),
    ]
    for file in expected {
      let path = movie.replacingOccurrences(of: ".mp4", with: ".\(file.suffix)")
      let info = try MediaFileReader(path: path).info
      XCTAssertEqual(info.video?.codecName, file.video, file.suffix)
      XCTAssertEqual(info.video?.width, file.width, file.suffix)
      XCTAssertEqual(info.audio?.codecName, file.audio, file.suffix)
      XCTAssertEqual(try XCTUnwrap(info.durationSeconds), 8.3, accuracy: 0.1, file.suffix)

      let reader = try MediaFileReader(
        path: path, videoSize: (width: 320, height: 180), decodeAudio: file.withAudio)
      var videoTimes: [Double] = []
      var audioTimes: [Double] = []
      for _ in 0..<40 {
        switch try reader.nextSample() {
        case .video(let frame)?:
          XCTAssertEqual(frame.y.count, 320 * 180, file.suffix)
          videoTimes.append(frame.ptsSeconds)
        case .audio(let chunk)?:
          XCTAssertEqual(chunk.samples.count, 1920, file.suffix)
          audioTimes.append(chunk.ptsSeconds)
        case nil: XCTFail("\(file.suffix) ended early")
        }
      }
      // 40 samples in time order: over T seconds, fps * T frames and 50 * T audio chunks.
      let fps = try XCTUnwrap(info.video?.framesPerSecond)
      let expectedFrames = file.withAudio ? 40 * fps / (fps + 50) : 40
      XCTAssertEqual(Double(videoTimes.count), expectedFrames, accuracy: 1.5, file.suffix)
      XCTAssertEqual(videoTimes.first ?? -1, 0, accuracy: 0.05, file.suffix)
      XCTAssertEqual(audioTimes.first ?? 0, 0, accuracy: 0.05, file.suffix)
    }
  }

  func testRewindStartsOverWithTheSameSamples() throws {
    let reader = try MediaFileReader(path: try makeTestWebM())
    let firstPass = try readAll(reader)
    XCTAssertNil(try reader.nextSample())
    try reader.rewind()
    let secondPass = try readAll(reader)
    XCTAssertEqual(secondPass.video.count, firstPass.video.count)
    XCTAssertEqual(secondPass.audio.count, firstPass.audio.count)
    XCTAssertEqual(secondPass.video.first, firstPass.video.first)
    XCTAssertEqual(secondPass.audio.first?.ptsSeconds, firstPass.audio.first?.ptsSeconds)
  }

  func testGarbageAndMissingFilesGiveTypedErrors() throws {
    let directory = try ExternalTool.temporaryDirectory(for: self)
    let garbage = directory.appendingPathComponent("garbage.mp4")
    // Fixed bytes (a 64-bit LCG's top bytes), not fresh random ones: now and then 4 KiB of
    // random bytes probe as some format FFmpeg opens (the test then saw "no stream of the kind
    // asked for" instead of openFailed). These fail to open (mov: "moov atom not found").
    var state: UInt64 = 12345
    let bytes = (0..<4096).map { _ -> UInt8 in
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return UInt8(truncatingIfNeeded: state >> 56)
    }
    try Data(bytes).write(to: garbage)
    XCTAssertThrowsError(try MediaFileReader(path: garbage.path)) { error in
      guard case .openFailed(let path, let ffmpegError) = error as? MediaFileReaderError else {
        return XCTFail("expected openFailed, got \(error)")
      }
      XCTAssertEqual(path, garbage.path)
      XCTAssertLessThan(ffmpegError.code, 0)
      XCTAssertFalse(ffmpegError.message.isEmpty)
    }
    let missing = directory.appendingPathComponent("missing.webm").path
    XCTAssertThrowsError(try MediaFileReader(path: missing)) { error in
      guard case .openFailed(_, let ffmpegError) = error as? MediaFileReaderError else {
        return XCTFail("expected openFailed, got \(error)")
      }
      XCTAssertEqual(ffmpegError.message, "No such file or directory")
    }
    XCTAssertThrowsError(try MediaFileReader(path: missing, audioChannels: 6)) {
      XCTAssertEqual($0 as? MediaFileReaderError, .invalidOutputFormat("6 audio channels (1 or 2)"))
    }
  }

  func testTruncatedFileEndsEarlyWithoutCrashing() throws {
    let path = try makeTestWebM()
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    let truncated = path + ".half.webm"
    try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: truncated))
    let reader = try MediaFileReader(path: truncated)
    var frames = 0
    do {
      while let sample = try reader.nextSample() {
        if case .video = sample { frames += 1 }
      }
    } catch {
      // A damaged container may also end with a read error; it must be FFmpeg's, typed.
      guard case .ffmpeg(let ffmpegError) = error else { return XCTFail("unexpected \(error)") }
      XCTAssertLessThan(ffmpegError.code, 0)
    }
    XCTAssertGreaterThan(frames, 5)
    XCTAssertLessThan(frames, 50)
  }
}

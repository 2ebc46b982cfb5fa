import Foundation
import Synchronization
import TestSupport
import WCSLocalServer
import WCSMedia
import XCTest

@testable import WCSApi2

/// The audio of pulled sources (issue 28): the local server decodes the source's AAC, serves it
/// as Opus and keeps it in step with the H.264 it passes through. Each source carries the virtual
/// camera's numbered pictures and a 440 Hz tone that is on for 1.5 s of every 2 s, starting on
/// the even seconds of the source's clock: where the SDK plays a tone's onset and which picture
/// it shows then say how far audio and video are apart.
extension PullEndToEndTests {
  /// The tone as an `aevalsrc` expression: on for [0, 1.5) of every 2 s.
  static let tonePattern =
    "aevalsrc=exprs='if(lt(mod(t,2),1.5),0.5*sin(2*PI*440*t),0)':s=48000"

  func testRTMPSourcesAACIsPlayedAsOpusOfItsToneInStepWithItsPictures() async throws {
    try await assertRTMPSourceIsPlayedInStep(audio: ["-c:a", "aac", "-b:a", "96k"], codec: "aac")
  }

  func testRTMPSourcesMP3IsPlayedAsOpusOfItsToneInStepWithItsPictures() async throws {
    try await assertRTMPSourceIsPlayedInStep(
      audio: ["-c:a", "libmp3lame", "-ar", "44100", "-b:a", "128k"], codec: "mp3")
  }

  /// An RTMP source pushed to nginx by `ffmpeg` with the `audio` encoder options, played in step.
  private func assertRTMPSourceIsPlayedInStep(audio: [String], codec: String) async throws {
    try XCTSkipUnless(
      FileManager.default.fileExists(atPath: Self.rtmpModule), "libnginx-mod-rtmp is not installed")
    try XCTSkipUnless(FileManager.default.fileExists(atPath: "/usr/sbin/nginx"), "no nginx")
    let port = try startNginxRTMP()
    let url = "rtmp://127.0.0.1:\(port)/live/tone"
    let frames = try writeFrames()
    try startFFmpeg(
      [
        "-re", "-stream_loop", "-1", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s",
        "\(Self.width)x\(Self.height)", "-r", "\(Self.frameRate)", "-i", frames.path, "-re", "-f",
        "lavfi", "-i", Self.tonePattern, "-c:v", "libx264", "-profile:v", "baseline", "-preset",
        "ultrafast", "-tune", "zerolatency", "-g", "\(Self.frameRate)", "-b:v", "1M",
      ] + audio + ["-f", "flv", url])
    try await waitFor("push reached nginx", timeout: 10) { self.ffprobeFinds(url) }
    try await assertPlaysToneInStepWithPictures(url, codec: codec)
  }

  func testRTSPSourcesAACIsPlayedAsOpusOfItsToneInStepWithItsPictures() async throws {
    try XCTSkipUnless(Self.canImportGStreamerRTSP, "GStreamer's RTSP server is not installed")
    // 20 s of source (the pictures twice), H.264 and AAC in MP4, served as they are.
    let file = directory.appendingPathComponent("tone.mp4")
    try startFFmpeg(
      [
        "-stream_loop", "1", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s",
        "\(Self.width)x\(Self.height)", "-r", "\(Self.frameRate)", "-i", try writeFrames().path,
        "-f", "lavfi", "-i", Self.tonePattern, "-t", "20", "-c:v", "libx264", "-profile:v",
        "baseline", "-preset", "ultrafast", "-g", "\(Self.frameRate)", "-b:v", "1M", "-c:a", "aac",
        "-ac", "2", "-ar", "44100", "-b:a", "96k", file.path,
      ]
    ).waitUntilExit()
    let port = try startInteropServer("rtsp_server.py", [file.path])
    try await assertPlaysToneInStepWithPictures("rtsp://127.0.0.1:\(port)/test", codec: "aac")
  }

  // MARK: - Helpers

  /// Plays `url`, whose audio is `codec`, and checks the played sound is the tone and its onsets
  /// come with the pictures of the same source time (within 100 ms), after the SDK's lip sync
  /// has had its reports.
  private func assertPlaysToneInStepWithPictures(_ url: String, codec: String) async throws {
    let server = try startServer()
    defer { server.stop() }
    let session = try await FPWCSApi2.connectedSession(to: server)
    defer { session.disconnect() }
    let played = PlayedMedia()
    let options = FPWCSApi2StreamOptions()
    options.name = url
    options.display = VideoFrameCallbackRenderer { frame in
      let at = ContinuousClock.now
      guard let image = I420Image(frame), let number = VirtualCamera.decodeFrameNumber(from: image)
      else { return }
      played.pictures.withLock { $0.append((Int(number), at)) }
    }
    let player = try session.createStream(options)
    defer { try? player.stop() }
    try? await player.play()
    try await waitFor("media connection") { session.connection(of: player) != nil }
    let connection = try XCTUnwrap(session.connection(of: player) as? NativeMediaConnection)
    connection.setPlayoutSink(
      PlayoutAudioCallbackSink { frame in
        let at = ContinuousClock.now
        let mono = stride(from: 0, to: frame.samples.count, by: max(1, frame.channels)).map {
          frame.samples[$0]
        }
        played.blocks.withLock { $0.append((mono, at)) }
      })
    // Ten seconds played: the sync acts on the second sender reports; the last six count.
    try await waitFor("ten seconds of audio", timeout: 30) {
      played.blocks.withLock { $0.count } >= 500
    }
    XCTAssertEqual(
      logCount("audio \(codec)"), 1, "the pull opened the audio: \(log.lines.withLock { $0 })")
    let blocks = Array(played.blocks.withLock { $0 }.suffix(300))
    let pictures = played.pictures.withLock { $0 }
    guard let origin = pictures.first?.at else { return XCTFail("no picture played") }
    func seconds(_ instant: ContinuousClock.Instant) -> Double {
      let (whole, attoseconds) = (instant - origin).components
      return Double(whole) + Double(attoseconds) / 1e18
    }
    /// `value` into [-1, 1) modulo the tone's 2 s period.
    func wrapped(_ value: Double) -> Double { value - 2 * (value / 2).rounded() }

    // Source time 0 of the pattern in our time (modulo 2 s), from the pictures of the last six
    // seconds: a picture numbered n shows source time n / 15 (the 10 s pictures loop).
    let recent = pictures.filter { seconds($0.at) >= seconds(blocks[0].at) }
    XCTAssertGreaterThan(recent.count, 60, "pictures during the measured seconds")
    let reference =
      seconds(try XCTUnwrap(recent.first).at)
      - Double(try XCTUnwrap(recent.first).number) / Double(Self.frameRate)
    let videoOrigins = recent.map {
      wrapped(seconds($0.at) - Double($0.number) / Double(Self.frameRate) - reference)
    }.sorted()
    let videoOrigin = videoOrigins[videoOrigins.count / 2]

    // The tone's onsets: the first loud block after at least five silent ones; its play time
    // from its place among the blocks around it (handed over at 20 ms a block).
    let energies = blocks.map { block in
      block.samples.reduce(0.0) { $0 + Double($1) * Double($1) }
        / Double(max(1, block.samples.count))
    }
    var offsets: [Double] = []
    for index in 5..<blocks.count where energies[index] > 1e6 {
      guard energies[(index - 5)..<index].allSatisfy({ $0 < 1e4 }) else { continue }
      let window = max(0, index - 25)..<min(blocks.count, index + 25)
      let starts = window.map { seconds(blocks[$0].at) - Double($0 - index) * 0.02 }.sorted()
      let firstLoud = blocks[index].samples.firstIndex { abs(Int($0)) > 1000 } ?? 0
      let onset = starts[starts.count / 2] + Double(firstLoud) / 48_000
      offsets.append(wrapped(wrapped(onset - reference) - videoOrigin))
      let tone = window.clamped(to: index + 5..<min(blocks.count, index + 30))
        .flatMap { blocks[$0].samples }
      if tone.count >= 9600 {
        XCTAssertEqual(Tone.dominantFrequency(tone, rate: 48_000), 440, accuracy: 10)
        XCTAssertGreaterThan(Tone.share(of: 440, in: tone, rate: 48_000), 0.5)
      }
    }
    let summary = offsets.map { String(format: "%+.0f ms", $0 * 1000) }.joined(separator: ", ")
    print("\(url): audio onsets after their pictures: \(summary)")
    // Without onsets, say whether the sound was silence (no audio reached the player), one
    // long tone, or noise, and what the server's pull logged.
    let loud = energies.filter { $0 > 1e6 }.count
    let silent = energies.filter { $0 < 1e4 }.count
    let pullLog = log.lines.withLock { $0.filter { $0.contains("pull") || $0.contains("audio") } }
    XCTAssertGreaterThanOrEqual(
      offsets.count, 2,
      "tone onsets in six seconds; of \(blocks.count) blocks \(loud) loud, \(silent) silent;"
        + " server: \(pullLog.suffix(12))")
    for offset in offsets { XCTAssertLessThan(abs(offset), 0.1, summary) }
  }

  /// Runs `ffmpeg` with `arguments` (quiet, no input), killed at the test's end.
  @discardableResult
  private func startFFmpeg(_ arguments: [String]) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
    process.arguments = ["-nostdin", "-loglevel", "error", "-y"] + arguments
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    processes.append(process)
    return process
  }
}

/// What one player rendered and played, with when.
final class PlayedMedia: Sendable {
  let pictures = Mutex<[(number: Int, at: ContinuousClock.Instant)]>([])
  let blocks = Mutex<[(samples: [Int16], at: ContinuousClock.Instant)]>([])
}

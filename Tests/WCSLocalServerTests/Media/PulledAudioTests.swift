import CFFmpeg
import Foundation
import Synchronization
import TestSupport
import WCSCodecs
import WCSProtocols
import XCTest

@testable import WCSLocalServer

/// A pulled source's audio (issue 28): decoded with libavcodec, resampled to 48 kHz and served
/// as Opus with the source's timing. The sources are files `ffmpeg` writes (H.264 and a 440 Hz
/// tone in each audio codec), read by the same `PullSourceReader` an `rtsp://` pull uses.
final class PulledAudioTests: XCTestCase {
  private var directory: URL!

  override func setUpWithError() throws {
    try XCTSkipUnless(FileManager.default.fileExists(atPath: "/usr/bin/ffmpeg"), "no ffmpeg")
    directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-pulled-audio-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  }

  override func tearDown() {
    if let directory { try? FileManager.default.removeItem(at: directory) }
  }

  /// What one reader reported.
  final class Events: Sendable {
    let all = Mutex<[PullSourceEvent]>([])
    let done = DispatchSemaphore(value: 0)
  }

  func testAACMP3AndG711SourcesBecomeOpusOfTheirToneAlignedWithTheVideo() throws {
    let cases: [(file: String, codec: [String], name: String, rate: Int, channels: Int)] = [
      ("aac.mp4", ["-c:a", "aac", "-ar", "44100", "-ac", "2"], "aac", 44_100, 2),
      ("mp3.mkv", ["-c:a", "libmp3lame", "-ar", "32000", "-ac", "1"], "mp3", 32_000, 1),
      ("mulaw.mkv", ["-c:a", "pcm_mulaw", "-ar", "8000", "-ac", "1"], "pcm_mulaw", 8000, 1),
      ("opus.mkv", ["-c:a", "libopus", "-ar", "48000", "-ac", "2"], "opus", 48_000, 2),
    ]
    for source in cases {
      let path = try makeSource(source.file, audio: source.codec)
      let events = read(path)
      let opened = events.compactMap { event -> PulledAudioFormat?? in
        if case .opened(_, let audio) = event { return audio }
        return nil
      }
      XCTAssertEqual(
        opened,
        [
          PulledAudioFormat(
            codecName: source.name, sampleRate: source.rate, channels: source.channels,
            opusChannels: source.channels)
        ], source.file)
      let packets = try rtpPackets(events)
      let audio = packets.filter { $0.header.ssrc == Self.audioSSRC }
      let video = packets.filter { $0.header.ssrc == Self.videoSSRC }
      XCTAssertTrue(audio.allSatisfy { $0.header.payloadType == 111 }, source.file)
      // Three seconds of tone: 150 frames of 20 ms, less what the codec's priming takes.
      XCTAssertGreaterThanOrEqual(audio.count, 140, source.file)
      XCTAssertLessThanOrEqual(audio.count, 151, source.file)
      for (previous, next) in zip(audio, audio.dropFirst()) {
        XCTAssertEqual(next.header.sequenceNumber, previous.header.sequenceNumber &+ 1)
        XCTAssertEqual(next.header.timestamp, previous.header.timestamp &+ 960, source.file)
      }
      let decoder = try OpusDecoder(channels: source.channels)
      var samples: [Int16] = []
      for packet in audio { samples += try decoder.decode(packet.payload).samples }
      let left = stride(from: 0, to: samples.count, by: source.channels).map { samples[$0] }
      let tail = Array(left.suffix(48_000))
      XCTAssertEqual(Tone.dominantFrequency(tail, rate: 48_000), 440, accuracy: 10, source.file)
      XCTAssertGreaterThan(Tone.share(of: 440, in: tail, rate: 48_000), 0.5, source.file)

      // The clock of each `.clock` event puts both SSRCs at one media time, which is where
      // their first packets' pts (the streams' start times) put them, give or take the priming
      // a decoder drops before its first sample (Opus pre-skip: 6.5 ms).
      let clocks = events.compactMap { event -> [PulledRTPClock]? in
        if case .clock(let clocks) = event { return clocks }
        return nil
      }
      let clock = try XCTUnwrap(clocks.first, source.file)
      let videoClock = try XCTUnwrap(clock.first { $0.ssrc == Self.videoSSRC })
      let audioClock = try XCTUnwrap(clock.first { $0.ssrc == Self.audioSSRC })
      let firstVideo = try XCTUnwrap(video.first).header.timestamp
      let firstAudio = try XCTUnwrap(audio.first).header.timestamp
      let videoTime = Double(Int32(bitPattern: videoClock.timestamp &- firstVideo)) / 90_000
      let audioTime = Double(Int32(bitPattern: audioClock.timestamp &- firstAudio)) / 48_000
      let starts = try startTimes(path)
      XCTAssertEqual(videoTime - audioTime, starts[1] - starts[0], accuracy: 0.01, source.file)
    }
  }

  func testAVideoOnlySourceOpensWithoutAudio() throws {
    let path = try makeSource("video.mp4", audio: nil)
    let events = read(path)
    XCTAssertTrue(
      events.contains {
        if case .opened(_, nil) = $0 { return true }
        return false
      })
    XCTAssertTrue(try rtpPackets(events).allSatisfy { $0.header.ssrc == Self.videoSSRC })
  }

  func testAudioAtARateOutOfBoundsIsSkippedAndTheVideoStillServed() throws {
    let path = try makeSource(
      "fast.mkv", audio: ["-c:a", "pcm_s16le", "-ar", "384000"],
      toneRate: 384_000)
    let events = read(path)
    XCTAssertTrue(
      events.contains {
        if case .audioSkipped(.wrongFormat("audio at 384000 Hz")) = $0 { return true }
        return false
      })
    XCTAssertTrue(
      events.contains {
        if case .opened(_, nil) = $0 { return true }
        return false
      })
    let packets = try rtpPackets(events)
    XCTAssertGreaterThan(packets.count, 40, "three seconds of pictures")
    XCTAssertTrue(packets.allSatisfy { $0.header.ssrc == Self.videoSSRC })
  }

  func testDeclaredChannelsRatesAndCodecsOutOfBoundsAreRefused() throws {
    func open(_ change: (UnsafeMutablePointer<AVCodecParameters>) -> Void) -> PullError? {
      var parameters = avcodec_parameters_alloc()
      defer { avcodec_parameters_free(&parameters) }
      guard let parameters else { return nil }
      parameters.pointee.codec_type = AVMEDIA_TYPE_AUDIO
      parameters.pointee.codec_id = AV_CODEC_ID_AAC
      parameters.pointee.sample_rate = 44_100
      av_channel_layout_default(&parameters.pointee.ch_layout, 2)
      change(parameters)
      do {
        _ = try PulledAudio(parameters: parameters, timeBase: AVRational(num: 1, den: 1000))
        return nil
      } catch {
        return error
      }
    }
    XCTAssertNil(open { _ in })
    XCTAssertEqual(
      open { av_channel_layout_default(&$0.pointee.ch_layout, 64) },
      .wrongFormat("audio with 64 channels"))
    XCTAssertEqual(open { $0.pointee.sample_rate = 1_000_000 }, .wrongFormat("audio at 1000000 Hz"))
    XCTAssertEqual(open { $0.pointee.sample_rate = -8000 }, .wrongFormat("audio at -8000 Hz"))
    XCTAssertEqual(
      open { $0.pointee.codec_id = AV_CODEC_ID_NONE }, .wrongFormat("no decoder for none audio"))
    XCTAssertEqual(
      open { $0.pointee.extradata_size = Int32(PulledAudio.maxExtradataSize + 1) },
      .wrongFormat("audio extradata of \(PulledAudio.maxExtradataSize + 1) bytes"))
  }

  func testFramesFollowThePresentationTimesAndRestartAfterAJump() {
    var framer = PulledAudioFramer(channels: 1)
    let block = [Int16](repeating: 7, count: 1024)
    let first = framer.add(block, time: 1000)
    XCTAssertEqual(first.map(\.time), [1000])
    XCTAssertEqual(first.map(\.frame.samples.count), [960])
    XCTAssertEqual(framer.add(block, time: 2024).map(\.time), [1960], "64 samples were left")
    // Resampler delay and rounding: a few samples off still continue the timeline.
    XCTAssertEqual(framer.add(block, time: 3040).map(\.time), [2920])
    XCTAssertEqual(framer.discontinuities, 0)
    // Lost packets: half a second later; the partial frame goes, timing restarts there.
    XCTAssertEqual(framer.add(block, time: 27_000).map(\.time), [27_000])
    XCTAssertEqual(framer.discontinuities, 1)
    XCTAssertEqual(framer.expectedTime, 27_000 + 1024)
    // No pts: the block continues where the last ended.
    XCTAssertEqual(framer.add(block, time: nil).map(\.time), [27_960])
    // A block claiming more than a second of samples is refused, not buffered.
    XCTAssertTrue(
      framer.add([Int16](repeating: 0, count: PulledAudioFramer.maxBlockSamples + 1), time: nil)
        .isEmpty)
    XCTAssertEqual(framer.expectedTime, 27_000 + 2048)
  }

  func testTheTimelineIsAnchoredAgainOnlyWhenTheSourceJumps() {
    var timeline = PulledTimeline()
    XCTAssertTrue(timeline.observe(5_000_000, at: 100))
    XCTAssertFalse(timeline.observe(5_400_000, at: 300_100), "100 ms early is jitter")
    XCTAssertFalse(timeline.observe(5_500_000, at: 1_400_100), "900 ms late too")
    XCTAssertTrue(timeline.observe(0, at: 1_500_100), "the source restarted at 0")
    XCTAssertEqual(timeline.anchor?.media, 0)
    XCTAssertTrue(timeline.observe(3_000_000, at: 1_600_100), "a seek forward")
  }

  func testSenderReportTimestampsAdvanceFromTheAnchorAtEachClockRate() {
    let anchor = MediaInstant(nanoseconds: 1_000_000_000)
    let clock = RelaySourceClock(
      anchor: anchor,
      clocks: [
        1: PulledRTPClock(ssrc: 1, timestamp: 4_294_967_000, clockRate: 90_000),
        2: PulledRTPClock(ssrc: 2, timestamp: 100, clockRate: 48_000),
      ])
    let later = MediaInstant(nanoseconds: 1_500_000_000)
    XCTAssertEqual(clock.timestamp(1, at: later), 4_294_967_000 &+ 45_000)
    XCTAssertEqual(clock.timestamp(2, at: later), 24_100)
    XCTAssertNil(clock.timestamp(3, at: later))
  }

  // MARK: - Helpers

  static let videoSSRC: UInt32 = 0x1111
  static let audioSSRC: UInt32 = 0x2222

  /// Three seconds of test pattern (H.264) and, unless `audio` is nil, a 440 Hz tone made at
  /// `toneRate` and encoded with the `audio` options.
  private func makeSource(_ name: String, audio: [String]?, toneRate: Int = 48_000) throws
    -> String
  {
    let path = directory.appendingPathComponent(name).path
    var arguments = [
      "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=15",
    ]
    if audio != nil {
      arguments += ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=\(toneRate)"]
    }
    arguments += [
      "-t", "3", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-profile:v", "baseline", "-preset",
      "ultrafast", "-g", "15",
    ]
    arguments += audio ?? []
    arguments.append(path)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
    process.arguments = arguments
    try process.run()
    process.waitUntilExit()
    XCTAssertEqual(process.terminationStatus, 0, "ffmpeg \(arguments)")
    return path
  }

  /// The start times (s) of the file's video and audio streams, as `ffprobe` reads them.
  private func startTimes(_ path: String) throws -> [Double] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
    process.arguments = [
      "-v", "error", "-show_entries", "stream=start_time", "-of", "csv=p=0", path,
    ]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    let times = text.split(whereSeparator: \.isNewline).compactMap { Double($0) }
    XCTAssertEqual(times.count, 2, text)
    return times.count == 2 ? times : [0, 0]
  }

  /// Every event of a reader of `path` until it ends.
  private func read(_ path: String) -> [PullSourceEvent] {
    let events = Events()
    let reader = PullSourceReader(
      url: path, limits: PullLimits(), payloadType: 102, ssrc: Self.videoSSRC,
      audioPayloadType: 111, audioSSRC: Self.audioSSRC)
    reader.start { event in
      events.all.withLock { $0.append(event) }
      if case .failed = event { events.done.signal() }
    }
    XCTAssertEqual(events.done.wait(timeout: .now() + 20), .success, "the file ends")
    reader.stop()
    return events.all.withLock { $0 }
  }

  private func rtpPackets(_ events: [PullSourceEvent]) throws -> [RTPPacket] {
    var packets: [RTPPacket] = []
    for case .packets(let list) in events {
      for bytes in list { packets.append(try bytes.withUnsafeBytes { try RTPPacket.parse($0) }) }
    }
    return packets
  }
}

import Foundation
import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSMedia
@testable import WCSRecording

final class MP4RecorderTests: XCTestCase {
  /// Feeds `seconds` of 320x240@30 H.264 of the virtual camera and 20 ms Opus packets of a
  /// 440 Hz tone, interleaved by time as they would arrive. The parameter sets come from the
  /// first IDR, as the relay takes them.
  private func record(
    to path: String, seconds: Int, videoStart: UInt32, audioStart: UInt32
  ) throws -> MP4Recorder.Statistics {
    let camera = VirtualCamera(width: 320, height: 240)
    let encoder = try H264Encoder(configuration: .init(width: 320, height: 240, bitrateKbps: 600))
    let opus = try TestOpusEncoder(channels: 2, frequency: 440)
    var recorder: MP4Recorder?
    let videoFrames = seconds * 30
    let audioPackets = seconds * 50
    var video = 0
    var audio = 0
    var heldAudio: [(packet: [UInt8], timestamp: UInt32)] = []
    while video < videoFrames || audio < audioPackets {
      if video < videoFrames && (audio >= audioPackets || video * 100 <= audio * 60) {
        for frame in try encoder.encode(
          camera.frame(video), timestamp: videoStart &+ UInt32(video * 3000))
        {
          let units = H264AnnexB.nalUnits(frame.data)
          if recorder == nil {
            let sps = units.filter { $0.first.map { $0 & 0x1F } == 7 }.map(Array.init)
            let pps = units.filter { $0.first.map { $0 & 0x1F } == 8 }.map(Array.init)
            let parsed = try H264SequenceParameterSet(nalUnit: try XCTUnwrap(sps.first))
            let opened = try MP4Recorder(
              path: path,
              video: .init(
                width: parsed.width, height: parsed.height, sequenceParameterSets: sps,
                pictureParameterSets: pps),
              audio: (sampleRate: 48_000, channels: 2))
            for held in heldAudio {
              try opened.writeAudio(held.packet, rtpTimestamp: held.timestamp)
            }
            recorder = opened
          }
          try recorder?.writeVideo(
            nalUnits: units, isKeyFrame: frame.isKeyFrame, rtpTimestamp: frame.timestamp)
        }
        video += 1
      } else {
        let packet = try opus.encodeNext()
        let timestamp = audioStart &+ UInt32(audio * 960)
        if let recorder {
          try recorder.writeAudio(packet, rtpTimestamp: timestamp)
        } else {
          heldAudio.append((packet, timestamp))
        }
        audio += 1
      }
    }
    let finished = try XCTUnwrap(recorder)
    try finished.finish()
    return finished.statistics
  }

  func testThreeSecondsOfH264AndOpusGiveAnMP4ThatFFprobeReads() throws {
    let path = try ExternalTool.temporaryDirectory(for: self).appendingPathComponent("a.mp4").path
    let statistics = try record(
      to: path, seconds: 3, videoStart: UInt32.max - 45_000, audioStart: 77_000)
    XCTAssertEqual(statistics.videoFramesWritten, 90)
    XCTAssertEqual(statistics.audioPacketsWritten, 150)
    let probe = try ProbeResult.probe(path)
    XCTAssertEqual(probe.streams.map(\.codecName), ["h264", "opus"])
    XCTAssertEqual(probe.streams.first?.width, 320)
    XCTAssertEqual(probe.streams.first?.height, 240)
    XCTAssertEqual(probe.streams.first?.packets, 90)
    XCTAssertEqual(probe.streams.last?.packets, 150)
    XCTAssertEqual(probe.duration, 3.0, accuracy: 0.3)
    let ffmpeg = try ExternalTool.require("ffmpeg")
    let decoded = try ExternalTool.run(ffmpeg, ["-v", "error", "-i", path, "-f", "null", "-"])
    XCTAssertEqual(decoded.status, 0)
    XCTAssertEqual(String(decoding: decoded.output, as: UTF8.self), "")
  }

  func testRecordingReadsBackWithTheCameraFramesInOrderAndTheTone() throws {
    let path = try ExternalTool.temporaryDirectory(for: self).appendingPathComponent("r.mp4").path
    _ = try record(to: path, seconds: 3, videoStart: 123_456, audioStart: 654_321)
    let reader = try MediaFileReader(path: path, audioChannels: 2)
    XCTAssertEqual(reader.info.video?.codecName, "h264")
    XCTAssertEqual(reader.info.audio?.codecName, "opus")
    var video: [DecodedVideoFrame] = []
    var audio: [Int16] = []
    while let sample = try reader.nextSample() {
      switch sample {
      case .video(let frame): video.append(frame)
      case .audio(let chunk): audio += chunk.samples
      }
    }
    XCTAssertEqual(video.count, 90)
    let camera = VirtualCamera(width: 320, height: 240)
    for (index, frame) in video.enumerated() {
      XCTAssertEqual(frame.ptsSeconds, Double(index) / 30, accuracy: 0.001)
      let image = try XCTUnwrap(
        I420Image(
          width: frame.width, height: frame.height, y: frame.y, strideY: frame.yStride,
          u: frame.u, strideU: frame.uStride, v: frame.v, strideV: frame.vStride))
      XCTAssertEqual(VirtualCamera.decodeFrameNumber(from: image), UInt32(index))
      if index % 30 == 0 {
        let psnr = try XCTUnwrap(image.psnr(to: camera.frame(index)))
        XCTAssertGreaterThan(psnr, 30, "frame \(index)")
      }
    }
    let left = stride(from: 48_000 * 2, to: 48_000 * 4, by: 2).map { Double(audio[$0]) }
    XCTAssertEqual(
      ToneAnalysis.strongest(of: stride(from: 110.0, through: 1980, by: 110), in: left), 440)
  }

  func testAVCConfigurationCarriesProfileLevelAndTheParameterSets() throws {
    let sps: [UInt8] = [0x67, 0x42, 0xC0, 0x1F, 0xAB, 0xCD]
    let pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]
    let record = try XCTUnwrap(
      AVCDecoderConfiguration.record(sequenceParameterSets: [sps], pictureParameterSets: [pps]))
    XCTAssertEqual(
      record, [1, 0x42, 0xC0, 0x1F, 0xFF, 0xE1, 0, 6] + sps + [1, 0, 4] + pps)
    XCTAssertNil(
      AVCDecoderConfiguration.record(sequenceParameterSets: [sps], pictureParameterSets: []))
    XCTAssertNil(
      AVCDecoderConfiguration.record(sequenceParameterSets: [pps], pictureParameterSets: [pps]))
  }

  func testInvalidConfigurationsAreRejected() {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("never.mp4").path
    XCTAssertThrowsError(try MP4Recorder(path: path, video: nil, audio: nil)) {
      XCTAssertEqual($0 as? RecorderError, .noTracks)
    }
    XCTAssertThrowsError(
      try MP4Recorder(
        path: path,
        video: .init(
          width: 320, height: 240, sequenceParameterSets: [], pictureParameterSets: [[0x68, 1]]),
        audio: nil)
    ) {
      XCTAssertEqual($0 as? RecorderError, .invalidParameterSets)
    }
    XCTAssertThrowsError(
      try MP4Recorder(
        path: path,
        video: .init(
          width: 0, height: 240, sequenceParameterSets: [[0x67, 0x42, 0, 0x1F]],
          pictureParameterSets: [[0x68, 1]]),
        audio: nil)
    ) {
      XCTAssertEqual($0 as? RecorderError, .invalidVideoSize(width: 0, height: 240))
    }
    XCTAssertFalse(FileManager.default.fileExists(atPath: path))
  }
}

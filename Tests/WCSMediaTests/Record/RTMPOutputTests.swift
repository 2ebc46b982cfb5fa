import Foundation
import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSMedia
@testable import WCSRecording

/// `RTMPOutput` (FLV, H.264 as AVC, AAC) and `OpusToAACTranscoder`, written to a file: the same
/// muxer and packets as an `rtmp://` push, without a server.
final class RTMPOutputTests: XCTestCase {
  func testFLVOfH264AndTranscodedOpusReadsBackAsTheCameraFramesAndTheTone() throws {
    let path = try ExternalTool.temporaryDirectory(for: self).appendingPathComponent("p.flv").path
    let camera = VirtualCamera(width: 320, height: 240)
    let encoder = try H264Encoder(configuration: .init(width: 320, height: 240, bitrateKbps: 600))
    let opus = try TestOpusEncoder(channels: 2, frequency: 440)
    let transcoder = try OpusToAACTranscoder()
    XCTAssertEqual(transcoder.frameSize, 1024)
    // AAC LC (2), 48 kHz (index 3), 2 channels: ISO/IEC 14496-3 §1.6.2.1 (libavcodec follows
    // it with the "no SBR" sync extension).
    XCTAssertEqual(Array(transcoder.audioSpecificConfig.prefix(2)), [0x11, 0x90])
    let output = try RTMPOutput(url: path, interrupt: OutputInterrupt())
    var audio = 0
    for index in 0..<60 {
      for frame in try encoder.encode(camera.frame(index), timestamp: UInt32(index * 3000)) {
        let units = H264AnnexB.nalUnits(frame.data)
        if !output.isStarted {
          let sps = units.filter { $0.first.map { $0 & 0x1F } == 7 }.map(Array.init)
          let pps = units.filter { $0.first.map { $0 & 0x1F } == 8 }.map(Array.init)
          try output.start(
            video: .init(
              width: 320, height: 240, sequenceParameterSets: sps, pictureParameterSets: pps),
            audio: (transcoder.audioSpecificConfig, 48_000, 2, transcoder.frameSize))
        }
        XCTAssertTrue(
          try output.writeVideo(
            nalUnits: units, isKeyFrame: frame.isKeyFrame, ticks: Int64(index * 3000),
            durationTicks: 3000))
      }
      // 30 fps video, 50 Opus packets a second: the audio up to this picture's time.
      while audio * 3 < (index + 1) * 5 {
        for packet in try transcoder.add(try opus.encodeNext(), ticks: Int64(audio * 960)) {
          try output.writeAudio(packet)
        }
        audio += 1
      }
    }
    for packet in try transcoder.finish() { try output.writeAudio(packet) }
    output.close()
    XCTAssertEqual(transcoder.statistics.opusPacketsDecoded, 100)
    XCTAssertEqual(transcoder.statistics.silenceSamplesInserted, 1024 - 96_000 % 1024)

    let reader = try MediaFileReader(path: path, audioChannels: 1)
    XCTAssertEqual(reader.info.video?.codecName, "h264")
    XCTAssertEqual(reader.info.audio?.codecName, "aac")
    var numbers: [UInt32] = []
    var samples: [Int16] = []
    while let sample = try reader.nextSample() {
      switch sample {
      case .video(let frame):
        let image = try XCTUnwrap(
          I420Image(
            width: frame.width, height: frame.height, y: frame.y, strideY: frame.yStride,
            u: frame.u, strideU: frame.uStride, v: frame.v, strideV: frame.vStride))
        numbers.append(try XCTUnwrap(VirtualCamera.decodeFrameNumber(from: image)))
      case .audio(let chunk): samples += chunk.samples
      }
    }
    XCTAssertEqual(numbers, Array(0..<60))
    XCTAssertEqual(Double(samples.count) / 48_000, 2, accuracy: 0.1)
    let steady = samples.dropFirst(4800).prefix(48_000).map { Double($0) }
    XCTAssertEqual(
      ToneAnalysis.strongest(of: stride(from: 110.0, through: 1980, by: 110), in: steady), 440)
  }

  func testTranscoderFillsShortGapsDropsLatePacketsAndRestartsAfterLongOnes() throws {
    let opus = try TestOpusEncoder(channels: 2, frequency: 440)
    let transcoder = try OpusToAACTranscoder()
    var packets: [OpusToAACTranscoder.Packet] = []
    for index in 0..<10 {
      packets += try transcoder.add(try opus.encodeNext(), ticks: Int64(index * 960))
    }
    // A duplicate of the last packet, and one that is not Opus (code 3 without its count byte).
    packets += try transcoder.add(try opus.encodeNext(), ticks: 9 * 960)
    packets += try transcoder.add([0x03], ticks: 10 * 960)
    XCTAssertEqual(transcoder.statistics.opusPacketsLate, 1)
    XCTAssertEqual(transcoder.statistics.opusPacketsUndecodable, 1)
    // 100 ms lost: filled with silence, the AAC stream stays continuous.
    packets += try transcoder.add(try opus.encodeNext(), ticks: 15 * 960)
    XCTAssertEqual(transcoder.statistics.silenceSamplesInserted, 5 * 960)
    // A 3 s pause: the last frame is padded and the next run starts at the new time.
    let resumed: Int64 = 16 * 960 + 144_000
    for index in 0..<6 {
      packets += try transcoder.add(try opus.encodeNext(), ticks: resumed + Int64(index * 960))
    }
    packets += try transcoder.finish()
    let starts = packets.map(\.ticks)
    XCTAssertEqual(starts, starts.sorted())
    let beforePause = starts.filter { $0 < 16 * 960 }
    let afterPause = starts.filter { $0 >= resumed - 1024 }
    XCTAssertEqual(beforePause.count + afterPause.count, starts.count, "nothing inside the pause")
    let steps = zip(beforePause.dropFirst(), beforePause).map { $0 - $1 }
    XCTAssertEqual(Set(steps), [1024])
    XCTAssertTrue(packets.allSatisfy { !$0.bytes.isEmpty && $0.durationTicks == 1024 })
  }
}

import Foundation
import WCSMedia
import XCTest

@testable import WCSLocalServer

/// A publisher's H.264 RTP (RFC 6184) and Opus become an MP4 file that reads back.
final class RelayH264RecordingTests: XCTestCase {
  /// `frames` pictures of 160x120 H.264 packetized into FU-A/STAP-A packets of at most 300
  /// bytes, from sequence number `firstSequence`; `dropParameterSets` leaves the SPS and PPS
  /// out of the first IDR.
  private func packets(frames: Int, firstSequence: UInt16, dropParameterSets: Bool = false)
    throws -> [VP8FrameAssembler.Packet]
  {
    let encoder = try H264Encoder(
      configuration: .init(width: 160, height: 120, bitrateKbps: 300))
    var packetizer = H264Packetizer(maxPayloadSize: 300)
    var sequence = firstSequence
    var out: [VP8FrameAssembler.Packet] = []
    for index in 0..<frames {
      let picture = I420Image(width: 160, height: 120, y: UInt8(40 + index * 5))
      for var frame in try encoder.encode(picture, timestamp: UInt32(index * 3000)) {
        if dropParameterSets && index == 0 {
          frame.data = H264AnnexB.stream(
            H264AnnexB.nalUnits(frame.data).filter {
              ![H264NALUnitType.sps, H264NALUnitType.pps].contains(
                H264NALUnitType.of($0[$0.startIndex]))
            })
        }
        for payload in packetizer.packetize(frame) {
          out.append(
            .init(
              sequenceNumber: sequence, timestamp: payload.timestamp, marker: payload.marker,
              payload: payload.payload))
          sequence &+= 1
        }
      }
    }
    return out
  }

  func testH264AndOpusPacketsBecomeAnMP4FileUnderTheRecordName() throws {
    let directory = try makeTemporaryDirectory("wcs-relay-h264-recording")
    defer { try? FileManager.default.removeItem(at: directory) }
    let temporary = directory.appendingPathComponent(".recording-pub-1.mp4").path
    let recording = RelayRecording(
      temporaryPath: temporary, format: .mp4, hasVideo: true, hasAudio: true)
    let opus = try OpusEncoder(configuration: .init(channels: 2))
    let silence = PCMAudioFrame(samples: [Int16](repeating: 0, count: 960 * 2), channels: 2)
    // Audio before the first key frame is held, not lost.
    recording.addAudio(try opus.encode(silence), timestamp: 1000)
    for packet in try packets(frames: 30, firstSequence: 65_500) {
      XCTAssertFalse(
        recording.addVideo(
          sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp,
          marker: packet.marker, payload: packet.payload))
    }
    for index in 1...10 {
      recording.addAudio(try opus.encode(silence), timestamp: 1000 + UInt32(index * 960))
    }
    XCTAssertEqual(
      recording.finish(directory: directory.path, name: "stream-cam.mp4"), "stream-cam.mp4",
      recording.lastError ?? "")
    XCTAssertFalse(FileManager.default.fileExists(atPath: temporary))
    let final = directory.appendingPathComponent("stream-cam.mp4").path
    let bytes = try Data(contentsOf: URL(fileURLWithPath: final))
    XCTAssertEqual(Array(bytes.dropFirst(4).prefix(4)), Array("ftyp".utf8))

    let reader = try MediaFileReader(path: final)
    XCTAssertEqual(reader.info.video?.codecName, "h264")
    XCTAssertEqual(reader.info.audio?.codecName, "opus")
    var lumas: [UInt8] = []
    var audioChunks = 0
    while let sample = try reader.nextSample() {
      switch sample {
      case .video(let frame):
        XCTAssertEqual([frame.width, frame.height], [160, 120])
        lumas.append(frame.y[60 * frame.yStride + 80])
      case .audio: audioChunks += 1
      }
    }
    XCTAssertEqual(lumas.count, 30)
    // Flat pictures of luma 40, 45, ...: each decoded picture is its source.
    for (index, luma) in lumas.enumerated() {
      XCTAssertEqual(Int(luma), 40 + index * 5, accuracy: 3, "picture \(index)")
    }
    XCTAssertGreaterThanOrEqual(audioChunks, 10, "11 Opus packets of 20 ms")
  }

  func testAnIDRWithoutItsParameterSetsAsksForAKeyFrameAndRecordsNothing() throws {
    let directory = try makeTemporaryDirectory("wcs-relay-h264-no-sps")
    defer { try? FileManager.default.removeItem(at: directory) }
    let temporary = directory.appendingPathComponent(".recording-pub-2.mp4").path
    let recording = RelayRecording(
      temporaryPath: temporary, format: .mp4, hasVideo: true, hasAudio: false)
    var asked = false
    for packet in try packets(frames: 5, firstSequence: 10, dropParameterSets: true) {
      asked =
        recording.addVideo(
          sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp,
          marker: packet.marker, payload: packet.payload) || asked
    }
    XCTAssertTrue(asked)
    XCTAssertNil(recording.finish(directory: directory.path, name: "none.mp4"))
    XCTAssertFalse(FileManager.default.fileExists(atPath: temporary))
  }

  func testTheCoreNamesH264RecordsMP4AndVP8RecordsWebM() {
    for (videoCodec, name) in [("H264", "stream-pub-1-.mp4"), ("VP8", "stream-pub-1-.webm")] {
      let server = ServerHarness()
      server.connect(1, remote: "127.0.0.1:40001")
      server.engine.codecs = LocalServerMediaCodecs(audioCodec: "opus", videoCodec: videoCodec)
      server.publish(1, "pub-1", name: "cam", record: true)
      server.close(1)
      XCTAssertTrue(
        server.engine.requests.contains(.releaseMedia(mediaSessionId: "pub-1", recordName: name)),
        "\(videoCodec): \(server.engine.requests)")
    }
  }
}

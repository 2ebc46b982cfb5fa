import Foundation
import WCSMedia
import XCTest

@testable import WCSLocalServer

/// A publisher's RTP (VP8 packets, Opus packets) becomes a WebM file that reads back.
final class RelayRecordingTests: XCTestCase {
  /// A packet repaired by the relay's NACK arrives long after its frame (here 120 packets
  /// later): the file still gets every frame; a packet that never comes makes `addVideo` ask
  /// for a key frame.
  func testALateRetransmissionStillReachesTheFile() throws {
    let directory = try makeTemporaryDirectory("wcs-relay-recording-late")
    defer { try? FileManager.default.removeItem(at: directory) }
    let temporary = directory.appendingPathComponent(".recording-late.webm").path
    let final = directory.appendingPathComponent("late.webm").path
    let recording = RelayRecording(temporaryPath: temporary, hasVideo: true, hasAudio: false)
    let encoder = try VP8Encoder(
      configuration: .init(width: 160, height: 120, frameRate: 30, bitrateKbps: 300))
    let camera = VirtualCamera(width: 160, height: 120, frameRate: 30)
    var packetizer = VP8Packetizer(maxPayloadSize: 200)
    var packets: [VP8FrameAssembler.Packet] = []
    var sequence: UInt16 = 0
    for index in 0..<60 {
      let picture = camera.frame(index)
      for frame in try encoder.encode(picture, timestamp: UInt32(index * 3000)) {
        for payload in packetizer.packetize(frame) {
          packets.append(
            .init(
              sequenceNumber: sequence, timestamp: payload.timestamp, marker: payload.marker,
              payload: payload.payload))
          sequence &+= 1
        }
      }
    }
    XCTAssertGreaterThan(packets.count, 200)
    let late = packets.count / 2
    var askedForKeyFrame = false
    for (index, packet) in packets.enumerated() where index != late {
      askedForKeyFrame =
        recording.addVideo(
          sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp,
          marker: packet.marker, payload: packet.payload) || askedForKeyFrame
      if index == late + 120 {
        let repaired = packets[late]
        recording.addVideo(
          sequenceNumber: repaired.sequenceNumber, timestamp: repaired.timestamp,
          marker: repaired.marker, payload: repaired.payload)
      }
    }
    XCTAssertFalse(askedForKeyFrame, "nothing was lost for good")
    XCTAssertEqual(
      recording.finish(
        directory: (final as NSString).deletingLastPathComponent,
        name: (final as NSString).lastPathComponent), (final as NSString).lastPathComponent,
      recording.lastError ?? "")
    let reader = try MediaFileReader(path: final)
    var frames = 0
    while let sample = try reader.nextSample() {
      if case .video = sample { frames += 1 }
    }
    XCTAssertEqual(frames, 60)

    // A packet that never comes and no key frame after it: once 512 later packets passed,
    // the file asks for a key frame.
    let lossy = RelayRecording(
      temporaryPath: directory.appendingPathComponent(".lossy.webm").path, hasVideo: true,
      hasAudio: false)
    var asked = false
    for copy in 0..<4 {
      // Each copy continues the numbering and the clock, as a longer stream would, without
      // its key frame (timestamp 0): no later key frame bridges the loss.
      for (index, packet) in packets.enumerated()
      where !(copy == 0 && index == late) && !(copy > 0 && packet.timestamp == 0) {
        asked =
          lossy.addVideo(
            sequenceNumber: packet.sequenceNumber &+ UInt16(copy * packets.count),
            timestamp: packet.timestamp &+ UInt32(copy * 180_000), marker: packet.marker,
            payload: packet.payload) || asked
      }
    }
    XCTAssertTrue(asked)
    lossy.discard()
  }

  func testVP8AndOpusPacketsBecomeAWebMFileUnderTheRecordName() throws {
    let directory = try makeTemporaryDirectory("wcs-relay-recording")
    defer { try? FileManager.default.removeItem(at: directory) }
    let temporary = directory.appendingPathComponent(".recording-pub-1.webm").path
    let final = directory.appendingPathComponent("stream-cam.webm").path
    let recording = RelayRecording(temporaryPath: temporary, hasVideo: true, hasAudio: true)

    let encoder = try VP8Encoder(
      configuration: .init(width: 160, height: 120, frameRate: 30, bitrateKbps: 300))
    let opus = try OpusEncoder(configuration: .init(channels: 2))
    var packetizer = VP8Packetizer(maxPayloadSize: 300)
    var sequence: UInt16 = 65_500
    let frames = 30
    // Audio before the first key frame is held, not lost.
    let silence = PCMAudioFrame(samples: [Int16](repeating: 0, count: 960 * 2), channels: 2)
    recording.addAudio(try opus.encode(silence), timestamp: 1000)
    for index in 0..<frames {
      let picture = I420Image(width: 160, height: 120, y: UInt8(40 + index * 5))
      for frame in try encoder.encode(picture, timestamp: UInt32(index * 3000)) {
        let payloads = packetizer.packetize(frame)
        // Reverse the packets of each frame: the assembler must reorder them.
        let numbered = payloads.map { payload -> (UInt16, PacketizedPayload) in
          defer { sequence &+= 1 }
          return (sequence, payload)
        }
        for (number, payload) in numbered.reversed() {
          recording.addVideo(
            sequenceNumber: number, timestamp: payload.timestamp, marker: payload.marker,
            payload: payload.payload)
        }
      }
      if index % 3 == 2 {
        recording.addAudio(
          try opus.encode(silence), timestamp: 1000 + UInt32((index / 3 + 1) * 4800))
      }
    }
    XCTAssertEqual(
      recording.finish(
        directory: (final as NSString).deletingLastPathComponent,
        name: (final as NSString).lastPathComponent), (final as NSString).lastPathComponent,
      recording.lastError ?? "")
    XCTAssertFalse(FileManager.default.fileExists(atPath: temporary))
    let bytes = try Data(contentsOf: URL(fileURLWithPath: final))
    XCTAssertEqual(Array(bytes.prefix(4)), [0x1A, 0x45, 0xDF, 0xA3], "EBML magic")

    let reader = try MediaFileReader(path: final)
    var videoFrames = 0
    var audioChunks = 0
    while let sample = try reader.nextSample() {
      switch sample {
      case .video(let frame):
        videoFrames += 1
        XCTAssertEqual(frame.width, 160)
      case .audio: audioChunks += 1
      }
    }
    XCTAssertEqual(videoFrames, frames)
    XCTAssertGreaterThanOrEqual(audioChunks, 10, "11 Opus packets of 20 ms")
  }

  func testNothingRecordedLeavesNoFile() throws {
    let directory = try makeTemporaryDirectory("wcs-relay-recording-empty")
    defer { try? FileManager.default.removeItem(at: directory) }
    let recording = RelayRecording(
      temporaryPath: directory.appendingPathComponent(".tmp.webm").path, hasVideo: true,
      hasAudio: true)
    // Audio only while waiting for a key frame that never comes; a delta-frame-like payload.
    recording.addAudio([0xFC, 0xFF, 0xFE], timestamp: 0)
    recording.addVideo(sequenceNumber: 1, timestamp: 0, marker: true, payload: [0x10, 0x01])
    let final = directory.appendingPathComponent("x.webm").path
    XCTAssertNil(
      recording.finish(
        directory: (final as NSString).deletingLastPathComponent,
        name: (final as NSString).lastPathComponent))
    XCTAssertEqual(recording.lastError, "no media recorded")
    XCTAssertFalse(FileManager.default.fileExists(atPath: final))
  }

  func testKeyFrameSizeFromTheVP8Header() {
    // Frame tag (key frame), start code, 640 x 480.
    let header: [UInt8] = [0x50, 0x2A, 0x00, 0x9D, 0x01, 0x2A, 0x80, 0x02, 0xE0, 0x01]
    let size = RelayRecording.keyFrameSize(header)
    XCTAssertEqual(size?.width, 640)
    XCTAssertEqual(size?.height, 480)
    XCTAssertNil(RelayRecording.keyFrameSize(Array(header.prefix(9))))
    XCTAssertNil(RelayRecording.keyFrameSize([0x50, 0x2A, 0x00, 0x9D, 0x01, 0x2B, 0, 0, 0, 0]))
  }
}

import Foundation
import Synchronization
import XCTest

@testable import WCSEngine
@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSMediaSeam
@testable import WCSProtocols

/// A new source taking over a played video stream (a relay switching publishers on the same
/// connection: a new SSRC numbered afresh): after `VideoReceiveTrack.sourceChanged` its pictures
/// are decoded from its first key frame on, even when its numbering lands behind the old one's
/// last frame by less than the assembler's two-packet renumbering rule can tell apart from late
/// packets.
final class VideoSourceTakeoverTests: XCTestCase {
  private final class Collector: VideoRenderer {
    let frames = Mutex<[VideoFrame]>([])
    func render(_ frame: VideoFrame) { frames.withLock { $0.append(frame) } }
  }

  /// The old source ends at sequence 40,019; the new one starts 1,000 behind (39,000), a
  /// different picture size so its pictures cannot be mistaken for the old one's.
  private func streams() throws -> (old: VP8TestStream, new: VP8TestStream) {
    (
      try VP8TestStream(count: 20, firstSequence: 40_000),
      try VP8TestStream(count: 20, width: 160, height: 120, firstSequence: 39_000)
    )
  }

  private func assertPlayedBoth(
    _ rendered: [VideoFrame], old: VP8TestStream, new: VP8TestStream,
    file: StaticString = #filePath, line: UInt = #line
  ) {
    let expected = old.pictures + new.pictures
    XCTAssertEqual(rendered.count, expected.count, "pictures rendered", file: file, line: line)
    for (index, (shown, picture)) in zip(rendered, expected).enumerated() {
      XCTAssertEqual(shown.width, picture.width, "picture \(index) width", file: file, line: line)
      XCTAssertEqual([UInt8](shown.dataY), picture.y, "picture \(index)", file: file, line: line)
    }
  }

  func testNewSourceBehindTheOldNumberingIsPlayedOnTheLoop() throws {
    let loop = EventLoop(label: "test.takeover")
    defer { loop.shutdown() }
    let (old, new) = try streams()
    let renderer = Collector()
    let track = try VideoReceiveTrack(
      renderer: renderer, loop: loop, placement: .loop(share: 0.1), onKeyFrameNeeded: {})
    for frame in old.packets {
      loop.submit { track.handle(frame, now: loop.mediaNow()) }
      track.queue.sync {}
    }
    loop.submit { track.sourceChanged() }
    for frame in new.packets {
      loop.submit { track.handle(frame, now: loop.mediaNow()) }
      track.queue.sync {}
    }
    assertPlayedBoth(renderer.frames.withLock { $0 }, old: old, new: new)
  }

  /// Without a loop everything runs on the track's queue: the restart is queued in order
  /// between the old source's pictures and the new one's.
  func testNewSourceIsPlayedWhenDecodingOnTheQueue() throws {
    let (old, new) = try streams()
    let renderer = Collector()
    let track = try VideoReceiveTrack(renderer: renderer, onKeyFrameNeeded: {})
    let now = MediaInstant.now()
    for frame in old.packets { track.handle(frame, now: now) }
    track.sourceChanged()
    for frame in new.packets { track.handle(frame, now: now) }
    track.queue.sync {}
    assertPlayedBoth(renderer.frames.withLock { $0 }, old: old, new: new)
  }

  /// The assembler alone: before `restart` the new numbering 1,000 behind is late (the frozen
  /// video this fixes); after it, the new source's key frame is delivered and its delta frames
  /// follow; a new source whose first frames are delta frames waits for a key frame and asks
  /// for one.
  func testAssemblerRestartTakesANewNumbering() throws {
    let (old, new) = try streams()
    func packets(_ stream: VP8TestStream) -> [VP8FrameAssembler.Packet] {
      stream.packets.joined().map {
        VP8FrameAssembler.Packet(
          sequenceNumber: $0.packet.header.sequenceNumber, timestamp: $0.packet.header.timestamp,
          marker: $0.packet.header.marker, payload: $0.packet.payload)
      }
    }
    // A short reorder window: the request for a key frame comes after a few packets without one.
    var assembler = VP8FrameAssembler(reorderWindow: 4)
    let oldFrames = packets(old).reduce(0) { $0 + assembler.insert($1).frames.count }
    XCTAssertEqual(oldFrames, old.pictures.count)
    var withoutRestart = assembler
    let lateFrames = packets(new).reduce(0) { $0 + withoutRestart.insert($1).frames.count }
    XCTAssertEqual(lateFrames, 0, "without a restart the new numbering is taken for late packets")
    assembler.restart()
    let latePackets = assembler.latePackets
    var delivered: [VP8FrameAssembler.Frame] = []
    for packet in packets(new) { delivered += assembler.insert(packet).frames }
    XCTAssertEqual(delivered.count, new.pictures.count)
    XCTAssertEqual(delivered.first?.frame.isKeyFrame, true)
    XCTAssertEqual(assembler.latePackets, latePackets)
    XCTAssertFalse(assembler.isWaitingForKeyFrame)
    // A source that starts mid-stream (its key frame lost): nothing until a key frame, and a
    // key-frame request.
    assembler.restart()
    let deltaOnly = packets(new).filter { $0.timestamp >= VP8TestStream.frameInterval }
    var asked = false
    var early = 0
    for packet in deltaOnly.map({ packet -> VP8FrameAssembler.Packet in
      var renumbered = packet
      renumbered.sequenceNumber &+= 20_000
      return renumbered
    }) {
      let output = assembler.insert(packet)
      early += output.frames.count
      asked = asked || output.needsKeyFrame
    }
    XCTAssertEqual(early, 0)
    XCTAssertTrue(asked)
    XCTAssertTrue(assembler.isWaitingForKeyFrame)
  }
}

import Foundation
import Synchronization
import XCTest

@testable import WCSCodecs
@testable import WCSEngine
@testable import WCSMedia
@testable import WCSMediaSeam
@testable import WCSProtocols

/// A played video track decodes each picture into the planes of the one rendered before
/// (`VideoDecodePipeline.recycle`), unless the renderer kept it: every picture the renderer gets
/// is the decoder's, with its capture time, and a picture it keeps never changes afterwards —
/// straight to the renderer, and through the lip sync's render queue.
final class VideoTrackPictureRecyclingTests: XCTestCase {
  /// Checks each picture against the stream's when it is rendered and keeps every third one.
  private final class Checker: VideoRenderer {
    struct State {
      var rendered = 0
      var mismatches: [Int] = []
      var timestamps: [Int64] = []
      var kept: [(index: Int, frame: VideoFrame)] = []
    }
    let pictures: [I420Image]
    let state = Mutex(State())

    init(pictures: [I420Image]) { self.pictures = pictures }

    func render(_ frame: VideoFrame) {
      state.withLock { state in
        let index = state.rendered
        state.rendered += 1
        state.timestamps.append(frame.timestampNs)
        if index < pictures.count {
          let expected = pictures[index]
          if frame.width != expected.width || [UInt8](frame.dataY) != expected.y
            || [UInt8](frame.dataU) != expected.u || [UInt8](frame.dataV) != expected.v
          {
            state.mismatches.append(index)
          }
        }
        if index % 3 == 0 { state.kept.append((index, frame)) }
      }
    }
  }

  private func play(through track: VideoReceiveTrack, _ stream: VP8TestStream) {
    let now = MediaInstant.now()
    for frame in stream.packets { track.handle(frame, now: now) }
    track.queue.sync {}
  }

  private func assertRendered(
    _ checker: Checker, _ stream: VP8TestStream, file: StaticString = #filePath,
    line: UInt = #line
  ) {
    let state = checker.state.withLock { $0 }
    XCTAssertEqual(state.rendered, stream.pictures.count, file: file, line: line)
    XCTAssertEqual(state.mismatches, [], "pictures unlike the decoder's", file: file, line: line)
    XCTAssertEqual(
      state.timestamps,
      (0..<stream.pictures.count).map {
        Int64($0) * Int64(VP8TestStream.frameInterval) * 100_000 / 9
      },
      file: file, line: line)
    for (index, frame) in state.kept {
      XCTAssertEqual(
        [UInt8](frame.dataY), stream.pictures[index].y, "kept picture \(index) changed",
        file: file, line: line)
      XCTAssertEqual(
        [UInt8](frame.dataV), stream.pictures[index].v, "kept picture \(index) changed",
        file: file, line: line)
    }
  }

  func testPicturesStraightToTheRenderer() throws {
    let stream = try VP8TestStream(count: 30, width: 96, height: 64)
    let checker = Checker(pictures: stream.pictures)
    let track = try VideoReceiveTrack(renderer: checker, onKeyFrameNeeded: {})
    play(through: track, stream)
    assertRendered(checker, stream)
    // The last picture (not kept) was handed back for the next decode.
    XCTAssertTrue(track.queue.sync { track.receiver.hasSparePicture })
  }

  func testPicturesThroughTheLipSyncRenderQueue() throws {
    let stream = try VP8TestStream(count: 30, width: 96, height: 64)
    let checker = Checker(pictures: stream.pictures)
    // No SR yet: no extra delay, each picture leaves the queue as it is decoded.
    let track = try VideoReceiveTrack(
      renderer: checker, playoutSync: PlayoutSync(), onKeyFrameNeeded: {})
    play(through: track, stream)
    assertRendered(checker, stream)
    XCTAssertTrue(track.queue.sync { track.receiver.hasSparePicture })
  }
}

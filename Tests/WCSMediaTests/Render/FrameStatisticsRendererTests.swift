import Synchronization
import XCTest

@testable import WCSDevices
@testable import WCSMedia
@testable import WCSMediaSeam

final class FrameStatisticsRendererTests: XCTestCase {
  func testCountsRenderedDroppedFreezesAndFrameRate() {
    let now = Mutex(0.0)
    let forwarded = Mutex<[Int64]>([])
    let inner = VideoFrameCallbackRenderer { frame in
      forwarded.withLock { $0.append(frame.timestampNs) }
    }
    let renderer = FrameStatisticsRenderer(wrapping: inner) { now.withLock { $0 } }
    func frame(_ index: Int64) -> VideoFrame {
      VideoFrame(width: 2, height: 2, timestampNs: index * 33_333_333)
    }
    // 30 frames at 30 fps.
    for index in 0..<30 {
      now.withLock { $0 = Double(index) / 30 }
      renderer.render(frame(Int64(index)))
    }
    XCTAssertEqual(renderer.statistics.framesRendered, 30)
    XCTAssertEqual(renderer.statistics.framesPerSecond, 30)
    // A duplicate and a late frame are dropped and not forwarded.
    renderer.render(frame(29))
    renderer.render(frame(10))
    // Then a 0.8 s freeze, and one more frame.
    now.withLock { $0 = 29.0 / 30 + 0.8 }
    renderer.render(frame(30))
    let statistics = renderer.statistics
    XCTAssertEqual(statistics.framesRendered, 31)
    XCTAssertEqual(statistics.framesDropped, 2)
    XCTAssertEqual(statistics.freezes, 1)
    XCTAssertEqual(statistics.longestGap, 0.8, accuracy: 1e-9)
    // Frames 23...29 (rendered at i/30 s) and frame 30 lie within the last second.
    XCTAssertEqual(statistics.framesPerSecond, 8)
    XCTAssertEqual(forwarded.withLock { $0 }, (0...30).map { Int64($0) * 33_333_333 })
  }
}

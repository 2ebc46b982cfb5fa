import Synchronization
import XCTest

@testable import WCSEngine
@testable import WCSMedia
@testable import WCSMediaSeam

/// Each 20 ms frame's capture time (the SR's clock mapping) is its first sample's, from the
/// chunk it came in, whatever the source's chunk size.
final class AudioSendTrackCaptureTimeTests: XCTestCase {
  func testFramesCarryTheirFirstSamplesCaptureTime() throws {
    let captured = Mutex<[(timestamp: UInt32, at: MediaInstant)]>([])
    let track = try AudioSendTrack(
      parameters: NativeEncodingParameters(
        request: MediaConnectionRequest(direction: .publish, audio: .init(), video: nil))
    ) { payload, capturedAt in
      captured.withLock { $0.append((payload.timestamp, capturedAt)) }
    }
    let origin = MediaInstant.now()
    // AAC-sized chunks (1024 samples, 21.33 ms), each captured when its first sample is due.
    track.queue.sync {
      for chunk in 0..<5 {
        let start = origin + .microseconds(chunk * 1024 * 1_000_000 / 48_000)
        track.append(
          [Int16](repeating: 100, count: 1024), sourceChannels: 1, capturedAt: start)
      }
    }
    let frames = captured.withLock { $0 }
    XCTAssertEqual(frames.map(\.timestamp), [0, 960, 1920, 2880, 3840])  // 5120 samples: 5 frames
    for (index, frame) in frames.enumerated() {
      let expected = origin + .microseconds(index * 20_000)
      let error = abs((frame.at - expected).microseconds)
      XCTAssertLessThan(error, 2, "frame \(index) off by \(error) µs")
    }
  }
}

import Synchronization
import XCTest

@testable import WCSDevices
@testable import WCSEngine
@testable import WCSMedia
@testable import WCSMediaSeam

/// The virtual microphone source: one 20 ms frame per tick at the frame's end, 50 a second,
/// each stamped with its first sample's capture time, `origin + 20 ms × index`, exactly.
final class VirtualMicrophoneSourceTests: XCTestCase {
  func testFiftyFramesASecondWithExactCaptureTimes() throws {
    struct Frame {
      let timestamp: UInt32
      let capturedAt: MediaInstant
      let deliveredAt: MediaInstant
    }
    let frames = Mutex<[Frame]>([])
    let done = DispatchSemaphore(value: 0)
    let track = try AudioSendTrack(
      parameters: NativeEncodingParameters(
        request: MediaConnectionRequest(direction: .publish, audio: .init(), video: nil))
    ) { payload, capturedAt in
      let count = frames.withLock { frames -> Int in
        frames.append(
          Frame(timestamp: payload.timestamp, capturedAt: capturedAt, deliveredAt: .now()))
        return frames.count
      }
      if count == 50 { done.signal() }
    }
    let clock = NativeMediaClock()
    let source = VirtualMicrophoneSource(
      track: track, clock: clock, microphone: VirtualMicrophone())
    source.start()
    XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
    source.stop()
    let stoppedAt = MediaInstant.now()
    let sent = frames.withLock { $0 }
    XCTAssertGreaterThanOrEqual(sent.count, 50)
    for (index, frame) in sent.enumerated() {
      XCTAssertEqual(frame.timestamp, UInt32(index * 960))
      // Started at the origin: frame `index` is the microphone's frame `index`.
      XCTAssertEqual(frame.capturedAt, clock.origin + .milliseconds(20 * index))
      XCTAssertGreaterThanOrEqual(
        frame.deliveredAt, frame.capturedAt + .milliseconds(20), "frame \(index) before its end")
    }
    // Following the clock: every frame that ended before the stop was sent, none after.
    let ended = Int((stoppedAt - clock.origin).nanoseconds / 20_000_000)
    XCTAssertLessThanOrEqual(sent.count, ended)
    XCTAssertGreaterThanOrEqual(sent.count, ended - 3)
  }
}

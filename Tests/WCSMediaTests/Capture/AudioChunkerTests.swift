import XCTest

@testable import WCSDevices
@testable import WCSMedia

final class AudioChunkerTests: XCTestCase {
  func testCutsIntoTwentyMillisecondChunksWithContinuousTimestamps() {
    var chunker = AudioChunker(channels: 2)
    // 1024 stereo samples (one AAC frame) at 0.5 s: one whole chunk, 64 left over.
    let first = chunker.append((0..<2048).map { Int16($0) }, ptsSeconds: 0.5)
    XCTAssertEqual(first.count, 1)
    XCTAssertEqual(first.first?.samples, (0..<1920).map { Int16($0) })
    XCTAssertEqual(first.first?.ptsSeconds, 0.5)
    let second = chunker.append([Int16](repeating: 7, count: 2048), ptsSeconds: 0.52133)
    XCTAssertEqual(second.count, 1)
    XCTAssertEqual(second.first?.samples.prefix(128), ArraySlice((1920..<2048).map { Int16($0) }))
    XCTAssertEqual(second.first?.ptsSeconds ?? 0, 0.52, accuracy: 1e-12)
    // 256 stereo samples remain: padded with silence to 960.
    let last = chunker.finish()
    XCTAssertEqual(last?.samples.count, 1920)
    XCTAssertEqual(last?.samples.prefix(256), ArraySlice(repeating: 7, count: 256))
    XCTAssertEqual(last?.samples.suffix(1664), ArraySlice(repeating: 0, count: 1664))
    XCTAssertEqual(last?.ptsSeconds ?? 0, 0.54, accuracy: 1e-12)
    XCTAssertNil(chunker.finish())
  }
}

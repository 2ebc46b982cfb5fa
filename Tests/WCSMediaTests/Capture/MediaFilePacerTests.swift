import XCTest

@testable import WCSDevices
@testable import WCSMedia

/// A source that replays a fixed list of samples, counting rewinds.
private final class ScriptedSource: MediaSampleSource {
  let samples: [MediaSample]
  let duration: Double?
  private var index = 0
  private(set) var rewinds = 0

  init(samples: [MediaSample], duration: Double?) {
    self.samples = samples
    self.duration = duration
  }

  func nextSample() throws -> MediaSample? {
    guard index < samples.count else { return nil }
    defer { index += 1 }
    return samples[index]
  }

  func rewind() throws {
    index = 0
    rewinds += 1
  }
}

final class MediaFilePacerTests: XCTestCase {
  private func frame(_ seconds: Double) -> MediaSample {
    .video(
      DecodedVideoFrame(
        width: 2, height: 2, y: [1, 2, 3, 4], u: [5], v: [6], yStride: 2, uStride: 1, vStride: 1,
        ptsSeconds: seconds))
  }

  private func chunk(_ seconds: Double) -> MediaSample {
    .audio(
      DecodedAudioChunk(
        samples: [Int16](repeating: 0, count: 960), channels: 1, ptsSeconds: seconds))
  }

  /// 0.3 s: video at 0, 0.1, 0.2 (10 fps); audio every 20 ms from 0 to 0.28.
  private func scriptedSource() -> ScriptedSource {
    var samples: [MediaSample] = []
    for index in 0..<15 {
      if index % 5 == 0 { samples.append(frame(Double(index / 5) * 0.1)) }
      samples.append(chunk(Double(index) * 0.02))
    }
    return ScriptedSource(samples: samples, duration: 0.3)
  }

  func testReleasesSamplesWhenTheirTimeComes() throws {
    let pacer = MediaFilePacer(source: scriptedSource(), loops: false)
    XCTAssertEqual(try pacer.nextDeadline(), .zero)
    XCTAssertEqual(try pacer.dueSamples(at: .zero), [frame(0), chunk(0)])
    XCTAssertEqual(try pacer.nextDeadline(), .milliseconds(20))
    XCTAssertEqual(try pacer.dueSamples(at: .milliseconds(19)), [])
    XCTAssertEqual(try pacer.dueSamples(at: .milliseconds(45)), [chunk(0.02), chunk(0.04)])
    // A late driver gets everything that fell due meanwhile, in order.
    XCTAssertEqual(
      try pacer.dueSamples(at: .milliseconds(100)),
      [chunk(0.06), chunk(0.08), frame(0.1), chunk(0.1)])
    XCTAssertEqual(try pacer.dueSamples(at: .seconds(10)).count, 15 + 3 - 6 - 2)
    XCTAssertNil(try pacer.nextDeadline())
    XCTAssertTrue(pacer.isFinished)
    XCTAssertEqual(try pacer.dueSamples(at: .seconds(20)), [])
  }

  func testLoopingContinuesTheTimeline() throws {
    let source = scriptedSource()
    let pacer = MediaFilePacer(source: source, loops: true)
    let firstPass = try pacer.dueSamples(at: .milliseconds(299))
    XCTAssertEqual(firstPass.count, 18)
    // Looking ahead for the next sample already rewound the source.
    XCTAssertEqual(source.rewinds, 1)
    XCTAssertEqual(pacer.loopsCompleted, 1)
    // The second pass starts right after the first, 0.3 s (the file's duration) later.
    XCTAssertEqual(try pacer.nextDeadline(), .milliseconds(300))
    let secondPass = try pacer.dueSamples(at: .milliseconds(599))
    XCTAssertEqual(secondPass.count, 18)
    XCTAssertEqual(secondPass.first?.ptsSeconds ?? 0, 0.3, accuracy: 1e-9)
    XCTAssertEqual(secondPass.first?.withPTS(0), frame(0))
    XCTAssertEqual(secondPass.last?.ptsSeconds ?? 0, 0.58, accuracy: 1e-9)
    let all = firstPass + secondPass
    let videoTimes = all.compactMap { sample -> Double? in
      if case .video(let frame) = sample { return frame.ptsSeconds }
      return nil
    }
    XCTAssertEqual(videoTimes.count, 6)
    for (previous, next) in zip(videoTimes, videoTimes.dropFirst()) {
      XCTAssertEqual(next - previous, 0.1, accuracy: 1e-9)
    }
    XCTAssertFalse(pacer.isFinished)
  }

  func testLoopLengthCoversTheLastSampleWhenTheDurationIsShortOrUnknown() throws {
    let source = ScriptedSource(samples: [chunk(0), chunk(0.02)], duration: nil)
    let pacer = MediaFilePacer(source: source, loops: true)
    XCTAssertEqual(try pacer.dueSamples(at: .milliseconds(39)).count, 2)
    XCTAssertEqual(try pacer.nextDeadline(), .milliseconds(40))
  }

  func testAnEmptySourceFinishesEvenWhenLooping() throws {
    let source = ScriptedSource(samples: [], duration: 1)
    let pacer = MediaFilePacer(source: source, loops: true)
    XCTAssertEqual(try pacer.dueSamples(at: .seconds(5)), [])
    XCTAssertNil(try pacer.nextDeadline())
    XCTAssertTrue(pacer.isFinished)
    XCTAssertEqual(source.rewinds, 0)
  }
}

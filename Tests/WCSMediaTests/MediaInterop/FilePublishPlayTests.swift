import Foundation
import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSEngine
@testable import WCSMedia
@testable import WCSMediaSeam

/// A real recording published from a file source through NativeMediaBackend → ICE-lite relay on
/// 127.0.0.1 → a play connection; the played pictures are compared with the file's own
/// pictures (decoded by `MediaFileReader` at the published size), matched by RTP timestamp.
final class FilePublishPlayTests: XCTestCase {
  /// Debian `forensics-samples-files`: a 1280x720 H.264 + AAC phone recording, 8.3 s.
  static let moviePath = "/usr/share/forensics-samples/original-files/movie2/movie-hello.mp4"
  private static let width = 640
  private static let height = 360
  /// The compared cut: the first seconds of the file.
  private static let cutSeconds = 3.0
  /// The control: pictures compared with the file one second later must score far lower.
  private static let shift = 1.0

  private struct SourcePicture {
    let seconds: Double
    let image: I420Image
  }

  func testRecordingPlaysBackAtThirtyDecibelsOrBetter() throws {
    guard FileManager.default.isReadableFile(atPath: Self.moviePath) else {
      throw XCTSkip(
        "\(Self.moviePath) is absent (Debian package forensics-samples-files)")
    }
    let source = try sourcePictures(upTo: Self.cutSeconds + Self.shift + 0.1)
    XCTAssertGreaterThanOrEqual(source.count, 90, "the file has 30 pictures a second")

    let device = NativeMediaDevices.fileSourceID(path: Self.moviePath)
    let call = try LoopbackCall(
      publish: MediaConnectionRequest(
        direction: .publish, audio: .init(deviceID: device),
        video: .init(
          deviceID: device, maxWidth: Self.width, maxHeight: Self.height, maxFrameRate: 30,
          minBitrate: 1500, maxBitrate: 2500)))
    defer { call.close() }
    // The player first, so it sees the file from its first picture.
    try call.connectPlayer(self)
    waitForBackend("player up", timeout: 20) { call.playStates.value.last == .connected }
    try call.connectPublisher(self)
    waitForBackend("3 s of pictures", timeout: 30) {
      let frames = call.frames.value
      guard let first = frames.first, let last = frames.last else { return false }
      return Double(last.timestampNs - first.timestampNs) / 1e9 >= Self.cutSeconds + 0.3
    }
    let received = call.frames.value.compactMap { frame in
      I420Image(frame).map { (seconds: Double(frame.timestampNs) / 1e9, image: $0) }
    }
    XCTAssertGreaterThanOrEqual(received.count, 30)
    XCTAssertTrue(
      received.allSatisfy { $0.image.width == Self.width && $0.image.height == Self.height })

    // Capture timestamps come from the connection's clock; their offset to the file's
    // presentation times is found on the first pictures by content (median of 5), then every
    // picture is matched to the source picture nearest in time (capture ticks are 10 ms).
    let offsets = received.prefix(5).map { picture in
      let best = source.min {
        lumaDistance($0.image, picture.image) < lumaDistance($1.image, picture.image)
      }
      return picture.seconds - (best?.seconds ?? 0)
    }.sorted()
    let offset = offsets[offsets.count / 2]
    var scores: [Double] = []
    var matchedTimes: [Double] = []
    var shiftedScores: [Double] = []
    for picture in received {
      let time = picture.seconds - offset
      guard time <= Self.cutSeconds else { continue }
      guard
        let match = source.min(by: { abs($0.seconds - time) < abs($1.seconds - time) }),
        abs(match.seconds - time) <= 0.05, let psnr = picture.image.psnr(to: match.image)
      else {
        XCTFail("no source picture within 50 ms of \(time) s")
        continue
      }
      scores.append(min(psnr, 99))
      matchedTimes.append(match.seconds)
      if let shifted = source.min(by: {
        abs($0.seconds - time - Self.shift) < abs($1.seconds - time - Self.shift)
      }), let control = picture.image.psnr(to: shifted.image) {
        shiftedScores.append(min(control, 99))
      }
    }
    XCTAssertGreaterThanOrEqual(scores.count, 30, "pictures in the cut")
    XCTAssertLessThanOrEqual(matchedTimes.first ?? .infinity, 0.5, "from the file's start")
    XCTAssertGreaterThanOrEqual(matchedTimes.last ?? 0, Self.cutSeconds - 0.5, "to the cut's end")
    let mean = scores.reduce(0, +) / Double(max(1, scores.count))
    let minimum = scores.min() ?? 0
    let control = shiftedScores.reduce(0, +) / Double(max(1, shiftedScores.count))
    print(
      "FilePublishPlayTests: \(scores.count) pictures of the first \(Self.cutSeconds) s, "
        + "PSNR min \(String(format: "%.1f", minimum)) dB, mean \(String(format: "%.1f", mean)) dB"
        + " (control, 1 s off: \(String(format: "%.1f", control)) dB)")
    XCTAssertGreaterThanOrEqual(mean, 30, "mean PSNR against the file's own pictures")
    XCTAssertLessThan(control, mean - 5, "a picture 1 s away scores far lower (\(control) dB)")

    // The file's sound is played too.
    waitForBackend("file sound played", timeout: 10) {
      call.audio.value.contains { ($0.samples.map { abs(Int($0)) }.max() ?? 0) > 1000 }
    }
  }

  /// The first `seconds` of the file's pictures at the published size.
  private func sourcePictures(upTo seconds: Double) throws -> [SourcePicture] {
    let reader = try MediaFileReader(
      path: Self.moviePath, videoSize: (Self.width, Self.height), decodeAudio: false)
    var pictures: [SourcePicture] = []
    while let sample = try reader.nextSample() {
      guard case .video(let frame) = sample else { continue }
      if frame.ptsSeconds > seconds { break }
      guard
        let image = I420Image(
          width: frame.width, height: frame.height, y: frame.y, strideY: frame.yStride,
          u: frame.u, strideU: frame.uStride, v: frame.v, strideV: frame.vStride)
      else { continue }
      pictures.append(SourcePicture(seconds: frame.ptsSeconds, image: image))
    }
    return pictures
  }
}

/// Mean squared luma difference on every 4th pixel of every 4th row: a cheap ranking of
/// candidate pictures (the reported figure is the full `psnr(to:)`).
private func lumaDistance(_ a: I420Image, _ b: I420Image) -> Double {
  guard a.width == b.width, a.height == b.height else { return .infinity }
  var sum = 0
  var count = 0
  for row in stride(from: 0, to: a.height, by: 4) {
    for column in stride(from: 0, to: a.width, by: 4) {
      let d = Int(a.y[row * a.strideY + column]) - Int(b.y[row * b.strideY + column])
      sum += d * d
      count += 1
    }
  }
  return Double(sum) / Double(max(1, count))
}

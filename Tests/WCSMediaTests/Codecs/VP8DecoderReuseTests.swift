import Foundation
import TestSupport
import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSMedia
@testable import WCSMediaSeam

/// `VP8Decoder.decodeVideoFrame(_:reusing:)` (the picture written into the planes of one
/// rendered before) against `decodeVideoFrame(_:)` (new planes every time), on a stream that
/// changes picture size: the same pictures bit for bit; the spare's planes written in place only
/// when nothing else holds them (a picture a renderer kept never changes); a spare of another
/// size or layout, or none, gives a fresh picture; a failed decode leaves the spare.
final class VP8DecoderReuseTests: XCTestCase {
  /// Encoded VP8 frames: 96x64 pictures, then (a new key frame) 64x48 ones, then 96x64 again.
  private static func encodedFrames() throws -> [[UInt8]] {
    var frames: [[UInt8]] = []
    for (width, height, count) in [(96, 64, 24), (64, 48, 12), (96, 64, 12)] {
      let camera = VirtualCamera(width: width, height: height, frameRate: 30)
      let encoder = try VP8Encoder(
        configuration: .init(width: width, height: height, frameRate: 30, bitrateKbps: 300))
      for index in 0..<count {
        for encoded in try encoder.encode(camera.frame(index), timestamp: UInt32(index) * 3000) {
          frames.append(encoded.data)
        }
      }
    }
    return frames
  }

  private static func baseAddress(_ data: Data) -> UnsafeRawPointer? {
    data.withUnsafeBytes { $0.baseAddress }
  }

  func testDecodingIntoASparePictureGivesTheFreshPictureAndNeverChangesAKeptOne() throws {
    let frames = try Self.encodedFrames()
    let fresh = try VP8Decoder()
    let reusing = try VP8Decoder()
    var random = SplitMix64(seed: 0x5EED_F4A3)
    var spare: VideoFrame?
    // Pictures a "renderer" kept (sharing planes with a spare handed back), with the fresh
    // decode of the same frame.
    var kept: [(picture: VideoFrame, expected: VideoFrame)] = []
    var inPlace = 0
    var copiedFromShared = 0
    var foreign = 0
    for (index, bytes) in frames.enumerated() {
      let expected = try XCTUnwrap(
        try bytes.withUnsafeBufferPointer { bytes throws(VP8Error) in
          try fresh.decodeVideoFrame(bytes)
        }, "frame \(index)")
      let spareY = spare.flatMap { Self.baseAddress($0.dataY) }
      let spareShared = kept.last.map { Self.baseAddress($0.picture.dataY) == spareY } ?? false
      let spareFits =
        spare.map {
          $0.width == expected.width && $0.height == expected.height && $0.strideY == $0.width
        }
        ?? false
      let picture = try XCTUnwrap(
        try bytes.withUnsafeBufferPointer { bytes throws(VP8Error) in
          try reusing.decodeVideoFrame(bytes, reusing: &spare)
        }, "frame \(index)")
      XCTAssertNil(spare, "frame \(index): the spare is taken")
      XCTAssertEqual(picture, expected, "frame \(index)")
      XCTAssertEqual(picture.timestampNs, 0)
      XCTAssertTrue(picture.isValid)
      if spareFits {
        if spareShared {
          XCTAssertNotEqual(Self.baseAddress(picture.dataY), spareY, "frame \(index)")
          copiedFromShared += 1
        } else {
          XCTAssertEqual(Self.baseAddress(picture.dataY), spareY, "frame \(index): in place")
          inPlace += 1
        }
      }
      // What the "renderer" does with it: drops it (the usual case), keeps a copy, or the
      // caller hands back nothing, or a picture the decoder did not make.
      switch Int.random(in: 0..<8, using: &random) {
      case 0, 1:
        kept.append((picture, expected))
        spare = picture
      case 2:
        spare = nil
      case 3:
        // Padded rows: another layout than the decoder's; never written into.
        spare = .padded(like: picture, rowPadding: 16, chromaPadding: 8, timestampNs: 5)
        foreign += 1
      default:
        spare = picture
      }
    }
    for (number, entry) in kept.enumerated() {
      XCTAssertEqual(entry.picture, entry.expected, "kept picture \(number) changed")
    }
    XCTAssertGreaterThan(inPlace, 15)
    XCTAssertGreaterThan(copiedFromShared, 3)
    XCTAssertGreaterThan(foreign, 0)
    XCTAssertGreaterThan(kept.count, 5)

    // A frame libvpx rejects: the error of the fresh decode, and the spare stays for the next.
    spare = VideoFrame(width: 64, height: 48)
    let garbage: [UInt8] = [0x00, 0x01, 0x02, 0x03, 0x04, 0x05]
    var freshError: VP8Error?
    do {
      _ = try garbage.withUnsafeBufferPointer { bytes throws(VP8Error) in
        try VP8Decoder().decodeVideoFrame(bytes)
      }
    } catch { freshError = error }
    var reusingError: VP8Error?
    do {
      _ = try garbage.withUnsafeBufferPointer { bytes throws(VP8Error) in
        try VP8Decoder().decodeVideoFrame(bytes, reusing: &spare)
      }
    } catch { reusingError = error }
    XCTAssertNotNil(freshError)
    XCTAssertEqual(reusingError.map { "\($0)" }, freshError.map { "\($0)" })
    XCTAssertEqual(spare, VideoFrame(width: 64, height: 48))
  }
}

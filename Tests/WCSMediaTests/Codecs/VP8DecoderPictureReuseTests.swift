import Foundation
import TestSupport
import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSMedia
@testable import WCSMediaSeam

/// VP8 frames of pictures that change size in the middle of the stream (odd sizes, and sizes so
/// small that a plane fits inside a `Data` value without storage), for the picture reuse tests.
enum SizeChangingVP8Source {
  /// The encoded frames of `segments` (a new encoder each, so each begins with a key frame),
  /// 90 kHz timestamps 3000 apart across the segments. Sizes below the virtual camera's
  /// (64x32) get seeded noise pictures.
  static func encode(_ segments: [(width: Int, height: Int, frames: Int)], seed: UInt64) throws
    -> [EncodedVideoFrame]
  {
    var random = SplitMix64(seed: seed)
    var encoded: [EncodedVideoFrame] = []
    var index = 0
    for segment in segments {
      let encoder = try VP8Encoder(
        configuration: .init(
          width: segment.width, height: segment.height, frameRate: 30, bitrateKbps: 250))
      let camera = VirtualCamera(width: segment.width, height: segment.height, frameRate: 30)
      for frame in 0..<segment.frames {
        let picture: I420Image
        if segment.width >= 64, segment.height >= 32 {
          picture = camera.frame(frame)
        } else {
          let chroma = ((segment.width + 1) / 2) * ((segment.height + 1) / 2)
          func noise(_ count: Int) -> [UInt8] {
            (0..<count).map { _ in UInt8.random(in: 16...235, using: &random) }
          }
          picture = try XCTUnwrap(
            I420Image(
              width: segment.width, height: segment.height,
              y: noise(segment.width * segment.height), strideY: segment.width, u: noise(chroma),
              strideU: (segment.width + 1) / 2, v: noise(chroma), strideV: (segment.width + 1) / 2))
        }
        encoded += try encoder.encode(picture, timestamp: UInt32(index) * 3000)
        index += 1
      }
    }
    return encoded
  }
}

/// Attacks on `VP8Decoder.decodeVideoFrame(_:reusing:)`: a decoder writing each picture into
/// the spare handed back against a fresh decoder on the same bytes, through size changes (odd
/// sizes such as 161x121, tiny ones such as 7x3 and 2x2 whose planes live inside the `Data`
/// value), corrupted and truncated frames, and spares that are not the decoder's (padded rows,
/// planes too long, a plane that is a slice of a larger buffer, a picture the "renderer" still
/// holds). The "renderer" keeps pictures in every way it may: the whole frame, a copy inside
/// another struct, one plane's `Data`, a slice of one, that plane bridged to `NSData`, and its
/// own copy that it changes (kept or dropped). Every picture equals the fresh one, every error
/// the fresh one's; nothing kept ever changes.
final class VP8DecoderPictureReuseTests: XCTestCase {
  private struct Holder {
    var frame: VideoFrame
    var note = 0
  }

  /// Something the "renderer" kept, with the bytes it must still hold at the end.
  private enum Kept {
    case frame(VideoFrame, expected: VideoFrame)
    case holder(Holder, expected: VideoFrame)
    case plane(Data, expected: [UInt8])
    case bridged(NSData, expected: [UInt8])
  }

  private static func decode(
    _ decoder: VP8Decoder, _ bytes: [UInt8], reusing spare: inout VideoFrame?, reuse: Bool
  ) -> (picture: VideoFrame?, error: String?) {
    do {
      let picture = try bytes.withUnsafeBufferPointer { bytes throws(VP8Error) -> VideoFrame? in
        if reuse { return try decoder.decodeVideoFrame(bytes, reusing: &spare) }
        return try decoder.decodeVideoFrame(bytes)
      }
      return (picture, nil)
    } catch {
      return (nil, "\(error)")
    }
  }

  private static func baseAddress(_ data: Data) -> UnsafeRawPointer? {
    data.withUnsafeBytes { $0.baseAddress }
  }

  /// A picture with planes of its own (nothing shared with `frame`).
  private static func deepCopy(_ frame: VideoFrame) -> VideoFrame {
    VideoFrame(
      width: frame.width, height: frame.height, dataY: Data([UInt8](frame.dataY)),
      dataU: Data([UInt8](frame.dataU)), dataV: Data([UInt8](frame.dataV)),
      strideY: frame.strideY, strideU: frame.strideU, strideV: frame.strideV,
      timestampNs: frame.timestampNs)
  }

  /// What the mutating "renderer" does to its own copy.
  private static func scribble(_ frame: inout VideoFrame) {
    frame.dataY.withUnsafeMutableBytes { bytes in
      for index in bytes.indices { bytes[index] = 0x5A }
    }
    if !frame.dataV.isEmpty { frame.dataV[frame.dataV.startIndex] ^= 0xFF }
    frame.timestampNs = -1
  }

  func testKeptPicturesAndPlanesNeverChangeThroughSizeChangesCorruptionAndForeignSpares() throws {
    let frames = try SizeChangingVP8Source.encode(
      [
        (161, 121, 14), (160, 120, 6), (7, 3, 8), (161, 121, 10), (2, 2, 6), (161, 121, 4),
        (96, 64, 8),
      ], seed: 0x0DD5_17E5)
    var random = SplitMix64(seed: 0x4EC7_C1E4)
    var totals = (
      pictures: 0, errors: 0, inPlace: 0, copiedShared: 0, foreign: 0, tiny: 0, kept: 0
    )
    for pass in 0..<3 {
      let fresh = try VP8Decoder()
      let reusing = try VP8Decoder()
      var spare: VideoFrame?
      // Whether the spare's luma storage is held elsewhere too.
      var spareShared = false
      var kept: [Kept] = []
      var previous: VideoFrame?
      for (index, encoded) in frames.enumerated() {
        let context = "pass \(pass), frame \(index)"
        var bytes = encoded.data
        // Now and then a damaged frame, the same bytes for both decoders: cut short, or (a
        // delta frame: a key frame's size field changed could ask for a huge picture) with
        // bytes flipped.
        if index > 0, random.chance(0.06) {
          if encoded.isKeyFrame || Bool.random(using: &random) {
            bytes = Array(bytes.prefix(Int.random(in: 1...max(1, bytes.count / 2), using: &random)))
          } else {
            for _ in 0..<3 {
              let at = Int.random(in: 0..<bytes.count, using: &random)
              bytes[at] ^= UInt8.random(in: 1...255, using: &random)
            }
          }
        }
        var none: VideoFrame?
        let expected = Self.decode(fresh, bytes, reusing: &none, reuse: false)
        let spareBefore = spare.map(Self.deepCopy)
        let spareY = spare.flatMap { Self.baseAddress($0.dataY) }
        // A foreign spare whose luma plane is a slice of a larger buffer does not fit: the
        // picture gets planes of its own, starting at index 0.
        let fits =
          spare.map {
            $0.dataY.startIndex == 0 && $0.dataU.startIndex == 0 && $0.dataV.startIndex == 0
              && $0.width == expected.picture?.width && $0.height == expected.picture?.height
              && $0.strideY == $0.width && $0.strideU == $0.chromaWidth
              && $0.dataY.count == $0.width * $0.height
              && $0.dataU.count == $0.chromaWidth * $0.chromaHeight
              && $0.dataV.count == $0.chromaWidth * $0.chromaHeight
          } ?? false
        let got = Self.decode(reusing, bytes, reusing: &spare, reuse: true)
        XCTAssertEqual(got.error, expected.error, context)
        guard let picture = got.picture else {
          XCTAssertNil(expected.picture, context)
          // No picture: the spare is left as it was.
          XCTAssertEqual(spare.map(Self.deepCopy), spareBefore, context)
          if expected.error != nil { totals.errors += 1 }
          continue
        }
        XCTAssertNil(spare, "\(context): the spare is taken")
        XCTAssertEqual(picture, expected.picture, context)
        XCTAssertEqual(picture.timestampNs, 0, context)
        XCTAssertTrue(picture.isValid, context)
        XCTAssertEqual(picture.dataY.startIndex, 0, context)
        XCTAssertEqual(picture.dataU.startIndex, 0, context)
        XCTAssertEqual(picture.dataV.startIndex, 0, context)
        totals.pictures += 1
        if picture.dataY.count < 64 { totals.tiny += 1 }
        // Addresses only for planes with storage of their own (not inside the `Data` value).
        if fits, picture.dataY.count >= 64 {
          if spareShared {
            XCTAssertNotEqual(Self.baseAddress(picture.dataY), spareY, "\(context): copied")
            totals.copiedShared += 1
          } else {
            XCTAssertEqual(Self.baseAddress(picture.dataY), spareY, "\(context): in place")
            totals.inPlace += 1
          }
        }
        let wanted = expected.picture ?? picture
        // Whether the picture's luma storage is held elsewhere once the "renderer" is done.
        var pictureShared = false
        // What the "renderer" does with it.
        switch Int.random(in: 0..<12, using: &random) {
        case 0:
          kept.append(.frame(picture, expected: wanted))
          pictureShared = true
        case 1:
          kept.append(.holder(Holder(frame: picture, note: index), expected: wanted))
          pictureShared = true
        case 2:
          kept.append(.plane(picture.dataU, expected: [UInt8](wanted.dataU)))
        case 3:
          if picture.dataY.count > 2 {
            kept.append(
              .plane(
                picture.dataY[(picture.dataY.startIndex + 1)..<(picture.dataY.endIndex - 1)],
                expected: Array([UInt8](wanted.dataY).dropFirst().dropLast())))
            pictureShared = true
          }
        case 4:
          kept.append(
            .bridged(picture.dataV._bridgeToObjectiveC(), expected: [UInt8](wanted.dataV)))
        case 5:
          // Its own copy, changed and kept, and the picture it got kept as well.
          var mine = picture
          Self.scribble(&mine)
          var mineExpected = wanted
          Self.scribble(&mineExpected)
          kept.append(.frame(mine, expected: mineExpected))
          kept.append(.frame(picture, expected: wanted))
          pictureShared = true
        case 6:
          // Its own copy, changed and dropped.
          var mine = picture
          Self.scribble(&mine)
          XCTAssertNotEqual(mine, picture, context)
        default:
          break
        }
        kept.append(.frame(Self.deepCopy(picture), expected: wanted))
        if Int.random(in: 0..<5, using: &random) == 0 {
          previous = picture
          kept.append(.frame(picture, expected: wanted))
          pictureShared = true
        }
        spareShared = false
        // What is handed back for the next picture.
        switch Int.random(in: 0..<14, using: &random) {
        case 0:
          spare = nil
        case 1:
          // Padded rows: another layout, never written into.
          spare = .padded(like: picture, rowPadding: 3, chromaPadding: 5, timestampNs: 9)
          totals.foreign += 1
        case 2:
          // Tight strides but planes longer than the picture: not the decoder's layout.
          var long = picture
          long.dataY.append(contentsOf: [1, 2, 3])
          spare = long
          totals.foreign += 1
        case 3:
          // The luma plane a slice in the middle of a larger buffer (a foreign picture).
          var sliced = picture
          let buffer = Data(repeating: 7, count: picture.dataY.count + 200)
          sliced.dataY = buffer[100..<(100 + picture.dataY.count)]
          spare = sliced
          totals.foreign += 1
        case 4:
          // A picture kept before (by the renderer): shared, never written.
          if let previous {
            spare = previous
            spareShared = true
          } else {
            spare = picture
            spareShared = pictureShared
          }
        default:
          spare = picture
          spareShared = pictureShared
        }
      }
      for (number, entry) in kept.enumerated() {
        let context = "pass \(pass): kept \(number) changed"
        switch entry {
        case .frame(let frame, let expected):
          XCTAssertTrue(frame == expected, context)
        case .holder(let holder, let expected):
          XCTAssertTrue(holder.frame == expected, context)
        case .plane(let data, let expected):
          XCTAssertTrue([UInt8](data) == expected, context)
        case .bridged(let data, let expected):
          XCTAssertTrue([UInt8](Data(bytes: data.bytes, count: data.length)) == expected, context)
        }
      }
      totals.kept += kept.count
    }
    print("decoder picture reuse: \(totals)")
    XCTAssertGreaterThan(totals.pictures, 100)
    XCTAssertGreaterThan(totals.errors, 3)
    XCTAssertGreaterThan(totals.inPlace, 20)
    XCTAssertGreaterThan(totals.copiedShared, 10)
    XCTAssertGreaterThan(totals.foreign, 10)
    XCTAssertGreaterThan(totals.tiny, 20)
  }
}

import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSMedia
@testable import WCSProtocols

final class VP8PictureLimitTests: XCTestCase {
  func keyFrame() throws -> EncodedVideoFrame {
    let encoder = try VP8Encoder(
      configuration: .init(width: 320, height: 240, frameRate: 30, bitrateKbps: 300))
    return try XCTUnwrap(
      try encoder.encode(VirtualCamera(width: 320, height: 240).frame(0), timestamp: 0).first)
  }

  /// The key frame with its RFC 6386 §9.1 size fields rewritten.
  func forged(_ frame: [UInt8], width: Int, height: Int) -> [UInt8] {
    var bytes = frame
    bytes[6] = UInt8(width & 0xFF)
    bytes[7] = UInt8(width >> 8)
    bytes[8] = UInt8(height & 0xFF)
    bytes[9] = UInt8(height >> 8)
    return bytes
  }

  func testForgedKeyFrameOf16383SquaredIsRefusedBeforeLibvpx() throws {
    let key = try keyFrame()
    XCTAssertEqual(
      key.data.withUnsafeBufferPointer { VP8KeyFrameHeader.pictureSize($0)?.width }, 320)
    let decoder = try VP8Decoder()
    XCTAssertThrowsError(try decoder.decode(forged(key.data, width: 16383, height: 16383))) {
      XCTAssertEqual(($0 as? VP8Error)?.reason, .pictureTooLarge, "\($0)")
    }
    // Each side and the area are bounded: 4097 wide, or 4096×4096 (16.8 Mpixel).
    for (width, height) in [(4097, 16), (4096, 4096)] {
      XCTAssertThrowsError(try decoder.decode(forged(key.data, width: width, height: height))) {
        XCTAssertEqual(($0 as? VP8Error)?.reason, .pictureTooLarge, "\(width)x\(height)")
      }
    }
    // The decoder is untouched: the real key frame decodes at its size.
    let picture = try XCTUnwrap(try decoder.decode(key.data))
    XCTAssertEqual(picture.width, 320)
    // A tighter configured limit refuses the real frame too.
    let small = try VP8Decoder(
      pictureLimit: VP8PictureLimit(maximumDimension: 160, maximumPixels: 1 << 20))
    XCTAssertThrowsError(try small.decode(key.data)) {
      XCTAssertEqual(($0 as? VP8Error)?.reason, .pictureTooLarge)
    }
  }

  func testReceiverCountsTheRefusalAndAsksForAKeyFrame() throws {
    let key = try keyFrame()
    let receiver = try VideoDecodePipeline.decodingI420()
    var packetizer = VP8Packetizer()
    let bad = EncodedVideoFrame(
      data: forged(key.data, width: 16383, height: 16383), isKeyFrame: true, timestamp: 0)
    var sequence: UInt16 = 100
    let start = MediaInstant.now()
    func packets(_ frame: EncodedVideoFrame) -> [ReceivedRTPPacket] {
      packetizer.packetize(frame).map { payload in
        defer { sequence &+= 1 }
        return ReceivedRTPPacket(
          packet: RTPPacket(
            header: RTPHeader(
              marker: payload.marker, payloadType: 96, sequenceNumber: sequence,
              timestamp: payload.timestamp, ssrc: 5),
            payload: payload.payload),
          arrival: start)
      }
    }
    let refused = receiver.handle(packets(bad), now: start)
    XCTAssertTrue(refused.needsKeyFrame)
    XCTAssertEqual(refused.frames.count, 0)
    XCTAssertEqual(receiver.statistics.oversizedKeyFrames, 1)
    XCTAssertEqual(receiver.statistics.decodeErrors, 1)
    let good = EncodedVideoFrame(data: key.data, isKeyFrame: true, timestamp: 3000)
    let output = receiver.handle(packets(good), now: start + .milliseconds(33))
    XCTAssertEqual(output.frames.map(\.picture.width), [320])
  }
}

import CWebRTCCore
import XCTest

@testable import WCSCodecs
@testable import WCSMedia

/// The previous `OpusDecoder.run` (3471750), on a decoder of its own, as the reference: libopus
/// into a new zero-filled array of `frameSize * channels` per call, cut to the decoded prefix.
final class ZeroFilledOpusDecoder {
  let channels: Int
  private let decoder: OpaquePointer

  init(channels: Int) throws {
    var error: Int32 = 0
    let made = try XCTUnwrap(opus_decoder_create(48_000, Int32(channels), &error))
    XCTAssertEqual(error, OPUS_OK)
    decoder = made
    self.channels = channels
  }

  deinit { opus_decoder_destroy(decoder) }

  /// What an `OpusDecoder` call gave, in the form `run` gives it: the samples, or the error.
  static func result(_ body: () throws(OpusError) -> PCMAudioFrame) -> Result<[Int16], OpusError> {
    do throws(OpusError) {
      return .success(try body().samples)
    } catch {
      return .failure(error)
    }
  }

  /// A packet as `OpusDecoder.decode(_:)` does, or (nil) concealment of `lostSamples`.
  func decode(_ packet: [UInt8]?, lostSamples: Int = 960) -> Result<[Int16], OpusError> {
    run(packet, frameSize: packet == nil ? lostSamples : OpusDecoder.maxFrameSize, fec: false)
  }

  /// The FEC data in `packet`, as `OpusDecoder.decodeFEC(_:frameSize:)` does.
  func decodeFEC(_ packet: [UInt8], frameSize: Int) -> Result<[Int16], OpusError> {
    run(packet, frameSize: frameSize, fec: true)
  }

  /// One `opus_decode` of at most `frameSize` (clamped to 120...5760) samples per channel;
  /// an empty packet is refused as `OpusDecoder` refuses it.
  func run(_ packet: [UInt8]?, frameSize: Int, fec: Bool) -> Result<[Int16], OpusError> {
    if let packet, packet.isEmpty { return .failure(OpusError(invalidInput: "empty packet")) }
    let size = min(max(frameSize, 120), OpusDecoder.maxFrameSize)
    var pcm = [Int16](repeating: 0, count: size * channels)
    let decoded = pcm.withUnsafeMutableBufferPointer { out -> Int32 in
      guard let output = out.baseAddress else { return OPUS_BAD_ARG }
      guard let packet else { return opus_decode(decoder, nil, 0, output, Int32(size), 0) }
      return packet.withUnsafeBufferPointer {
        opus_decode(decoder, $0.baseAddress, Int32($0.count), output, Int32(size), fec ? 1 : 0)
      }
    }
    guard decoded >= 0 else { return .failure(OpusError(.decode, code: decoded)) }
    return .success(Array(pcm.prefix(Int(decoded) * channels)))
  }
}

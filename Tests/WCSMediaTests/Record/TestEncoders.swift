import CWebRTCCore
import Foundation
import XCTest

/// A libvpx VP8 encoder for tests: encodes a moving gradient, one frame per call.
final class TestVP8Encoder {
  private var codec = vpx_codec_ctx_t()
  private let image: UnsafeMutablePointer<vpx_image_t>
  private let width: Int
  private let height: Int
  private var frameIndex: Int64 = 0

  init(width: Int, height: Int, framesPerSecond: Int) throws {
    self.width = width
    self.height = height
    let iface = try XCTUnwrap(vpx_codec_vp8_cx())
    var config = vpx_codec_enc_cfg_t()
    XCTAssertEqual(vpx_codec_enc_config_default(iface, &config, 0), VPX_CODEC_OK)
    config.g_w = UInt32(width)
    config.g_h = UInt32(height)
    config.g_timebase = vpx_rational(num: 1, den: Int32(framesPerSecond))
    config.rc_target_bitrate = 300
    config.g_lag_in_frames = 0
    config.kf_max_dist = 1000
    XCTAssertEqual(wcs_vpx_codec_enc_init(&codec, iface, &config, 0), VPX_CODEC_OK)
    image = try XCTUnwrap(vpx_img_alloc(nil, VPX_IMG_FMT_I420, UInt32(width), UInt32(height), 1))
  }

  deinit {
    vpx_codec_destroy(&codec)
    vpx_img_free(image)
  }

  /// Encodes the next frame; returns the VP8 frames libvpx produced (one, in real-time mode).
  func encodeNext(forceKeyFrame: Bool = false) throws -> [(bytes: [UInt8], isKeyFrame: Bool)] {
    fill(frame: Int(frameIndex))
    let flags: vpx_enc_frame_flags_t = forceKeyFrame ? vpx_enc_frame_flags_t(VPX_EFLAG_FORCE_KF) : 0
    XCTAssertEqual(
      vpx_codec_encode(&codec, image, frameIndex, 1, flags, UInt(VPX_DL_REALTIME)), VPX_CODEC_OK)
    frameIndex += 1
    var frames: [(bytes: [UInt8], isKeyFrame: Bool)] = []
    var iterator: vpx_codec_iter_t?
    while let packet = vpx_codec_get_cx_data(&codec, &iterator) {
      guard packet.pointee.kind == VPX_CODEC_CX_FRAME_PKT else { continue }
      let frame = packet.pointee.data.frame
      let bytes = try XCTUnwrap(frame.buf).assumingMemoryBound(to: UInt8.self)
      frames.append(
        (
          Array(UnsafeBufferPointer(start: bytes, count: frame.sz)),
          frame.flags & vpx_codec_frame_flags_t(VPX_FRAME_IS_KEY) != 0
        ))
    }
    return frames
  }

  private func fill(frame: Int) {
    let planes = [image.pointee.planes.0, image.pointee.planes.1, image.pointee.planes.2]
    let strides = [image.pointee.stride.0, image.pointee.stride.1, image.pointee.stride.2]
    for plane in 0..<3 {
      guard let base = planes[plane] else { continue }
      let planeWidth = plane == 0 ? width : (width + 1) / 2
      let planeHeight = plane == 0 ? height : (height + 1) / 2
      for row in 0..<planeHeight {
        let line = base + row * Int(strides[plane])
        for column in 0..<planeWidth {
          line[column] = UInt8(truncatingIfNeeded: column + row + frame * 4 + plane * 64)
        }
      }
    }
  }
}

/// A libopus encoder for tests: 20 ms packets of a sine tone at 48 kHz.
final class TestOpusEncoder {
  private let encoder: OpaquePointer
  private let channels: Int
  private let frequency: Double
  private var sampleIndex = 0

  init(channels: Int, frequency: Double) throws {
    var error: Int32 = 0
    encoder = try XCTUnwrap(
      opus_encoder_create(48_000, Int32(channels), OPUS_APPLICATION_AUDIO, &error))
    XCTAssertEqual(error, OPUS_OK)
    self.channels = channels
    self.frequency = frequency
  }

  deinit { opus_encoder_destroy(encoder) }

  /// Encodes the next 960 samples per channel of the tone.
  func encodeNext() throws -> [UInt8] {
    var pcm = [Int16](repeating: 0, count: 960 * channels)
    for index in 0..<960 {
      let time = Double(sampleIndex + index) / 48_000
      let value = Int16(8000 * sin(2 * Double.pi * frequency * time))
      for channel in 0..<channels { pcm[index * channels + channel] = value }
    }
    sampleIndex += 960
    var output = [UInt8](repeating: 0, count: 4000)
    let length = opus_encode(encoder, pcm, 960, &output, Int32(output.count))
    XCTAssertGreaterThan(length, 0)
    return Array(output.prefix(Int(max(length, 0))))
  }
}

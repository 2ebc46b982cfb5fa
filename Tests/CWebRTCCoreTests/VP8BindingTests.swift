import CWebRTCCore
import XCTest

/// libvpx VP8 through CWebRTCCore: a 640x480 I420 sequence encoded with realtime settings decodes
/// back close to the source.
final class VP8BindingTests: XCTestCase {
  private let width = 640
  private let height = 480
  private let frameCount = 30

  func testRealtimeEncodeDecodeKeepsPSNRAbove30dB() throws {
    var config = vpx_codec_enc_cfg_t()
    let configStatus = vpx_codec_enc_config_default(vpx_codec_vp8_cx(), &config, 0)
    guard configStatus == VPX_CODEC_OK else {
      throw BindingTestError.cCall("vpx_codec_enc_config_default", code: Int(configStatus.rawValue))
    }
    config.g_w = UInt32(width)
    config.g_h = UInt32(height)
    config.g_timebase = vpx_rational(num: 1, den: 30)
    config.rc_target_bitrate = 1000
    config.rc_end_usage = VPX_CBR
    config.g_lag_in_frames = 0
    config.g_threads = 1
    config.rc_dropframe_thresh = 0
    config.g_error_resilient = vpx_codec_er_flags_t(VPX_ERROR_RESILIENT_DEFAULT)
    config.kf_max_dist = 3000

    var encoder = vpx_codec_ctx_t()
    let encoderStatus = wcs_vpx_codec_enc_init(&encoder, vpx_codec_vp8_cx(), &config, 0)
    guard encoderStatus == VPX_CODEC_OK else {
      throw BindingTestError.cCall("wcs_vpx_codec_enc_init", code: Int(encoderStatus.rawValue))
    }
    defer { vpx_codec_destroy(&encoder) }
    // Realtime speed as WebRTC uses it on desktop.
    XCTAssertEqual(
      wcs_vpx_codec_control_int(&encoder, Int32(VP8E_SET_CPUUSED.rawValue), -6), VPX_CODEC_OK)
    XCTAssertEqual(
      wcs_vpx_codec_control_int(&encoder, Int32(VP8E_SET_NOISE_SENSITIVITY.rawValue), 0),
      VPX_CODEC_OK)

    var decoder = vpx_codec_ctx_t()
    let decoderStatus = wcs_vpx_codec_dec_init(&decoder, vpx_codec_vp8_dx(), nil, 0)
    guard decoderStatus == VPX_CODEC_OK else {
      throw BindingTestError.cCall("wcs_vpx_codec_dec_init", code: Int(decoderStatus.rawValue))
    }
    defer { vpx_codec_destroy(&decoder) }

    guard let image = vpx_img_alloc(nil, VPX_IMG_FMT_I420, UInt32(width), UInt32(height), 16)
    else { throw BindingTestError.cCall("vpx_img_alloc", code: 0) }
    defer { vpx_img_free(image) }

    let sources = (0..<frameCount).map(makeFrame)
    var psnrs: [Double] = []
    var mismatchedPSNRs: [Double] = []
    var keyFrameFlags: [Bool] = []
    for (index, source) in sources.enumerated() {
      fill(image, with: source)
      let encodeStatus = vpx_codec_encode(
        &encoder, image, vpx_codec_pts_t(index), 1, 0, UInt(VPX_DL_REALTIME))
      XCTAssertEqual(encodeStatus, VPX_CODEC_OK, "encode frame \(index)")

      var iterator: vpx_codec_iter_t?
      var packets = 0
      while let packet = vpx_codec_get_cx_data(&encoder, &iterator) {
        guard packet.pointee.kind == VPX_CODEC_CX_FRAME_PKT else { continue }
        packets += 1
        let frame = packet.pointee.data.frame
        keyFrameFlags.append(frame.flags & vpx_codec_frame_flags_t(VPX_FRAME_IS_KEY) != 0)
        let decodeStatus = vpx_codec_decode(
          &decoder, frame.buf.assumingMemoryBound(to: UInt8.self), UInt32(frame.sz), nil, 0)
        XCTAssertEqual(decodeStatus, VPX_CODEC_OK, "decode frame \(index)")
        var corrupted: Int32 = 1
        XCTAssertEqual(wcs_vpx_decoder_frame_corrupted(&decoder, &corrupted), VPX_CODEC_OK)
        XCTAssertEqual(corrupted, 0, "frame \(index) corrupted")

        var frameIterator: vpx_codec_iter_t?
        var decodedFrames = 0
        while let decoded = vpx_codec_get_frame(&decoder, &frameIterator) {
          decodedFrames += 1
          XCTAssertEqual(Int(decoded.pointee.d_w), width)
          XCTAssertEqual(Int(decoded.pointee.d_h), height)
          let luma = lumaPlane(of: decoded)
          psnrs.append(SignalAnalysis.psnr(source: source.y, decoded: luma))
          let other = sources[(index + frameCount / 2) % frameCount]
          mismatchedPSNRs.append(SignalAnalysis.psnr(source: other.y, decoded: luma))
        }
        XCTAssertEqual(decodedFrames, 1, "decoded pictures for frame \(index)")
      }
      XCTAssertEqual(packets, 1, "no lag and no drops: one packet per frame \(index)")
    }

    XCTAssertEqual(psnrs.count, frameCount)
    XCTAssertEqual(keyFrameFlags.first, true, "the first frame is a key frame")
    XCTAssertEqual(keyFrameFlags.dropFirst().filter { $0 }.count, 0, "later frames are inter")
    for (index, psnr) in psnrs.enumerated() {
      XCTAssertGreaterThanOrEqual(psnr, 30, "Y PSNR of frame \(index)")
    }
    let mean = psnrs.reduce(0, +) / Double(max(1, psnrs.count))
    XCTAssertGreaterThanOrEqual(mean, 30, "mean Y PSNR")
    // The measure tells pictures apart: against another frame of the sequence it is far lower,
    // so a decoder repeating or lagging frames would fail.
    for (index, pair) in zip(psnrs, mismatchedPSNRs).enumerated() {
      XCTAssertLessThan(pair.1, pair.0 - 10, "frame \(index) against frame +\(frameCount / 2)")
    }
    XCTAssertGreaterThan(Set(sources[0].y).count, 200, "the source uses the full luma range")
  }

  // MARK: Helpers

  private struct Frame {
    var y: [UInt8]
    var u: [UInt8]
    var v: [UInt8]
  }

  /// A diagonal triangle-wave gradient moving 4 px per frame plus a bright square moving across.
  private func makeFrame(_ index: Int) -> Frame {
    var y = [UInt8](repeating: 0, count: width * height)
    let squareX = 40 + index * 12
    let squareY = 100 + index * 4
    for row in 0..<height {
      for column in 0..<width {
        let phase = (column / 2 + row / 3 + 4 * index) % 510
        var luma = phase < 256 ? phase : 509 - phase
        if (squareX..<squareX + 64).contains(column) && (squareY..<squareY + 64).contains(row) {
          luma = 235
        }
        y[row * width + column] = UInt8(clamping: luma)
      }
    }
    let chromaWidth = width / 2
    let chromaHeight = height / 2
    var u = [UInt8](repeating: 0, count: chromaWidth * chromaHeight)
    var v = [UInt8](repeating: 0, count: chromaWidth * chromaHeight)
    for row in 0..<chromaHeight {
      for column in 0..<chromaWidth {
        u[row * chromaWidth + column] = UInt8(64 + (column + 2 * index) % 128)
        v[row * chromaWidth + column] = UInt8(64 + row % 128)
      }
    }
    return Frame(y: y, u: u, v: v)
  }

  private func fill(_ image: UnsafeMutablePointer<vpx_image_t>, with frame: Frame) {
    copy(
      frame.y, width: width, height: height, into: image.pointee.planes.0, image.pointee.stride.0)
    copy(
      frame.u, width: width / 2, height: height / 2, into: image.pointee.planes.1,
      image.pointee.stride.1)
    copy(
      frame.v, width: width / 2, height: height / 2, into: image.pointee.planes.2,
      image.pointee.stride.2)
  }

  private func copy(
    _ plane: [UInt8], width: Int, height: Int, into destination: UnsafeMutablePointer<UInt8>?,
    _ stride: Int32
  ) {
    guard let destination else { return }
    plane.withUnsafeBufferPointer { source in
      for row in 0..<height {
        guard let sourceRow = source.baseAddress?.advanced(by: row * width) else { return }
        (destination + row * Int(stride)).update(from: sourceRow, count: width)
      }
    }
  }

  private func lumaPlane(of image: UnsafeMutablePointer<vpx_image_t>) -> [UInt8] {
    guard let plane = image.pointee.planes.0 else { return [] }
    let stride = Int(image.pointee.stride.0)
    var luma = [UInt8](repeating: 0, count: width * height)
    luma.withUnsafeMutableBufferPointer { destination in
      for row in 0..<height {
        guard let destinationRow = destination.baseAddress?.advanced(by: row * width) else {
          return
        }
        destinationRow.update(from: plane + row * stride, count: width)
      }
    }
    return luma
  }
}

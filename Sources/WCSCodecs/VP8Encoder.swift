import CVPX

/// Real-time VP8 encoder (libvpx) with WebRTC settings: CBR rate control, no lag (every input picture
/// gives its output immediately), error-resilient mode, automatic key frames with a maximum
/// interval, one token partition.
///
/// Not thread-safe: use one encoder from one thread (or behind the caller's lock).
public final class VP8Encoder {
  /// Settings of an encoder.
  public struct Configuration: Sendable, Equatable {
    /// Picture width in pixels (even values recommended).
    public var width: Int
    /// Picture height in pixels.
    public var height: Int
    /// Frames per second the caller feeds; sets the time base for rate control.
    public var frameRate: Int
    /// Target bitrate in kilobits per second (`rc_target_bitrate`).
    public var bitrateKbps: Int
    /// Lowest quantizer index 0 ... 63 (`rc_min_quantizer`).
    public var minQuantizer: Int
    /// Highest quantizer index 0 ... 63 (`rc_max_quantizer`); WebRTC uses 56.
    public var maxQuantizer: Int
    /// Longest distance between key frames in frames (`kf_max_dist`).
    public var keyFrameInterval: Int
    /// Encoder threads, 1 or 2 (`g_threads`).
    public var threads: Int
    /// `VP8E_SET_CPUUSED`. In real-time mode a negative value -n means "speed n, without the
    /// automatic speed adaptation libvpx does for positive values", so the output depends only on the
    /// input (deterministic, which tests rely on). -6 is libwebrtc's choice for desktop CPUs; -16 is the
    /// fastest, lowest quality.
    public var cpuUsed: Int

    /// Defaults: 640x480 at 30 fps, 1000 kbps, quantizer 2 ... 56, a key frame at least every
    /// 3000 frames, 1 thread, cpuUsed -6.
    public init(
      width: Int = 640, height: Int = 480, frameRate: Int = 30, bitrateKbps: Int = 1000,
      minQuantizer: Int = 2, maxQuantizer: Int = 56, keyFrameInterval: Int = 3000, threads: Int = 1,
      cpuUsed: Int = -6
    ) {
      self.width = width
      self.height = height
      self.frameRate = frameRate
      self.bitrateKbps = bitrateKbps
      self.minQuantizer = minQuantizer
      self.maxQuantizer = maxQuantizer
      self.keyFrameInterval = keyFrameInterval
      self.threads = threads
      self.cpuUsed = cpuUsed
    }
  }

  /// The settings in force (bitrate follows `setBitrate`).
  public private(set) var configuration: Configuration
  private let context: UnsafeMutablePointer<vpx_codec_ctx_t>
  private var config: vpx_codec_enc_cfg_t
  private let image: UnsafeMutablePointer<vpx_image_t>
  private var frameCount: Int64 = 0
  private var forceKeyFrame = false

  /// Creates an encoder.
  /// - Throws: `VP8Error` (`.invalidInput` for a non-positive size or frame rate, `.initialization`
  ///   or `.configuration` when libvpx rejects the settings).
  public init(configuration: Configuration) throws(VP8Error) {
    guard configuration.width > 0, configuration.height > 0, configuration.width <= 16383,
      configuration.height <= 16383, configuration.frameRate > 0
    else {
      throw VP8Error(.invalidInput, message: "bad size or frame rate")
    }
    self.configuration = configuration
    var cfg = vpx_codec_enc_cfg_t()
    let iface = vpx_codec_vp8_cx()
    let defaults = vpx_codec_enc_config_default(iface, &cfg, 0)
    guard defaults == VPX_CODEC_OK else {
      throw VP8Error(.initialization, code: defaults, context: nil)
    }
    cfg.g_w = UInt32(configuration.width)
    cfg.g_h = UInt32(configuration.height)
    cfg.g_timebase = vpx_rational(num: 1, den: Int32(clamping: configuration.frameRate))
    cfg.g_threads = UInt32(min(max(configuration.threads, 1), 2))
    cfg.g_lag_in_frames = 0
    cfg.g_error_resilient = vpx_codec_er_flags_t(VPX_ERROR_RESILIENT_DEFAULT)
    cfg.g_pass = VPX_RC_ONE_PASS
    cfg.rc_end_usage = VPX_CBR
    cfg.rc_target_bitrate = UInt32(max(configuration.bitrateKbps, 1))
    cfg.rc_min_quantizer = UInt32(min(max(configuration.minQuantizer, 0), 63))
    cfg.rc_max_quantizer = UInt32(
      min(max(configuration.maxQuantizer, configuration.minQuantizer, 0), 63))
    cfg.rc_dropframe_thresh = 0
    cfg.rc_undershoot_pct = 100
    cfg.rc_overshoot_pct = 15
    cfg.rc_buf_initial_sz = 500
    cfg.rc_buf_optimal_sz = 600
    cfg.rc_buf_sz = 1000
    cfg.kf_mode = VPX_KF_AUTO
    cfg.kf_min_dist = 0
    cfg.kf_max_dist = UInt32(max(configuration.keyFrameInterval, 1))
    config = cfg

    context = .allocate(capacity: 1)
    context.initialize(to: vpx_codec_ctx_t())
    let initResult = wcs_vpx_codec_enc_init(context, iface, &cfg, 0)
    guard initResult == VPX_CODEC_OK else {
      let error = VP8Error(.initialization, code: initResult, context: context)
      context.deallocate()
      throw error
    }
    guard
      let made = vpx_img_alloc(
        nil, VPX_IMG_FMT_I420, UInt32(configuration.width), UInt32(configuration.height), 16)
    else {
      vpx_codec_destroy(context)
      context.deallocate()
      throw VP8Error(.initialization, message: "vpx_img_alloc failed")
    }
    image = made
    let controls: [(vp8e_enc_control_id, Int)] = [
      (VP8E_SET_CPUUSED, configuration.cpuUsed),
      (VP8E_SET_NOISE_SENSITIVITY, 0),
      (VP8E_SET_STATIC_THRESHOLD, 1),
      (VP8E_SET_TOKEN_PARTITIONS, Int(VP8_ONE_TOKENPARTITION.rawValue)),
      (VP8E_SET_MAX_INTRA_BITRATE_PCT, 300),
    ]
    for (id, value) in controls {
      let result = wcs_vpx_codec_control_int(context, Int32(id.rawValue), Int32(clamping: value))
      guard result == VPX_CODEC_OK else {
        let error = VP8Error(.configuration, code: result, context: context)
        vpx_img_free(image)
        vpx_codec_destroy(context)
        context.deallocate()
        throw error
      }
    }
  }

  deinit {
    vpx_img_free(image)
    vpx_codec_destroy(context)
    context.deallocate()
  }

  /// Changes the target bitrate (kbps) from the next frame on (`vpx_codec_enc_config_set`), e.g. after
  /// a REMB / transport-cc estimate.
  /// - Throws: `VP8Error.configuration` when libvpx rejects it.
  public func setBitrate(_ kbps: Int) throws(VP8Error) {
    config.rc_target_bitrate = UInt32(max(kbps, 1))
    let result = vpx_codec_enc_config_set(context, &config)
    guard result == VPX_CODEC_OK else {
      throw VP8Error(.configuration, code: result, context: context)
    }
    configuration.bitrateKbps = max(kbps, 1)
  }

  /// Makes the next encoded frame a key frame (`VPX_EFLAG_FORCE_KF`): the answer to a PLI or FIR.
  public func requestKeyFrame() {
    forceKeyFrame = true
  }

  /// Encodes one picture.
  /// - Parameters:
  ///   - picture: an I420 picture of the configured size.
  ///   - timestamp: 90 kHz RTP timestamp to stamp on the output (RFC 7741 §4.1).
  /// - Returns: the encoded frames (one per picture with these settings; empty if libvpx dropped it).
  /// - Throws: `VP8Error` (`.invalidInput` for a wrong size, `.encode` when libvpx fails).
  public func encode(_ picture: I420Image, timestamp: UInt32) throws(VP8Error)
    -> [EncodedVideoFrame]
  {
    guard picture.width == configuration.width, picture.height == configuration.height else {
      throw VP8Error(
        .invalidInput,
        message: "picture \(picture.width)x\(picture.height), encoder "
          + "\(configuration.width)x\(configuration.height)")
    }
    copy(picture)
    let flags: vpx_enc_frame_flags_t = forceKeyFrame ? vpx_enc_frame_flags_t(VPX_EFLAG_FORCE_KF) : 0
    forceKeyFrame = false
    let result = vpx_codec_encode(
      context, image, frameCount, 1, flags, UInt(VPX_DL_REALTIME))
    frameCount += 1
    guard result == VPX_CODEC_OK else { throw VP8Error(.encode, code: result, context: context) }
    var frames: [EncodedVideoFrame] = []
    var iterator: vpx_codec_iter_t? = nil
    while let packet = vpx_codec_get_cx_data(context, &iterator) {
      guard packet.pointee.kind == VPX_CODEC_CX_FRAME_PKT else { continue }
      let frame = packet.pointee.data.frame
      guard let buffer = frame.buf, frame.sz > 0 else { continue }
      let bytes = [UInt8](UnsafeRawBufferPointer(start: buffer, count: frame.sz))
      let isKey = frame.flags & vpx_codec_frame_flags_t(VPX_FRAME_IS_KEY) != 0
      frames.append(EncodedVideoFrame(data: bytes, isKeyFrame: isKey, timestamp: timestamp))
    }
    return frames
  }

  private func copy(_ picture: I420Image) {
    let img = image.pointee
    let planes = [img.planes.0, img.planes.1, img.planes.2]
    let strides = [Int(img.stride.0), Int(img.stride.1), Int(img.stride.2)]
    let sources = [
      (picture.y, picture.strideY, picture.width, picture.height),
      (picture.u, picture.strideU, picture.chromaWidth, picture.chromaHeight),
      (picture.v, picture.strideV, picture.chromaWidth, picture.chromaHeight),
    ]
    for index in 0..<3 {
      guard let destination = planes[index] else { continue }
      let (bytes, stride, width, rows) = sources[index]
      bytes.withUnsafeBufferPointer { source in
        guard let base = source.baseAddress else { return }
        for row in 0..<rows {
          (destination + row * strides[index]).update(from: base + row * stride, count: width)
        }
      }
    }
  }
}

import COpenH264

/// Real-time H.264 encoder (OpenH264) with WebRTC settings: constrained baseline (CAVLC, no B
/// pictures, one reference) or main / constrained high with CABAC (`Configuration.profile`), bitrate rate control without frame skipping, an IDR on request and
/// at most every `keyFrameInterval` pictures, SPS and PPS before every IDR. The output is the
/// byte stream of ITU-T H.264 Annex B, one access unit per picture.
///
/// Not thread-safe: use one encoder from one thread (or behind the caller's lock).
public final class H264Encoder {
  /// The profile of the stream (H.264 Annex A), as `profile-level-id` names it (RFC 6184
  /// §8.1). OpenH264 2.3.1 (Debian 12) writes main and high with CABAC entropy coding but uses
  /// none of high's other tools (no 8x8 transform: its SPS carries constraint_set4/5, i.e.
  /// progressive with no B pictures, "constrained high"); it makes no B pictures in any profile.
  public enum Profile: Sendable, Equatable {
    /// profile_idc 66 with constraint_set1 (`42e0xx`): CAVLC. What every WebRTC peer decodes.
    case constrainedBaseline
    /// profile_idc 77 (`4d..xx`): CABAC, fewer bits than CAVLC for the same pictures.
    case main
    /// profile_idc 100 with constraint_set4/5 (`640cxx`): CABAC.
    case constrainedHigh
  }

  /// Settings of an encoder.
  public struct Configuration: Sendable, Equatable {
    /// Picture width in pixels (even).
    public var width: Int
    /// Picture height in pixels (even).
    public var height: Int
    /// Frames per second the caller feeds, 1 ... 60.
    public var frameRate: Int
    /// Target bitrate in kilobits per second.
    public var bitrateKbps: Int
    /// Longest distance between IDR pictures in frames (`uiIntraPeriod`).
    public var keyFrameInterval: Int
    /// Encoder threads, 1 or 2.
    public var threads: Int
    /// Largest NAL unit in bytes, for packetization-mode 0 (RFC 6184 §6.2) where every NAL
    /// unit travels in one RTP packet: pictures are cut into slices of at most this size. Nil:
    /// one slice per picture (mode 1 fragments it with FU-A).
    public var maxNALUnitSize: Int?
    /// The profile (default constrained baseline).
    public var profile: Profile

    /// Defaults: 640x480 at 30 fps, 1000 kbps, an IDR at least every 3000 frames, 1 thread,
    /// one slice per picture, constrained baseline.
    public init(
      width: Int = 640, height: Int = 480, frameRate: Int = 30, bitrateKbps: Int = 1000,
      keyFrameInterval: Int = 3000, threads: Int = 1, maxNALUnitSize: Int? = nil,
      profile: Profile = .constrainedBaseline
    ) {
      self.profile = profile
      self.width = width
      self.height = height
      self.frameRate = frameRate
      self.bitrateKbps = bitrateKbps
      self.keyFrameInterval = keyFrameInterval
      self.threads = threads
      self.maxNALUnitSize = maxNALUnitSize
    }
  }

  /// The settings in force (bitrate follows `setBitrate`).
  public private(set) var configuration: Configuration
  private let encoder: UnsafeMutablePointer<ISVCEncoder?>
  private var frameCount: Int64 = 0
  private var forceKeyFrame = false

  /// Creates an encoder.
  /// - Throws: `H264Error` (`.invalidInput` for an odd or non-positive size, a size over
  ///   4096x2304 or a frame rate outside 1 ... 60; `.initialization` when OpenH264 refuses).
  public init(configuration: Configuration) throws(H264Error) {
    guard configuration.width > 0, configuration.height > 0, configuration.width % 2 == 0,
      configuration.height % 2 == 0,
      H264PictureLimit.default.allows(
        (configuration.width, configuration.height)),
      (1...60).contains(configuration.frameRate)
    else {
      throw H264Error(.invalidInput, message: "bad size or frame rate")
    }
    self.configuration = configuration
    var made: UnsafeMutablePointer<ISVCEncoder?>?
    let created = wcs_openh264_create(&made)
    guard created == 0, let made else {
      throw H264Error(.initialization, code: created, message: "WelsCreateSVCEncoder failed")
    }
    encoder = made
    var params = SEncParamExt()
    _ = wcs_openh264_default_params(encoder, &params)
    params.iUsageType = CAMERA_VIDEO_REAL_TIME
    params.iPicWidth = Int32(configuration.width)
    params.iPicHeight = Int32(configuration.height)
    params.iTargetBitrate = Int32(clamping: max(configuration.bitrateKbps, 1) * 1000)
    params.iMaxBitrate = Int32(clamping: max(configuration.bitrateKbps, 1) * 1000 * 3 / 2)
    params.iRCMode = RC_BITRATE_MODE
    params.fMaxFrameRate = Float(configuration.frameRate)
    params.bEnableFrameSkip = false
    params.uiIntraPeriod = UInt32(max(configuration.keyFrameInterval, 1))
    params.iNumRefFrame = 1
    params.eSpsPpsIdStrategy = CONSTANT_ID
    params.bPrefixNalAddingCtrl = false
    params.iEntropyCodingModeFlag = configuration.profile == .constrainedBaseline ? 0 : 1
    params.iTemporalLayerNum = 1
    params.iSpatialLayerNum = 1
    params.iMultipleThreadIdc = UInt16(min(max(configuration.threads, 1), 2))
    params.bEnableDenoise = false
    params.bEnableBackgroundDetection = true
    params.bEnableAdaptiveQuant = true
    params.bEnableSceneChangeDetect = false
    params.bEnableLongTermReference = false
    params.iComplexityMode = LOW_COMPLEXITY
    var layer = params.sSpatialLayers.0
    layer.iVideoWidth = params.iPicWidth
    layer.iVideoHeight = params.iPicHeight
    layer.fFrameRate = params.fMaxFrameRate
    layer.iSpatialBitrate = params.iTargetBitrate
    layer.iMaxSpatialBitrate = params.iMaxBitrate
    switch configuration.profile {
    case .constrainedBaseline: layer.uiProfileIdc = PRO_BASELINE
    case .main: layer.uiProfileIdc = PRO_MAIN
    case .constrainedHigh: layer.uiProfileIdc = PRO_HIGH
    }
    if let size = configuration.maxNALUnitSize {
      let bounded = UInt32(min(max(size, 200), 65535))
      layer.sSliceArgument.uiSliceMode = SM_SIZELIMITED_SLICE
      layer.sSliceArgument.uiSliceSizeConstraint = bounded
      params.uiMaxNalSize = bounded
    } else {
      layer.sSliceArgument.uiSliceMode = SM_SINGLE_SLICE
      layer.sSliceArgument.uiSliceNum = 1
    }
    params.sSpatialLayers.0 = layer
    _ = wcs_openh264_set_option_int(encoder, ENCODER_OPTION_TRACE_LEVEL, Int32(WELS_LOG_QUIET))
    let initialized = wcs_openh264_initialize(encoder, &params)
    guard initialized == 0 else {
      // Every stored property is set by now, so `deinit` runs and destroys the encoder:
      // destroying it here too freed it twice (a crash on any refused configuration).
      throw H264Error(.initialization, code: initialized, message: "InitializeExt failed")
    }
    _ = wcs_openh264_set_option_int(
      encoder, ENCODER_OPTION_DATAFORMAT, Int32(videoFormatI420.rawValue))
  }

  deinit {
    wcs_openh264_destroy(encoder)
  }

  /// Changes the target bitrate (kbps) from the next picture on, e.g. after a REMB /
  /// transport-cc estimate; the ceiling follows at 1.5 times.
  /// - Throws: `H264Error.configuration` when OpenH264 rejects it.
  public func setBitrate(_ kbps: Int) throws(H264Error) {
    let bits = Int32(clamping: max(kbps, 1) * 1000)
    // The ceiling first when raising, the target first when lowering: OpenH264 refuses a
    // target over the ceiling.
    let order =
      kbps >= configuration.bitrateKbps
      ? [(ENCODER_OPTION_MAX_BITRATE, bits / 2 * 3), (ENCODER_OPTION_BITRATE, bits)]
      : [(ENCODER_OPTION_BITRATE, bits), (ENCODER_OPTION_MAX_BITRATE, bits / 2 * 3)]
    for (option, value) in order {
      let result = wcs_openh264_set_bitrate(encoder, option, value)
      guard result == 0 else {
        throw H264Error(.configuration, code: result, message: "SetOption(bitrate) failed")
      }
    }
    configuration.bitrateKbps = max(kbps, 1)
  }

  /// Makes the next picture an IDR: the answer to a PLI or FIR.
  public func requestKeyFrame() {
    forceKeyFrame = true
  }

  /// Encodes one picture.
  /// - Parameters:
  ///   - picture: an I420 picture of the configured size.
  ///   - timestamp: 90 kHz RTP timestamp to stamp on the output (RFC 6184 §5.1).
  /// - Returns: the access unit in Annex B form (one frame; empty if the encoder skipped it);
  ///   `isKeyFrame` for an IDR, which is always preceded by its SPS and PPS.
  /// - Throws: `H264Error` (`.invalidInput` for a wrong size, `.encode` when OpenH264 fails).
  public func encode(_ picture: I420Image, timestamp: UInt32) throws(H264Error)
    -> [EncodedVideoFrame]
  {
    guard picture.width == configuration.width, picture.height == configuration.height else {
      throw H264Error(
        .invalidInput,
        message: "picture \(picture.width)x\(picture.height), encoder "
          + "\(configuration.width)x\(configuration.height)")
    }
    if forceKeyFrame {
      forceKeyFrame = false
      _ = wcs_openh264_force_idr(encoder)
    }
    var info = SFrameBSInfo()
    let milliseconds = frameCount * 1000 / Int64(configuration.frameRate)
    frameCount += 1
    let result = picture.y.withUnsafeBufferPointer { y in
      picture.u.withUnsafeBufferPointer { u in
        picture.v.withUnsafeBufferPointer { v in
          var source = SSourcePicture()
          source.iColorFormat = Int32(videoFormatI420.rawValue)
          source.iPicWidth = Int32(picture.width)
          source.iPicHeight = Int32(picture.height)
          source.iStride = (
            Int32(picture.strideY), Int32(picture.strideU), Int32(picture.strideV), 0
          )
          source.pData = (
            UnsafeMutablePointer(mutating: y.baseAddress),
            UnsafeMutablePointer(mutating: u.baseAddress),
            UnsafeMutablePointer(mutating: v.baseAddress), nil
          )
          source.uiTimeStamp = milliseconds
          return wcs_openh264_encode(encoder, &source, &info)
        }
      }
    }
    guard result == 0 else {
      throw H264Error(.encode, code: result, message: "EncodeFrame failed")
    }
    guard info.eFrameType != videoFrameTypeSkip, info.eFrameType != videoFrameTypeInvalid else {
      return []
    }
    var bytes: [UInt8] = []
    withUnsafeBytes(of: &info.sLayerInfo) { raw in
      let layers = raw.bindMemory(to: SLayerBSInfo.self)
      for layer in layers.prefix(Int(max(info.iLayerNum, 0))) {
        guard let buffer = layer.pBsBuf, let lengths = layer.pNalLengthInByte else { continue }
        let total = (0..<Int(max(layer.iNalCount, 0))).reduce(0) { $0 + Int(lengths[$1]) }
        bytes += UnsafeBufferPointer(start: buffer, count: total)
      }
    }
    guard !bytes.isEmpty else { return [] }
    return [
      EncodedVideoFrame(
        data: bytes, isKeyFrame: info.eFrameType == videoFrameTypeIDR, timestamp: timestamp)
    ]
  }
}

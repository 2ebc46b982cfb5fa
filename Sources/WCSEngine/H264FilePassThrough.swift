import WCSDevices
import WCSMediaSeam
import WCSProtocols

/// When a file source sends the file's own H.264 (pass-through: no decode, no encode) instead
/// of decoding the file and encoding its pictures.
///
/// All of these must hold, checked when the source starts (after the answer):
/// - H.264 was negotiated, in packetization-mode 1 (RFC 6184 §6.3: the file's slices are
///   whole pictures, which mode 0's single NAL unit packets cannot carry over ~1.2 kB);
/// - the file's best video stream is H.264 whose SPS profile and level the negotiated
///   `profile-level-id` accepts (`H264ProfileLevelID.accepts`: the same profile or a subset of
///   it, e.g. constrained baseline under baseline, at a level no higher), with pictures in
///   presentation order (no B-frames: the file is paced and stamped picture by picture);
/// - the constraints ask for no scaling and no frame-rate change: each of width, height and
///   frame rate is unconstrained (both bounds 0) or its bounds hold the file's value (a 0
///   bound is open), and a `maxBitrate` is at least the container's bitrate for the stream
///   (an unknown bitrate passes).
///
/// What a pass-through stream cannot do, as no encoder runs: a key-frame request (PLI/FIR) is
/// answered by the file's next IDR (counted in `keyFrameRequestsAwaitingIDR`), the bandwidth
/// estimate does not change the bitrate, a muted track sends nothing (instead of black
/// pictures) and resumes at the next IDR, and the local preview is not drawn.
enum H264FilePassThrough {
  /// Why `file` must be transcoded, or nil when it can pass through.
  /// - Parameters:
  ///   - file: the file's H.264 stream (its first SPS, frame rate, bitrate).
  ///   - constraints: the app's video constraints (pixels, frames per second, kbit/s).
  ///   - negotiated: the answered H.264 format, nil when VP8 was negotiated.
  static func refusal(
    file: H264FileReader, constraints: MediaConnectionRequest.Video?,
    negotiated: H264FormatParameters?
  ) -> String? {
    guard let negotiated else { return "H.264 was not negotiated" }
    guard negotiated.packetizationMode == 1 else {
      return "packetization-mode \(negotiated.packetizationMode) was negotiated, not 1"
    }
    let sps = file.sequenceParameterSet
    guard
      let profile = H264ProfileLevelID(
        profileIDC: sps.profileIDC, constraintFlags: sps.constraintFlags, levelIDC: sps.levelIDC)
    else { return "the file's profile_idc \(sps.profileIDC) has no RFC 6184 name" }
    guard negotiated.profileLevelID.accepts(profile) else {
      return "the file's profile-level-id \(profile) is not within the negotiated "
        + "\(negotiated.profileLevelID)"
    }
    guard !file.hasReordering else { return "the file has B-frames" }
    let video = constraints ?? MediaConnectionRequest.Video()
    let fps = Int(file.framesPerSecond.rounded())
    let checks: [(String, Int, Int, Int)] = [
      ("width", sps.width, video.minWidth, video.maxWidth),
      ("height", sps.height, video.minHeight, video.maxHeight),
      ("frame rate", fps, video.minFrameRate, video.maxFrameRate),
    ]
    for (name, value, minimum, maximum) in checks
    where (minimum > 0 && value < minimum) || (maximum > 0 && value > maximum) {
      return "the file's \(name) \(value) is outside the constraints' min \(minimum) max \(maximum)"
    }
    if video.maxBitrate > 0, file.bitRate > video.maxBitrate * 1000 {
      return "the file's \(file.bitRate / 1000) kbit/s is over maxBitrate \(video.maxBitrate)"
    }
    return nil
  }
}

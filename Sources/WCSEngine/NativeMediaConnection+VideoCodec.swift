import WCSCodecs
import WCSMediaSeam
import WCSProtocols

/// Which video codec a connection offers and uses: VP8 (RFC 7741) or H.264 (RFC 6184).
extension NativeMediaConnection {
  /// The H.264 formats of the offer, as browsers offer them so that any WCS or Chromium
  /// answer finds its match (RFC 6184 §8.2.2 matches profile and packetization mode):
  /// constrained baseline 3.1 (`42e01f`) and baseline 3.1 (`42001f`), each in
  /// packetization-mode 1 then 0, at payload types 102, 104, 106, 108, each with its RTX
  /// (RFC 4588, as VP8 has) at the odd type after it; first when the request prefers H.264;
  /// before them the request's `h264Profile` (`4d001f` at 112, `640c1f` at 114, mode 1); none
  /// when the request
  /// excludes it (`stripCodecs`, matched as the SDK's filter does: a case-insensitive
  /// substring of the codec name).
  var offeredH264Formats: [SDPOfferParameters.H264] {
    let excluded = request.excludedCodecs.map { $0.lowercased() }.filter { !$0.isEmpty }
    guard !excluded.contains(where: { "h264".contains($0) }) else { return [] }
    return Self.h264OfferFormats(
      preferred: request.preferredVideoCodec?.caseInsensitiveCompare("H264") == .orderedSame,
      profile: request.h264Profile)
  }

  /// The H.264 formats of every offer (`offeredH264Formats`), listed first when `preferred`;
  /// `profile` (mode 1) before the baseline ones.
  static func h264OfferFormats(
    preferred: Bool, profile: H264OfferedProfile? = nil
  ) -> [SDPOfferParameters.H264] {
    let baseline = H264ProfileLevelID(profile: .baseline, level: 31)
    var formats: [(Int, H264ProfileLevelID, Int)] = [
      (102, .constrainedBaseline31, 1), (104, baseline, 1), (106, .constrainedBaseline31, 0),
      (108, baseline, 0),
    ]
    switch profile {
    case .main: formats.insert((112, H264ProfileLevelID(profile: .main, level: 31), 1), at: 0)
    case .constrainedHigh:
      formats.insert((114, H264ProfileLevelID(profile: .constrainedHigh, level: 31), 1), at: 0)
    case nil: break
    }
    return formats.map { payloadType, profile, mode in
      var h264 = SDPOfferParameters.H264(
        payloadType: payloadType,
        formatParameters: H264FormatParameters(profileLevelID: profile, packetizationMode: mode),
        isPreferred: preferred)
      h264.retransmissionPayloadType = payloadType + 1
      return h264
    }
  }

  /// Whether an answered H.264 format wins over a VP8 one listed before it: when publishing
  /// with H.264 preferred, and no H.264 was taken yet. RFC 3264 §6.1 lets the offerer send any
  /// codec of the answer; a player decodes what the sender sends, its first.
  var prefersAnsweredH264: Bool {
    request.direction == .publish && h264PacketizationMode == nil
      && request.preferredVideoCodec?.caseInsensitiveCompare("H264") == .orderedSame
  }

  /// The packetization mode of an answered H.264 format we can send and receive (0 or 1, any
  /// profile: libavcodec decodes them all, and constrained baseline is what we send), nil for
  /// one we cannot (interleaved mode 2, unreadable parameters).
  static func h264PacketizationMode(_ parameters: FormatParameters?) -> Int? {
    guard let format = H264FormatParameters(parameters?.parameters ?? []),
      format.packetizationMode <= 1
    else { return nil }
    return format.packetizationMode
  }

  /// Switches the video tracks to H.264 when the answer chose it (`h264PacketizationMode`).
  /// - Returns: the error to fail the answer with when a codec cannot be made.
  func adoptVideoCodec() -> MediaBackendError? {
    extra.videoCodec = videoCodecName
    guard let mode = h264PacketizationMode else { return nil }
    do {
      let format = answeredH264Format
      try videoTrack?.useH264(
        packetizationMode: mode, format: format,
        profile: Self.encoderProfile(answered: format, requested: request.h264Profile))
      try videoReceiveTrack?.useH264()
    } catch {
      return .deviceUnavailable("H.264 codec: \(error)")
    }
    return nil
  }

  /// The profile OpenH264 encodes: the requested one when the answer picked it, else
  /// constrained baseline (what the baseline formats and any answer of them decode).
  static func encoderProfile(
    answered: H264FormatParameters?, requested: H264OfferedProfile?
  ) -> H264Encoder.Profile {
    switch (requested, answered?.profileLevelID.profile) {
    case (.main, .main): .main
    case (.constrainedHigh, .constrainedHigh): .constrainedHigh
    default: .constrainedBaseline
    }
  }

  /// The answer's H.264 format of the payload type sent (`videoPayloadType`).
  var answeredH264Format: H264FormatParameters? {
    let codec = peerConnection?.remoteAnswer?.media.lazy.filter { $0.kind == "video" }
      .flatMap(\.codecs).first { $0.payloadType == Int(self.videoPayloadType) }
    return codec.flatMap { H264FormatParameters($0.formatParameters?.parameters ?? []) }
  }

  /// The negotiated video codec's name as in `a=rtpmap` (`"VP8"`, `"H264"`), for statistics.
  var videoCodecName: String { h264PacketizationMode == nil ? "VP8" : "H264" }
}

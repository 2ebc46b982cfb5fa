import WCSCodecs
import WCSMediaSeam
import WCSProtocols

/// Which video codec a connection offers and uses: VP8 (RFC 7741) or H.264 (RFC 6184).
extension NativeMediaConnection {
  /// The H.264 format of the offer: constrained baseline 3.1, packetization-mode 1, with RTX
  /// at 103 (`apt=102`), first when the request prefers H.264; nil when the request excludes it (`stripCodecs`, matched as
  /// the SDK's filter does: a case-insensitive substring of the codec name).
  var offeredH264: SDPOfferParameters.H264? {
    let excluded = request.excludedCodecs.map { $0.lowercased() }.filter { !$0.isEmpty }
    guard !excluded.contains(where: { "h264".contains($0) }) else { return nil }
    var h264 = SDPOfferParameters.H264(
      payloadType: 102,
      isPreferred: request.preferredVideoCodec?.caseInsensitiveCompare("H264") == .orderedSame)
    // RTX for H.264 as for VP8 (RFC 4588), next to its payload type.
    h264.retransmissionPayloadType = 103
    return h264
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
      try videoTrack?.useH264(packetizationMode: mode)
      try videoReceiveTrack?.useH264()
    } catch {
      return .deviceUnavailable("H.264 codec: \(error)")
    }
    return nil
  }

  /// The negotiated video codec's name as in `a=rtpmap` (`"VP8"`, `"H264"`), for statistics.
  var videoCodecName: String { h264PacketizationMode == nil ? "VP8" : "H264" }
}

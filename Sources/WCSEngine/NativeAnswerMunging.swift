import WCSMediaSeam
import WCSProtocols

/// The answer munging WCS clients apply from the media constraints (wcs-protocol.md §4.4):
/// Opus options (`maxaveragebitrate`, `stereo`/`sprop-stereo`, `useinbandfec`) and, for
/// publishing, the VP8 bitrate bounds as `x-google-min-bitrate`/`x-google-max-bitrate`.
/// The munged answer is what the connection applies, so the negotiated parameters match the
/// encoders' settings.
enum NativeAnswerMunging {
  static func apply(to answer: inout SessionDescription, request: MediaConnectionRequest) {
    if let audio = request.audio {
      answer.setOpusOptions(
        OpusFormatOptions(
          maxAverageBitrate: audio.bitrate > 0 ? audio.bitrate : nil,
          stereo: audio.useStereo ? true : nil, useInbandFEC: audio.useFEC ? true : nil))
    }
    if request.direction == .publish, let video = request.video,
      video.minBitrate > 0 || video.maxBitrate > 0
    {
      answer.setVideoBitrateBounds(
        minKbps: video.minBitrate > 0 ? video.minBitrate : nil,
        maxKbps: video.maxBitrate > 0 ? video.maxBitrate : nil)
    }
  }
}

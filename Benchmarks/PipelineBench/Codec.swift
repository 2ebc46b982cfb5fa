import Foundation
import WCSMedia

/// The video codec a measurement publishes and plays: VP8 (libvpx) or H.264 (OpenH264
/// encoding, libavcodec decoding, RFC 6184 payloads), at the same size, rate and bitrate.
enum BenchCodec: String, CaseIterable {
  case vp8
  case h264

  /// `--codec vp8|h264|both` (default both), in that order.
  static func selected(from arguments: [String]) throws -> [BenchCodec] {
    guard let index = arguments.firstIndex(of: "--codec") else { return allCases }
    let value = index + 1 < arguments.count ? arguments[index + 1] : ""
    if value == "both" { return allCases }
    guard let codec = BenchCodec(rawValue: value) else {
      throw PipelineBenchError.peer("--codec takes vp8, h264 or both, not '\(value)'")
    }
    return [codec]
  }

  var name: String { self == .vp8 ? "VP8" : "H.264" }
  /// The library that encodes and the one that decodes, for the printed lines.
  var encoderLibrary: String { self == .vp8 ? "libvpx" : "OpenH264" }
  var decoderLibrary: String { self == .vp8 ? "libvpx" : "libavcodec" }

  /// Throws unless `negotiated` (`DetailedStatistics.videoCodec`) is this codec, so a figure
  /// never stands for the other one.
  func check(negotiated: String) throws {
    let expected = self == .vp8 ? "VP8" : "H264"
    guard negotiated == expected else {
      throw PipelineBenchError.peer("negotiated \(negotiated), not \(expected)")
    }
  }

  /// `request` made to send or receive this codec only (the answerer then picks it).
  func restricting(_ request: MediaConnectionRequest) -> MediaConnectionRequest {
    guard self == .h264 else { return request }
    var request = request
    request.excludedCodecs = ["VP8"]
    request.preferredVideoCodec = "H264"
    return request
  }

  /// A raw encoder at the settings `VideoSendTrack` uses for `PipelineSettings.publishRequest`
  /// (H.264: packetization-mode 1, one slice per picture, as the answer picks).
  func makeEncoder() throws -> (I420Image, UInt32) throws -> [EncodedVideoFrame] {
    switch self {
    case .vp8:
      let encoder = try VP8Encoder(configuration: PipelineSettings.encoderConfiguration)
      return { try encoder.encode($0, timestamp: $1) }
    case .h264:
      let encoder = try H264Encoder(
        configuration: H264Encoder.Configuration(
          width: PipelineSettings.width, height: PipelineSettings.height,
          frameRate: PipelineSettings.frameRate, bitrateKbps: PipelineSettings.bitrateKbps,
          keyFrameInterval: 3000))
      return { try encoder.encode($0, timestamp: $1) }
    }
  }

  /// A raw decoder: one encoded picture in, its width out (0 when none came out).
  func makeDecoder() throws -> ([UInt8]) throws -> Int {
    switch self {
    case .vp8:
      let decoder = try VP8Decoder()
      return { try decoder.decode($0)?.width ?? 0 }
    case .h264:
      let decoder = try H264Decoder()
      return { try decoder.decode($0)?.width ?? 0 }
    }
  }
}

import WCSMediaSeam
import WCSTransport

/// Turns the app's option objects into the values the protocol and the media engine use.
enum MediaRequestBuilder {
  /// Constraints as given, or audio + video with defaults when `nil`.
  static func effective(_ constraints: FPWCSApi2MediaConstraints?) -> FPWCSApi2MediaConstraints {
    constraints ?? FPWCSApi2MediaConstraints(audio: true, video: true)
  }

  /// The media engine's view of a publish or play connection.
  static func connectionRequest(
    _ constraints: FPWCSApi2MediaConstraints, direction: MediaConnectionRequest.Direction,
    display: (any VideoRenderer)?, transport: kFPWCSTransport, stripCodecs: [String]
  ) -> MediaConnectionRequest {
    let audio = constraints.audio.map {
      MediaConnectionRequest.Audio(
        deviceID: $0.deviceID, useFEC: $0.useFEC, useStereo: $0.useStereo, bitrate: $0.bitrate)
    }
    let video = constraints.video.map {
      MediaConnectionRequest.Video(
        deviceID: $0.deviceID, minWidth: $0.minWidth, maxWidth: $0.maxWidth,
        minHeight: $0.minHeight,
        maxHeight: $0.maxHeight, minFrameRate: $0.minFrameRate, maxFrameRate: $0.maxFrameRate,
        minBitrate: $0.minBitrate, maxBitrate: $0.maxBitrate, capturer: $0.videoCapturer)
    }
    return MediaConnectionRequest(
      direction: direction, audio: audio, video: video, renderer: display,
      transport: transport == .fpwcsTransportTCP ? .tcp : .udp, excludedCodecs: stripCodecs)
  }

  /// The `constraints` field: `audio`/`video` objects, or `false` for a missing part.
  static func constraintsJSON(_ constraints: FPWCSApi2MediaConstraints) -> JSONValue {
    var object: [String: JSONValue] = [:]
    if let audio = constraints.audio {
      object["audio"] = [
        "fec": .bool(audio.useFEC), "stereo": .bool(audio.useStereo),
        "bitrate": .number(Double(audio.bitrate)),
      ]
    } else {
      object["audio"] = false
    }
    if let video = constraints.video {
      var v: [String: JSONValue] = [
        "minWidth": .number(Double(video.minWidth)), "maxWidth": .number(Double(video.maxWidth)),
        "minHeight": .number(Double(video.minHeight)),
        "maxHeight": .number(Double(video.maxHeight)),
        "minFrameRate": .number(Double(video.minFrameRate)),
        "maxFrameRate": .number(Double(video.maxFrameRate)),
        "bitrate": .number(Double(video.bitrate)), "minBitrate": .number(Double(video.minBitrate)),
        "maxBitrate": .number(Double(video.maxBitrate)), "quality": .number(Double(video.quality)),
      ]
      if let deviceID = video.deviceID { v["deviceId"] = .string(deviceID) }
      object["video"] = .object(v)
    } else {
      object["video"] = false
    }
    return .object(object)
  }

  /// The protocol fields of `publishStream`/`playStream` (wcs-protocol.md §3.1).
  static func streamRequest(
    name: String, published: Bool, constraints: FPWCSApi2MediaConstraints, record: Bool,
    rtmpUrl: String?, custom: [String: JSONValue]?, transport: kFPWCSTransport, cvoExtension: Bool,
    stripCodecs: [String]
  ) -> StreamRequest {
    let video = constraints.video
    return StreamRequest(
      name: name, published: published, hasAudio: constraints.audio != nil, hasVideo: video != nil,
      record: record, rtmpUrl: rtmpUrl, custom: custom,
      transport: transport == .fpwcsTransportTCP ? "TCP" : "UDP", cvoExtension: cvoExtension,
      constraints: constraintsJSON(constraints), bitrate: published ? 0 : (video?.bitrate ?? 0),
      minBitrate: video?.minBitrate ?? 0, maxBitrate: video?.maxBitrate ?? 0,
      width: max(video?.maxWidth ?? 0, video?.minWidth ?? 0),
      height: max(video?.maxHeight ?? 0, video?.minHeight ?? 0), quality: video?.quality ?? 0,
      stripCodecs: stripCodecs)
  }
}

/// A value that crosses to another queue although its type is not `Sendable`.
///
/// `@unchecked Sendable`: used only for app callbacks and option snapshots that are handed to the
/// session's serial queues and used there; the API documents that callbacks run on the
/// callback queue.
struct UncheckedBox<Value>: @unchecked Sendable {
  let value: Value
  init(_ value: Value) { self.value = value }
}

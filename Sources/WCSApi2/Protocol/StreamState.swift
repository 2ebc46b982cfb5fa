import WCSTransport

/// What a stream was asked to do: everything `publishStream`/`playStream` carry besides the SDP
/// (wcs-protocol.md §3.1).
struct StreamRequest: Sendable, Equatable {
  var name: String
  var published: Bool
  var hasAudio: Bool
  var hasVideo: Bool
  var record: Bool
  var rtmpUrl: String?
  var custom: [String: JSONValue]?
  /// `"UDP"` or `"TCP"`.
  var transport: String
  var cvoExtension: Bool
  /// The app's constraints as JSON (`constraints` field).
  var constraints: JSONValue
  /// Play: transcoder bitrate (kbit/s); publish: 0 (deprecated).
  var bitrate: Int
  /// Publish encoder bounds in kbit/s.
  var minBitrate: Int
  var maxBitrate: Int
  /// Play: requested size, 0 = as published.
  var width: Int
  var height: Int
  /// Play: 0...100.
  var quality: Int
  /// Codec names removed from the sent offer.
  var stripCodecs: [String]
}

/// The protocol state of one stream, owned by `SessionCore`; copies go to the app's stream object.
struct StreamState: Sendable, Equatable {
  /// Client-generated `mediaSessionId` (UUID).
  let id: String
  var name: String
  var published = false
  var status: kFPWCSStreamStatus = .fpwcsStreamStatusNew
  /// The last `info` text from the server (or a local reason).
  var info: String?
  var statusInfo: kFPWCSStreamStatusInfo = .fpwcsStreamStatusInfoUnknown
  var recordName: String?
  /// Remote publisher's mute state as reported by `audioState`/`videoState` and mute events.
  var remoteAudioMuted: Bool?
  var remoteVideoMuted: Bool?
  /// Bits per second, from `NOT_ENOUGH_BANDWIDTH` (`"<remote>/<network>"`) and video-rate messages.
  var remoteBitrate = 0
  var networkBandwidth = 0
  var localAudioMuted = false
  var localVideoMuted = false
  /// Played picture size from `resize` events.
  var streamerVideoWidth = 0
  var streamerVideoHeight = 0
  var request: StreamRequest?
  /// The offer went out in `publishStream`/`playStream`.
  var offerSent = false
  /// `stop()` was called while PENDING; the stop message goes out when the server answers.
  var stopRequested = false
  /// A server answer that arrived before the local offer existed.
  var bufferedAnswer: String?
  var offerCreated = false
  /// The server's answer went to the media engine; a repeated `setRemoteSDP` is skipped (the
  /// engine refuses a second answer, which would fail a working stream).
  var answerApplied = false
  /// ICE restarts (RFC 8445 §9, by re-publishing or re-playing) since the stream last
  /// connected; `SessionCore+Reach.swift`.
  var iceRestarts = 0
}

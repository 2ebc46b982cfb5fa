/// The seam between the signalling core and the media side of `wcs-local-server` (ICE-lite,
/// DTLS-SRTP, SFU relay, recording).
///
/// Flow: the core returns `WCSServerAction.media(request)`; the driver calls `perform(request)`.
/// The engine answers later, in any order and possibly after many other inputs, with
/// `LocalServerMediaEvent`s that the driver collects with `takeEvents()` and passes to
/// `WCSServerCore.mediaEvent(_:now:)`. For one `mediaSessionId` the expected order is
/// `answerReady` then `connected` (or `failed` at any point). Events for an id the core has
/// already released are ignored, so an engine never has to race the core.
public protocol LocalServerMediaEngine: AnyObject {
  /// Starts, changes or ends media for one stream. Never throws: a request that cannot be served
  /// is answered with `LocalServerMediaEvent.failed`.
  func perform(_ request: LocalServerMediaRequest)

  /// Events produced since the last call, oldest first; the driver calls this after `perform`
  /// and whenever the engine's own I/O made progress.
  func takeEvents() -> [LocalServerMediaEvent]
}

/// What the signalling core asks the media engine to do.
public enum LocalServerMediaRequest: Sendable, Equatable {
  /// Accept a publisher's SDP offer (send-only from the client) and produce an answer with
  /// embedded host candidates and `a=end-of-candidates` (wcs-protocol.md §4.3, §9.3).
  case createPublisher(LocalServerPublisherRequest)
  /// Accept a player's SDP offer (receive-only) and relay the media of `sourceMediaSessionId`.
  case createPlayer(LocalServerPlayerRequest)
  /// Stop and forget the media of `mediaSessionId`. For a recorded publisher `recordName` is
  /// the file name (with extension) the finished recording must be stored under (§6); the
  /// engine may write to a temporary file until then.
  case releaseMedia(mediaSessionId: String, recordName: String?)
  /// Ask the publisher `mediaSessionId` for a key frame (RTCP PLI, RFC 4585 §6.3.1), e.g. when
  /// a new player starts.
  case requestKeyFrame(mediaSessionId: String)
  /// A picture of the publisher `sourceMediaSessionId` (wcs-protocol.md §3 `snapshot`): the
  /// engine answers `snapshotTaken` or `snapshotFailed` with the same `requestId`.
  case snapshot(sourceMediaSessionId: String, requestId: String)
}

/// A publish request as the media engine needs it.
public struct LocalServerPublisherRequest: Sendable, Equatable {
  /// The client's id of the stream (wcs-protocol.md §3.1).
  public var mediaSessionId: String
  /// The published stream name, unique among publishers.
  public var streamName: String
  /// The client's SDP offer, as received (CRLF line ends).
  public var offerSDP: String
  /// Whether the stream is recorded (§6); the file name arrives with `releaseMedia`.
  public var record: Bool
  /// Whether the client said the offer has audio / video tracks.
  public var hasAudio: Bool
  /// Whether the client said the offer has a video track.
  public var hasVideo: Bool
  /// Publishing bitrate bounds in kbps, 0 = no limit (§3.1).
  public var minBitrate: Int
  /// Upper publishing bitrate bound in kbps, 0 = no limit.
  public var maxBitrate: Int
  /// The RTMP URL to re-publish the stream to (§3.1 `rtmpUrl`), already allowed by the core.
  public var rtmpUrl: String?

  /// Memberwise initializer.
  public init(
    mediaSessionId: String, streamName: String, offerSDP: String, record: Bool, hasAudio: Bool,
    hasVideo: Bool, minBitrate: Int, maxBitrate: Int, rtmpUrl: String? = nil
  ) {
    self.rtmpUrl = rtmpUrl
    self.mediaSessionId = mediaSessionId
    self.streamName = streamName
    self.offerSDP = offerSDP
    self.record = record
    self.hasAudio = hasAudio
    self.hasVideo = hasVideo
    self.minBitrate = minBitrate
    self.maxBitrate = maxBitrate
  }
}

/// A play request as the media engine needs it.
public struct LocalServerPlayerRequest: Sendable, Equatable {
  /// The player's own id (wcs-protocol.md §3.1).
  public var mediaSessionId: String
  /// The stream name being played.
  public var streamName: String
  /// The publisher whose media this player receives (SFU relay source).
  public var sourceMediaSessionId: String
  /// The client's receive-only SDP offer, as received.
  public var offerSDP: String

  /// Memberwise initializer.
  public init(
    mediaSessionId: String, streamName: String, sourceMediaSessionId: String, offerSDP: String
  ) {
    self.mediaSessionId = mediaSessionId
    self.streamName = streamName
    self.sourceMediaSessionId = sourceMediaSessionId
    self.offerSDP = offerSDP
  }
}

/// What the media engine reports back to the signalling core.
public enum LocalServerMediaEvent: Sendable, Equatable {
  /// The SDP answer for `mediaSessionId` is ready; the core sends
  /// `setRemoteSDP [mediaSessionId, sdp, true]` (wcs-protocol.md §4.2).
  case answerReady(mediaSessionId: String, sdp: String)
  /// ICE and DTLS completed; the core sends PUBLISHING / PLAYING (§4.5). `codecs` fills the
  /// stream object's `audioCodec`/`videoCodec` when known.
  case connected(mediaSessionId: String, codecs: LocalServerMediaCodecs)
  /// Media failed; `reason` becomes the FAILED status `info`, ideally one of §5.2
  /// (`Failed by ICE timeout`, `Failed by DTLS error`, `No common codecs`, ...).
  case failed(mediaSessionId: String, reason: String)
  /// A recording was written to `recordName` (for the log; the name was chosen by the core).
  case recordingFinished(mediaSessionId: String, recordName: String)
  /// The picture a `snapshot` request asked for, as a PNG file.
  case snapshotTaken(requestId: String, png: [UInt8])
  /// A `snapshot` request could not be served: the reason (the `snapshotFailed` `info`).
  case snapshotFailed(requestId: String, reason: String)
  /// The video bitrate of a stream's leg over the last interval, bits per second (RTP header
  /// and payload): what the server receives from a publisher (`inbound`) or sends a player.
  /// The core reports it as `inboundVideoRate`/`outboundVideoRate` (wcs-protocol.md §4.7).
  case videoRate(mediaSessionId: String, inbound: Bool, bitsPerSecond: Int)
  /// The `rtmpUrl` re-publication of a publisher started or failed; the core tells the
  /// publisher (`notifyStreamEvent` `rtmpStreamStatus`).
  case rtmpPushStatus(mediaSessionId: String, LocalServerRTMPPushStatus)
}

/// Codec names negotiated for a stream, as the stream object spells them (`"opus"`, `"VP8"`).
public struct LocalServerMediaCodecs: Sendable, Equatable {
  /// Audio codec name, `nil` when there is no audio.
  public var audioCodec: String?
  /// Video codec name, `nil` when there is no video.
  public var videoCodec: String?

  /// Memberwise initializer; both default to `nil`.
  public init(audioCodec: String? = nil, videoCodec: String? = nil) {
    self.audioCodec = audioCodec
    self.videoCodec = videoCodec
  }
}

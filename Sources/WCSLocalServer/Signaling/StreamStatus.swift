/// Stream statuses the server sends in `notifyStreamStatusEvent` (wcs-protocol.md §5.1).
public enum WCSStreamStatus: String, Sendable, Equatable {
  /// Accepted, media not up yet (internal; never sent by this server).
  case pending = "PENDING"
  /// A publisher's media is up.
  case publishing = "PUBLISHING"
  /// A player's media is up.
  case playing = "PLAYING"
  /// A publisher ended (terminal).
  case unpublished = "UNPUBLISHED"
  /// A player ended (terminal).
  case stopped = "STOPPED"
  /// Error (terminal); the reason is in `info`.
  case failed = "FAILED"
}

/// The `info` strings of WCS (wcs-protocol.md §5.2, corpus `wcs-status-and-info-strings.json`),
/// spelled exactly as the server sends them.
public enum WCSStreamInfo {
  /// `publishStream`/`playStream` without a `mediaSessionId`.
  public static let mediaSessionIdNull = "MediaSessionId is null"
  /// `mediaSessionId` already names a live stream.
  public static let mediaSessionIdInUse = "MediaSessionId is already in use"
  /// Publishing a name somebody already publishes.
  public static let streamNameInUse = "Stream name is already in use"
  /// Playing (or stopping) something that is not there.
  public static let streamNotFound = "Stream not found"
  /// The owner stopped the stream (`unPublishStream` / `stopStream`).
  public static let stoppedByUser = "Stopped by user"
  /// A player whose publisher stopped.
  public static let stoppedByPublisherStop = "Stopped by publisher stop"
  /// A player whose publisher's session went away.
  public static let stoppedBySessionDisconnect = "Stopped by session disconnect"
  /// A message that needs an established session arrived before `connection`.
  public static let sessionNotReady = "Session not ready"
  /// Generic failure.
  public static let failedByError = "Failed by error"
  /// Local-server only: the session already holds `maxStreamsPerSession` live streams.
  public static let tooManyStreamsInSession = "Too many streams in this session"
  /// Local-server only: the server already holds `maxStreams` live streams.
  public static let serverStreamLimitReached = "Server stream limit reached"
  /// The offer's accepted media sections have neither Opus nor VP8 (the only codecs the
  /// local server relays).
  public static let noCommonCodecs = "No common codecs"
  /// A player that cannot take the publisher's video codec (the local server relays, never
  /// transcodes), as a WCS with transcoding off says.
  public static let transcodingRequiredButDisabled = "Transcoding required, but disabled"
  /// Local-server only: the offer has no `m=` line (WCS has no wording for this).
  public static let offerHasNoMediaSections = "Offer has no media sections"
  /// Local-server only: every `m=` line of the offer has port 0 (RFC 3264 §5.1).
  public static let offerMediaSectionsAllRejected = "Every media section is rejected (port 0)"
  /// Local-server only: the client's SDP offer does not parse or lacks what a WebRTC transport
  /// needs (`a=ice-ufrag`/`a=ice-pwd`, `a=fingerprint`, a usable `a=setup`); the detail is
  /// logged. WCS has no wording for this.
  public static let malformedOffer = "Malformed SDP offer"
  /// Local-server only: media failed for a reason that is logged, not shown to the client.
  public static let failedByInternalError = "Failed by internal error"
}

// The iOS SDK's NS_ENUMs with the case names Swift gives them (the leading `k` dropped, the rest
// lower-camel-cased: `kFPWCSSessionStatusEstablished` → `.fpwcsSessionStatusEstablished`).
// Raw values follow the 2.4 header order where known (api-surface.md §3).

/// Session status (`kFPWCSSessionStatus`, api-surface.md §3 E1).
public enum kFPWCSSessionStatus: Int, Sendable, CaseIterable {
  /// Created, `connect()` not called yet.
  case fpwcsSessionStatusNew = 0
  /// WebSocket opening / `connection` sent, no `getUserData` yet.
  case fpwcsSessionStatusPending
  /// The server accepted the connection (`getUserData` received).
  case fpwcsSessionStatusEstablished
  /// Closed by `disconnect()` or by the server.
  case fpwcsSessionStatusDisconnected
  /// Connection refused (`fail` with `apiMethod: "ConnectionStatusEvent"`) or broken.
  case fpwcsSessionStatusFailed
  /// SIP registration done (after Established).
  case fpwcsSessionStatusRegistered
  /// SIP registration removed.
  case fpwcsSessionStatusUnregistered
}

/// Session events (`kFPWCSSessionEvent`, 2.4 header).
public enum kFPWCSSessionEvent: Int, Sendable, CaseIterable {
  /// App data pushed by the server.
  case fpwcsSessionEventData = 0
}

/// Stream status (`kFPWCSStreamStatus`, api-surface.md §3 E3). The SDK's misspellings are kept;
/// correctly spelled aliases exist as static members.
public enum kFPWCSStreamStatus: Int, Sendable, CaseIterable {
  /// Created, nothing sent.
  case fpwcsStreamStatusNew = 0
  /// `publish()`/`play()` called, waiting for the server.
  case fpwcsStreamStatusPending
  /// The server receives the published media.
  case fpwcsStreamStatusPublishing
  /// Playback is up.
  case fpwcsStreamStatusPlaying
  /// Playback paused (legacy server flows).
  case fpwcsStreamStatusPaused
  /// Publishing ended (terminal).
  case fpwcsStreamStatusUnpublished
  /// Playback ended (terminal).
  case fpwcsStreamStatusStopped
  /// Failed (terminal); reason in `getStatusInfo()`.
  case fpwcsStreamStatusFailed
  /// The played picture size changed (event-like, status unchanged).
  case fpwcsStreamStatusResize
  /// Snapshot ready (sic; event-like).
  case fpwcsStreamStatusSnaphotComplete
  /// Playback bitrate above the available bandwidth (sic; event-like, repeats while playing).
  case fpwcsStreamStatusNotEnoughtBandwidth

  /// Correct spelling of `.fpwcsStreamStatusSnaphotComplete`.
  public static let fpwcsStreamStatusSnapshotComplete = kFPWCSStreamStatus
    .fpwcsStreamStatusSnaphotComplete
  /// Correct spelling of `.fpwcsStreamStatusNotEnoughtBandwidth`.
  public static let fpwcsStreamStatusNotEnoughBandwidth = kFPWCSStreamStatus
    .fpwcsStreamStatusNotEnoughtBandwidth

  /// `true` for Unpublished, Stopped and Failed: the stream is over.
  public var isTerminal: Bool {
    self == .fpwcsStreamStatusUnpublished || self == .fpwcsStreamStatusStopped
      || self == .fpwcsStreamStatusFailed
  }
}

/// Why a stream failed or stopped (`kFPWCSStreamStatusInfo`, api-surface.md §3 E4), mapped from the
/// server's `info` text (wcs-protocol.md §5.2). Cases after `fpwcsStreamStatusInfoNoAvailableTranscoders`
/// are the Web SDK codes whose iOS names are UNCONFIRMED; `Unknown` and `LocalError` are Linux additions.
public enum kFPWCSStreamStatusInfo: Int, Sendable, CaseIterable {
  /// No info, or a text not in the table (e.g. a REST hook's reason phrase; see `getInfo()`).
  case fpwcsStreamStatusInfoUnknown = 0
  /// "Failed by ICE error".
  case fpwcsStreamStatusInfoFailedByIceError
  /// "Failed by ICE timeout".
  case fpwcsStreamStatusInfoFailedByIceTimeout
  /// "Failed by ICE keep alive".
  case fpwcsStreamStatusInfoFailedByKeepAlive
  /// "Failed by DTLS fingerprint error".
  case fpwcsStreamStatusInfoFailedByDtlsFingerprintError
  /// "Failed by DTLS error".
  case fpwcsStreamStatusInfoFailedByDtlsError
  /// "Failed by HLS writer error".
  case fpwcsStreamStatusInfoFailedByHlsWriterError
  /// "Failed by RTMP writer error".
  case fpwcsStreamStatusInfoFailedByRtmpWriterError
  /// "Failed by RTP activity".
  case fpwcsStreamStatusInfoFailedByRtpActivity
  /// "Stopped by session disconnect" (also set locally when the session is lost).
  case fpwcsStreamStatusInfoStoppedBySessionDisconnect
  /// "Stopped by rest /terminate" ("Stopped by REST API /terminate query").
  case fpwcsStreamStatusInfoStoppedByRestTerminate
  /// "Stopped by publisher stop".
  case fpwcsStreamStatusInfoStoppedByPublisherStop
  /// "Stopped by user".
  case fpwcsStreamStatusInfoStoppedByUser
  /// "Failed by error".
  case fpwcsStreamStatusInfoFailedByError
  /// "Failed to add stream to proxy".
  case fpwcsStreamStatusInfoFailedToAddStreamToProxy
  /// "Distributor stopped".
  case fpwcsStreamStatusInfoDistributorStopped
  /// "Publish stream is not ready".
  case fpwcsStreamStatusInfoPublishStreamIsNotReady
  /// "Stream not found".
  case fpwcsStreamStatusInfoStreamNotFound
  /// "Stream name is already in use".
  case fpwcsStreamStatusInfoStreamNameAlreadyInUse
  /// "MediaSessionId is null".
  case fpwcsStreamStatusInfoMediasessionIdNull
  /// "MediaSessionId is already in use".
  case fpwcsStreamStatusInfoMediasessionIdAlreadyInUse
  /// "Session not ready".
  case fpwcsStreamStatusInfoSessionNotReady
  /// "Session does not exist".
  case fpwcsStreamStatusInfoSessionDoesNotExist
  /// "Rtsp has wrong format".
  case fpwcsStreamStatusInfoRtspHasWrongFormat
  /// "File has wrong format".
  case fpwcsStreamStatusInfoFileHasWrongFormat
  /// "Failed to connect to rtsp stream".
  case fpwcsStreamStatusInfoFailedToConnectToRtspStream
  /// "Rtsp stream not found".
  case fpwcsStreamStatusInfoRtspStreamNotFound
  /// "File not found".
  case fpwcsStreamStatusInfoFileNotFound
  /// "Transcoding required, but disabled".
  case fpwcsStreamStatusInfoTranscodingRequiredButDisabled
  /// "No available transcoders".
  case fpwcsStreamStatusInfoNoAvailableTranscoders
  /// "RtspAgent shutdown" (iOS name UNCONFIRMED).
  case fpwcsStreamStatusInfoRtspAgentShutdown
  /// "Stream failed" (iOS name UNCONFIRMED).
  case fpwcsStreamStatusInfoStreamFailed
  /// "No common codecs" (iOS name UNCONFIRMED).
  case fpwcsStreamStatusInfoNoCommonCodecs
  /// "Bad URI" (iOS name UNCONFIRMED).
  case fpwcsStreamStatusInfoBadUri
  /// "Got exception while streaming file" (iOS name UNCONFIRMED).
  case fpwcsStreamStatusInfoGotExceptionWhileStreamingFile
  /// "Requested stream shutdown" (iOS name UNCONFIRMED).
  case fpwcsStreamStatusInfoRequestedStreamShutdown
  /// "Failed to read file" (iOS name UNCONFIRMED).
  case fpwcsStreamStatusInfoFailedToReadFile
  /// "Failed to connect to origin stream" (iOS name UNCONFIRMED).
  case fpwcsStreamStatusInfoFailedToConnectToOriginStream
  /// "CDN stream not found" (iOS name UNCONFIRMED).
  case fpwcsStreamStatusInfoCdnStreamNotFound
  /// "Failed to get agent storage" (iOS name UNCONFIRMED).
  case fpwcsStreamStatusInfoFailedToGetAgentStorage
  /// "Agent servicing origin stream is shutting down" (iOS name UNCONFIRMED).
  case fpwcsStreamStatusInfoAgentServicingOriginStreamIsShuttingDown
  /// "Terminated by keep-alive" (iOS name UNCONFIRMED).
  case fpwcsStreamStatusInfoTerminatedByKeepAlive
  /// "Restricted access" (iOS name UNCONFIRMED).
  case fpwcsStreamStatusInfoRestrictedAccess
  /// "Local error": the media engine failed on this machine (Linux addition).
  case fpwcsStreamStatusInfoLocalError
}

/// Stream event types delivered to `onStreamEvent` (`kFPWCSStreamEventType`, api-surface.md §3 E5).
public enum kFPWCSStreamEventType: Int, Sendable, CaseIterable {
  /// The publisher muted its audio.
  case fpwcsStreamEventTypeAudioMuted = 0
  /// The publisher unmuted its audio.
  case fpwcsStreamEventTypeAudioUnmuted
  /// The publisher muted its video.
  case fpwcsStreamEventTypeVideoMuted
  /// The publisher unmuted its video.
  case fpwcsStreamEventTypeVideoUnmuted
  /// The publisher sent a JSON object (`payload`).
  case fpwcsStreamEventTypeData
}

/// SIP call status (`kFPWCSCallStatus`, wcs-rooms-and-calls.md §B.6). Raw values 0–7 keep the
/// 2.4 header order; the three statuses the iOS header lacks (PENDING, RING_MEDIA,
/// SESSION_PROGRESS) follow. Protocol order: outgoing New → Pending → Trying → Ring
/// [→ RingMedia | SessionProgress] → Established ⇄ Hold → Finish, or → Busy | Failed; incoming
/// New [→ Ring] → Pending → Established ⇄ Hold → Finish | Failed.
public enum kFPWCSCallStatus: Int, Sendable, CaseIterable {
  /// Created, nothing sent (outgoing) or offered by the server, not answered yet (incoming).
  case fpwcsCallStatusNew = 0
  /// The INVITE is out (the gateway reports it before any SIP response, §B.12a).
  case fpwcsCallStatusTrying
  /// Ringing (SIP 180).
  case fpwcsCallStatusRing
  /// Callee busy (SIP 486 or 600); terminal.
  case fpwcsCallStatusBusy
  /// On hold (re-INVITE with `a=sendonly`).
  case fpwcsCallStatusHold
  /// Talking (SIP 200 to the INVITE, or after `unhold`).
  case fpwcsCallStatusEstablished
  /// Failed (a final SIP error, a timeout, a media error); terminal, reason in `getInfo()`.
  case fpwcsCallStatusFailed
  /// Ended (BYE from either side); terminal.
  case fpwcsCallStatusFinish
  /// `call()` or `answer()` sent, no server status yet (Linux addition; the Web SDK's PENDING).
  case fpwcsCallStatusPending
  /// Ringing with early media (Linux addition; the Web SDK's RING_MEDIA).
  case fpwcsCallStatusRingMedia
  /// SIP 183 Session Progress (Linux addition; the Web SDK's SESSION_PROGRESS).
  case fpwcsCallStatusSessionProgress

  /// Busy, Failed and Finish end the call.
  public var isTerminal: Bool {
    self == .fpwcsCallStatusBusy || self == .fpwcsCallStatusFailed
      || self == .fpwcsCallStatusFinish
  }
}

/// DTMF signalling method (type name UNCONFIRMED; the iOS constant is `kFPWCSCallDTMFRFC2833`).
public enum kFPWCSCallDTMF: Int, Sendable, CaseIterable {
  /// RTP telephone-event (RFC 4733, formerly RFC 2833).
  case fpwcsCallDTMFRFC2833 = 0
  /// SIP INFO.
  case fpwcsCallDTMFInfo
  /// SIP INFO relayed by the server.
  case fpwcsCallDTMFInfoRelay
}

/// WebRTC media transport requested for a stream (`kFPWCSTransport`).
public enum kFPWCSTransport: Int, Sendable, CaseIterable {
  /// UDP (default).
  case fpwcsTransportUDP = 0
  /// TCP (server needs `ice_tcp_transport=true`).
  case fpwcsTransportTCP
}

/// Connection quality class (`kFPWCSConnectionQuality`).
public enum kFPWCSConnectionQuality: Int, Sendable, CaseIterable {
  /// Client and server bitrates agree.
  case fpwcsConnectionQualityPerfect = 0
  /// Up to 50 % difference.
  case fpwcsConnectionQualityGood
  /// More than 50 % difference.
  case fpwcsConnectionQualityBad
  /// Not enough data yet.
  case fpwcsConnectionQualityUnknown
}

/// Room manager events (`kFPWCSRoomManagerEvent`, see `FPWCSApi2RoomManager.on(_:callback:)`).
public enum kFPWCSRoomManagerEvent: Int, Sendable, CaseIterable {
  /// Connected.
  case fpwcsRoomManagerEventConnected = 0
  /// Disconnected.
  case fpwcsRoomManagerEventDisconnected
  /// Failed.
  case fpwcsRoomManagerEventFailed
}

/// Room participant events (`kFPWCSRoomParticipantEvent`, see
/// `FPWCSApi2Room.on(_:participantCallback:)`).
public enum kFPWCSRoomParticipantEvent: Int, Sendable, CaseIterable {
  /// A participant joined.
  case fpwcsRoomParticipantEventJoined = 0
  /// A participant left.
  case fpwcsRoomParticipantEventLeft
  /// A participant published a stream.
  case fpwcsRoomParticipantEventPublished
  /// A participant's stream ended (Linux addition: the iOS SDK, like the Web SDK, drops the
  /// stream silently).
  case fpwcsRoomParticipantEventUnpublished
}

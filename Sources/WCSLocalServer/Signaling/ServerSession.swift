import WCSTransport

/// One WebSocket connection and its WCS session state (wcs-protocol.md §1).
struct ServerSession {
  let id: WCSConnectionID
  let remoteAddress: String
  let openedAt: Int64
  /// Set by `connection`; `nil` until then (messages other than `connection` are refused).
  var authToken: String?
  /// `custom.login` or `sipLogin` of `connection`, for `{login}` in record names (§6).
  var login = ""
  /// `appKey` of `connection`; `roomApp` sessions send room commands (WCSServerCore+Rooms).
  var appKey = ""
  /// `custom.token` of `connection`, for the access hook's questions about later messages.
  var accessToken: String?
  /// When `tick` next has work for this session (ms since the Unix epoch): the next `ping`, or
  /// before `connection` the handshake deadline.
  var nextPingAt: Int64?
  /// Pings sent since the last `pong`.
  var unansweredPings = 0
  /// `mediaSessionId`s of the streams this connection created (publishers and players).
  var streamIds: [String] = []

  var isEstablished: Bool { authToken != nil }
}

import WCSTransport

/// What a client asks for that `WCSServerHooks.authorize` decides, as WCS's REST hooks do
/// (`connect`, `publishStream`, `playStream`, …).
public enum WCSAccessAction: String, Sendable, Equatable, CaseIterable {
  /// The `connection` message (wcs-protocol.md §1.2).
  case connect
  /// `publishStream` (§3.1).
  case publish
  /// `playStream` (§3.1).
  case play
  /// An HTTP GET of `/client/records/<name>` (§6).
  case recordDownload
  /// A `roomApp` `join` command (wcs-rooms-and-calls.md §A.3).
  case roomJoin
  /// `call` (an outgoing SIP call, wcs-rooms-and-calls.md §B).
  case call
}

/// One question to the access hook: who asks for what.
public struct WCSAccessRequest: Sendable, Equatable {
  /// What is asked for.
  public var action: WCSAccessAction
  /// The client's `ip:port`.
  public var remoteAddress: String
  /// `appKey` of the session's `connection` (for `.connect`, of this one), `""` when none.
  public var appKey: String
  /// `custom.login` (or `sipLogin`) of the session's `connection`, `""` when none.
  public var login: String
  /// The client's shared-secret token: `custom.token` of `connection` for the session's
  /// messages, the `token` query argument for `.recordDownload`; `nil` when not given.
  public var token: String?
  /// The request itself, which `.rewrite` replaces: the message's `data[0]` object
  /// (`connection`, the stream object of `publishStream`/`playStream`, the call object of
  /// `call`), the command `payload` of a room `join`, `["name": <file name>]` for a download.
  public var fields: [String: JSONValue]

  /// Memberwise initializer.
  public init(
    action: WCSAccessAction, remoteAddress: String, appKey: String = "", login: String = "",
    token: String? = nil, fields: [String: JSONValue] = [:]
  ) {
    self.action = action
    self.remoteAddress = remoteAddress
    self.appKey = appKey
    self.login = login
    self.token = token
    self.fields = fields
  }
}

/// The access hook's answer.
public enum WCSAccessDecision: Sendable, Equatable {
  /// Go on as asked.
  case allow
  /// Refuse with `reason`, sent to the client as the `info` of what fails: `fail` and a 1008
  /// close for `.connect`, a FAILED stream status for `.publish`/`.play`, a FAILED
  /// `DataStatusEvent` for `.roomJoin`, `fail` for `.call`, HTTP 403 for `.recordDownload`.
  case refuse(reason: String)
  /// Go on with `fields` in place of `WCSAccessRequest.fields` (e.g. a stream name mapped, a
  /// token removed from `custom`); checked like any client input afterwards.
  case rewrite([String: JSONValue])
}

/// One access question in flight (`WCSServerAction.authorize`): the driver runs the hook and
/// answers `WCSServerCore.accessDecided(id, decision, now:)`.
public struct WCSAccessCheck: Sendable, Equatable {
  /// Names this check in `accessDecided`.
  public var id: Int
  /// The question.
  public var request: WCSAccessRequest
}

/// What the signalling core asks the SIP side of the gateway to do
/// (wcs-rooms-and-calls.md §B.11). `call` is the gateway's number for one SIP session, below
/// 0x80000000 for outgoing calls; incoming calls come numbered by the SIP side.
public enum SIPGatewayCommand: Sendable, Equatable {
  /// REGISTER `account` (digest auth with its `authenticationName`/`password`), refreshed
  /// every `expires` seconds; `session` names whose registration it is.
  case register(session: UInt64, account: SIPAccount, expires: UInt32)
  /// Remove the registration of `session` (REGISTER with `Expires: 0`).
  case unregister(session: UInt64)
  /// INVITE `uri` from `account` (display name `visibleName`) with the gateway's own RTP offer
  /// (with VP8 video when `video`: the WebRTC leg offered video); `headers` are extra header
  /// fields (`inviteParameters`).
  case invite(
    call: UInt32, session: UInt64, uri: String, account: SIPAccount, visibleName: String,
    headers: [String: String], video: Bool = false)
  /// 200 OK to an incoming INVITE with the gateway's RTP answer; with `video` (the client's
  /// WebRTC leg has video) an offered VP8 section is accepted, else refused with port 0.
  case answer(call: UInt32, video: Bool = false)
  /// CANCEL, BYE, or a final response `code` to an unanswered incoming INVITE.
  case hangup(call: UInt32, code: UInt16, reason: String)
  /// re-INVITE: `a=sendonly` (hold) or `a=sendrecv` (unhold).
  case hold(call: UInt32, on: Bool)
  /// DTMF: RFC 4733 telephone-events on the RTP leg, or SIP INFO (`application/dtmf-relay`).
  case dtmf(call: UInt32, digits: String, info: Bool)
  /// REFER to `uri` (blind transfer).
  case refer(call: UInt32, uri: String)
  /// The call's WebRTC leg `mediaSessionId` is connected: bridge its audio to the RTP leg.
  case bridge(call: UInt32, mediaSessionId: String)
}

/// What the SIP side reports back to the signalling core.
public enum SIPGatewayEvent: Sendable, Equatable {
  /// A REGISTER ended: 200 = registered; 401/403 after the credentials were tried = refused.
  case registration(session: UInt64, code: Int, reason: String)
  /// A 1xx to our INVITE.
  case progress(call: UInt32, code: Int, reason: String)
  /// 200 to our INVITE (outgoing) or ACK to our 200 (incoming).
  case established(call: UInt32)
  /// The SIP session ended: `code` ≥ 300 is the INVITE's final response; 0 is a BYE
  /// (`reason` "BYE") or a transport error or timeout (`reason` says which).
  case closed(call: UInt32, code: Int, reason: String)
  /// A new INVITE: `user` is the user part of its request/To URI, `from` the caller's URI;
  /// `video` when its offer has a VP8 video section the gateway can bridge.
  case incoming(call: UInt32, user: String, from: String, displayName: String, video: Bool = false)
  /// The SIP side's media could not be set up (e.g. a malformed or codec-less SDP).
  case mediaFailed(call: UInt32, reason: String)
  /// Progress of our REFER: 202 accepted, then the NOTIFY sipfrag's status code.
  case transfer(call: UInt32, code: Int)
  /// The far end pressed `digit` (`0-9 * # A-D`): an RFC 4733 event on the RTP leg, reported
  /// once at its end, or (`info`) a SIP INFO `application/dtmf-relay`.
  case dtmf(call: UInt32, digit: String, info: Bool)
}

/// One SIP account, from the `connection` fields of a session (wcs-rooms-and-calls.md §B.1).
public struct SIPAccount: Sendable, Equatable {
  /// `sipLogin`.
  public var login: String
  /// `sipAuthenticationName` (defaults to the login).
  public var authenticationName: String
  /// `sipPassword`.
  public var password: String
  /// `sipDomain`.
  public var domain: String
  /// `sipOutboundProxy` (defaults to the domain).
  public var outboundProxy: String
  /// `sipPort` (coerced from a string or a number; 5060 when missing or 0).
  public var port: Int
  /// `sipVisibleName` (defaults to the login).
  public var visibleName: String
  /// `sipRegisterRequired`.
  public var registerRequired: Bool

  /// The address of record, `sip:login@domain`.
  public var addressOfRecord: String { "sip:\(login)@\(domain)" }
  /// Where requests go: `sip:proxy:port`.
  public var registrar: String { "sip:\(outboundProxy):\(port)" }

  /// The SIP URI for a dialled `callee`: a `sip:` URI as it is, else `callee@proxy:port`
  /// (§B.12a: a bare callee goes to `sipOutboundProxy:sipPort`).
  public func uri(for callee: String) -> String {
    callee.lowercased().hasPrefix("sip:") ? callee : "sip:\(callee)@\(outboundProxy):\(port)"
  }

  /// Memberwise initializer.
  public init(
    login: String, authenticationName: String, password: String, domain: String,
    outboundProxy: String, port: Int, visibleName: String, registerRequired: Bool
  ) {
    self.login = login
    self.authenticationName = authenticationName
    self.password = password
    self.domain = domain
    self.outboundProxy = outboundProxy
    self.port = port
    self.visibleName = visibleName
    self.registerRequired = registerRequired
  }
}

/// One output of `WCSServerCore`. The driver performs the actions in the order returned.
public enum WCSServerAction: Sendable, Equatable {
  /// Send `text` (one JSON WCS message, wcs-protocol.md §2) as a WebSocket text frame.
  case send(WCSConnectionID, text: String)
  /// Close the WebSocket with `code` (RFC 6455 §7.4) and `reason`. The core has already
  /// forgotten the connection; a later `connectionClosed` for it is ignored.
  case close(WCSConnectionID, code: Int, reason: String)
  /// Hand `request` to the media engine (`LocalServerMediaEngine.perform`).
  case media(LocalServerMediaRequest)
  /// Hand `command` to the SIP side of the gateway (`SIPGateway.perform`).
  case sip(SIPGatewayCommand)
  /// One log line for a session or stream event (no trailing newline).
  case log(String)
  /// Ask `WCSServerHooks.authorize` about `check.request` and answer with
  /// `WCSServerCore.accessDecided(check.id, decision, now:)`; the message waits until then.
  case authorize(WCSAccessCheck)
}

/// WebSocket close codes the core uses (RFC 6455 §7.4.1).
public enum WCSCloseCode {
  /// 1001 "going away": the client stopped answering `ping` (wcs-protocol.md §7.1).
  public static let keepAliveTimeout = 1001
  /// 1008 "policy violation": no `connection` within `handshakeTimeoutMillis` (§1.2).
  public static let handshakeTimeout = 1008
  /// 1008 "policy violation": the access hook refused the `connection`.
  public static let accessRefused = 1008
}

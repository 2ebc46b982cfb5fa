extension WCSSession {
  /// Like `connect()` with extra HTTP headers on the WebSocket upgrade request (iOS
  /// `connectWithHeaders:`; MediaDevices sends `Authorization: Basic …` built from the URL's
  /// `user:password@`).
  public func connect(withHeaders headers: [String: String]) {
    session.connect(withHeaders: headers)
  }
}

import FPWCSApi2Swift

extension TwoWayStreamingApp {
  /// Creates the session and connects; publishing starts once the server accepted us.
  func connect() {
    let options = FPWCSApi2SessionOptions()
    options.urlServer = serverURL
    options.appKey = "defaultApp"
    options.callbackQueue = queue
    let session: WCSSession
    do {
      session = try WCSSession(options)
    } catch {
      log("cannot create the session: \(error.localizedDescription)")
      return
    }
    session.on(.fpwcsSessionStatusEstablished) { session in
      let status = session?.getStatus() ?? .fpwcsSessionStatusNew
      self.log("session \(FPWCSApi2Model.sessionStatus(toString: status))")
      self.publish()
    }
    session.on(.fpwcsSessionStatusDisconnected) { _ in
      self.log("session DISCONNECTED")
    }
    session.on(.fpwcsSessionStatusFailed) { session in
      self.log("session FAILED: \(session?.getFailureReason() ?? "no reason given")")
    }
    self.session = session
    session.connect()
  }
}

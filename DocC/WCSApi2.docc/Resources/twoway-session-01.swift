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
    self.session = session
    session.connect()
  }
}

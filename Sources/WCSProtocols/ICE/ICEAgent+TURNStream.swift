extension ICEAgent {
  /// The TCP or TLS connection from driver socket `socket` to the TURN server at `server`
  /// ended (or never came up): that relay's client fails (its candidate, if it had one, no
  /// longer works: its pairs fail) and gathering counts it as done. `reason` says why, for
  /// the failure event.
  public func turnConnectionClosed(
    socket: ICESocketID, server: ICETransportAddress, reason: String, now: Double
  ) {
    guard state != .closed else { return }
    currentTime = now
    for index in relays.indices
    where relays[index].baseSocket == socket && relays[index].client.server.address == server {
      relays[index].client.transportClosed(reason: reason)
    }
    service(now: now)
  }
}

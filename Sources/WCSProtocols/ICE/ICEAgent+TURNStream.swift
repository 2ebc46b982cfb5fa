extension ICEAgent {
  /// The TCP or TLS connection from driver socket `socket` to the TURN server at `server`
  /// ended (or never came up): that relay's client fails (its candidate, if it had one, no
  /// longer works: its pairs fail) and gathering counts it as done. `reason` says why, for
  /// the failure event.
  public func turnConnectionClosed(
    socket: ICESocketID, server: ICETransportAddress, reason: String, now: MediaInstant
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

extension ICEAgent {
  /// A pair on relay `relay` was formed: the relay installs a permission for the remote IP at
  /// once (RFC 8656 §9), so the peer's own checks to our relayed address get through from the
  /// start. Waiting for our first check to that peer made the server drop the peer's earlier
  /// checks, which it then retransmitted after its RTO, about 100 ms later.
  func relayPairAdded(relay: ICESocketID, remote: ICECandidate) {
    guard let index = relays.firstIndex(where: { $0.pseudoSocket == relay }),
      relays[index].allocated
    else { return }
    let client = relays[index].client
    client.ensurePermission(for: remote.address.ip, now: currentTime)
    for datagram in client.takeDatagrams() { outputs.append(.send(datagram)) }
  }
}

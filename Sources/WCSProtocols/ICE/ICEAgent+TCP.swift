/// ICE-TCP (RFC 6544) in the agent.
///
/// A TCP candidate has a base socket ID that the driver names (`addLocalTCPCandidate`) but
/// that never sends itself: datagrams go on TCP connections, each a socket ID of its own from
/// `ICEAgent.firstTCPConnectionSocket` on, with one fixed peer.
/// - Active (the SDK): the agent makes a connection socket per pair of an active candidate
///   with a passive remote one (RFC 6544 §6.2); the first `.send` on that ID is the driver's
///   cue to connect to its destination and carry the datagrams RFC 4571 framed.
/// - Passive (the local server): the driver accepts connections on its listener and announces
///   each with `addTCPConnection`; the peer's first check, authenticated by its USERNAME and
///   MESSAGE-INTEGRITY, makes the peer-reflexive pair on it.
/// A connection that ends fails its pairs (`tcpConnectionClosed`).
extension ICEAgent {
  /// The first socket ID of a TCP connection; driver UDP sockets and TCP bases stay below.
  public static let firstTCPConnectionSocket: ICESocketID = 1 << 20

  /// Whether `socket` names a TCP connection (active or accepted).
  public static func isTCPConnection(_ socket: ICESocketID) -> Bool {
    socket >= firstTCPConnectionSocket
  }

  /// Adds a TCP host candidate (RFC 6544 §5.1) whose base the driver calls `socket` (≥ 0,
  /// below `firstTCPConnectionSocket`, not one of its UDP sockets). An active candidate is
  /// signalled with port 9 (RFC 6544 §4.5) and paired with every passive TCP remote candidate
  /// of its family; a passive one has the listener's `address` and is reached by the peer's
  /// connections (`addTCPConnection`). Priority: host type preference, local preference by
  /// direction (`ICECandidate.tcpLocalPreference`). S-O candidates are not supported and are
  /// ignored, as are candidates under `ICETransportPolicy.relay`.
  public func addLocalTCPCandidate(
    _ socket: ICESocketID, address: ICETransportAddress, tcpType: ICETCPType, now: MediaInstant
  ) {
    guard socket >= 0, !Self.isTCPConnection(socket), tcpType != .simultaneousOpen,
      !sockets.contains(where: { $0.id == socket }), configuration.transportPolicy == .all
    else { return }
    let bases = sockets.filter { $0.host.transport == .tcp && $0.connectedTo == nil }.count
    let preference = ICECandidate.tcpLocalPreference(
      tcpType, otherPreference: UInt16(max(0, 8191 - bases)))
    let signalled = ICETransportAddress(
      ip: address.ip, port: tcpType == .active ? 9 : address.port)
    let host = ICECandidate(
      foundation: "t\(socket + 1)",
      priority: ICECandidate.priority(type: .host, localPreference: preference),
      address: signalled, type: .host, transport: .tcp, tcpType: tcpType)
    sockets.append(
      LocalSocket(id: socket, address: signalled, localPreference: preference, host: host))
    localCandidates.append(host)
    outputs.append(.localCandidate(host))
    if configuration.mode == .full && tcpType == .active {
      for remote in remoteCandidates { addPair(socket: socket, remote: remote) }
    }
    service(now: now)
  }

  /// The driver accepted a TCP connection from `remote` on the listener of passive candidate
  /// `base`; it is socket `connection` (≥ `firstTCPConnectionSocket`, new) from now on.
  /// Returns `false` when refused (an unknown base, a used ID, a closed agent): the driver
  /// closes it then.
  @discardableResult
  public func addTCPConnection(
    _ connection: ICESocketID, base: ICESocketID, remote: ICETransportAddress
  ) -> Bool {
    guard state != .closed, Self.isTCPConnection(connection), socket(connection) == nil,
      let listener = socket(base), listener.host.tcpType == .passive,
      listener.connectedTo == nil
    else { return false }
    sockets.append(
      LocalSocket(
        id: connection, address: listener.address, localPreference: listener.localPreference,
        host: listener.host, connectedTo: remote))
    return true
  }

  /// TCP connection `connection` ended (closed by the peer, refused, timed out, bad framing):
  /// its pairs fail and its outstanding checks are dropped (RFC 6544 §7.2); when it carried
  /// the selected pair the agent fails, as on lost consent. An unknown or unconnected
  /// `connection` is ignored. `now`: when it ended, on the agent's clock.
  public func tcpConnectionClosed(_ connection: ICESocketID, now: MediaInstant) {
    guard state != .closed,
      sockets.contains(where: { $0.id == connection && $0.connectedTo != nil })
    else { return }
    currentTime = now
    for index in pairs.indices where pairs[index].pair.socket == connection {
      pairs[index].state = .failed
      pairs[index].valid = false
      pairs[index].nominating = false
    }
    transactions = transactions.filter { $0.value.socket != connection }
    triggeredQueue.removeAll { $0.socket == connection }
    validatedAddresses = validatedAddresses.filter { $0.socket != connection }
    if selectedPair?.socket == connection {
      consentNextSend = nil
      setState(.failed)
    }
    service(now: now)
  }

  /// The socket a pair of `base` with `remote` sends from, or `nil` when they do not pair:
  /// UDP with UDP; an active TCP base with a passive TCP remote, through a connection socket
  /// made for that remote; a connection socket with the peer it is connected to.
  func pairSocket(for base: LocalSocket, remote: ICECandidate) -> ICESocketID? {
    guard base.host.transport == remote.transport else { return nil }
    guard base.host.transport == .tcp else { return base.id }
    if let peer = base.connectedTo { return peer == remote.address ? base.id : nil }
    guard base.host.tcpType == .active, remote.tcpType == .passive else { return nil }
    let key = ICEPairKey(socket: base.id, remote: remote.address)
    if let existing = tcpConnections[key] { return existing }
    guard tcpConnectionCount < maximumPairs else { return nil }
    let id = Self.firstTCPConnectionSocket + tcpConnectionCount
    tcpConnectionCount += 1
    tcpConnections[key] = id
    sockets.append(
      LocalSocket(
        id: id, address: base.address, localPreference: base.localPreference, host: base.host,
        connectedTo: remote.address))
    return id
  }
}

/// What `ICEAgent.receive` did with a datagram.
public enum ICEReceiveResult: Equatable, Sendable {
  /// STUN for the agent (or its TURN clients): consumed.
  case handled
  /// Not STUN: the driver hands the datagram itself to DTLS/SRTP (RFC 7983).
  case notSTUN
  /// Application data that came through a TURN relay from `peer`, unwrapped from a Data
  /// indication; `relay` is the relay's pseudo socket ID (negative), the socket to answer on
  /// (`relayDatagrams(_:relay:to:now:)`) and to check with `isValidated(_:socket:)`.
  case relayedData([UInt8], peer: ICETransportAddress, relay: ICESocketID)
}

extension ICEAgent {
  /// Sends a datagram: directly for a driver socket, in a TURN Send indication for a relay's
  /// pseudo socket.
  func emit(_ datagram: ICEDatagram) {
    guard datagram.socket < 0 else {
      outputs.append(.send(datagram))
      return
    }
    guard let index = relays.firstIndex(where: { $0.pseudoSocket == datagram.socket }) else {
      return
    }
    relays[index].client.send(datagram.bytes, to: datagram.destination, now: currentTime)
    for wrapped in relays[index].client.takeDatagrams() { outputs.append(.send(wrapped)) }
  }

  /// The datagram that carries application bytes (DTLS, SRTP) on the selected pair: direct, or
  /// wrapped for the TURN server when the local candidate is relayed. `nil` before selection.
  /// A permission request the relay needs first is queued in the outputs
  /// (`relayDatagrams(_:relay:to:now:)` returns it instead), timed from `now`.
  public func applicationDatagram(_ bytes: [UInt8], now: MediaInstant) -> ICEDatagram? {
    guard let pair = selectedPair else { return nil }
    guard pair.socket < 0 else {
      return ICEDatagram(socket: pair.socket, destination: pair.remote.address, bytes: bytes)
    }
    let datagrams = relayDatagrams(bytes, relay: pair.socket, to: pair.remote.address, now: now)
    for extra in datagrams.dropLast() { outputs.append(.send(extra)) }
    return datagrams.last
  }

  /// Wraps application bytes for `peer` in a TURN Send indication (RFC 8656 §11) on the relay
  /// with pseudo socket ID `relay` — the selected pair's, or the one DTLS arrived through
  /// before a pair was selected. Returns every datagram the relay's client has to send, in
  /// order, each from its driver socket to the TURN server: a CreatePermission request
  /// (RFC 8656 §9) when `peer`'s IP has none yet, then the Send indication. Empty when
  /// `relay` names no usable relay (unknown, not yet allocated, or its allocation failed).
  /// A new permission request starts a transaction: re-read `nextDeadline` afterwards.
  public func relayDatagrams(
    _ bytes: [UInt8], relay: ICESocketID, to peer: ICETransportAddress, now: MediaInstant
  ) -> [ICEDatagram] {
    guard state != .closed,
      let index = relays.firstIndex(where: { $0.pseudoSocket == relay }),
      relays[index].allocated
    else { return [] }
    let client = relays[index].client
    client.send(bytes, to: peer, now: now)
    return client.takeDatagrams()
  }

  /// Gives a datagram from a TURN server to its client; returns `nil` when no relay owns the
  /// source, else what the relay made of it.
  func receiveFromRelay(
    _ bytes: [UInt8], from source: ICETransportAddress, socket: ICESocketID, now: MediaInstant
  ) -> ICEReceiveResult? {
    guard
      let index = relays.firstIndex(where: {
        $0.baseSocket == socket && $0.client.server.address == source
      })
    else { return nil }
    guard relays[index].client.receive(bytes, now: now) else { return nil }
    var result = ICEReceiveResult.handled
    for event in drainRelay(index) {
      guard case .data(let peer, let payload) = event else { continue }
      let pseudo = relays[index].pseudoSocket
      if STUNMessage.looksLikeSTUN(payload) {
        processSTUN(payload, from: peer, socket: pseudo, now: now)
      } else {
        result = .relayedData(payload, peer: peer, relay: relays[index].pseudoSocket)
      }
    }
    return result
  }

  func serviceRelays(now: MediaInstant) {
    for index in relays.indices {
      relays[index].client.handleTimeout(now: now)
      for event in drainRelay(index) {
        if case .data(let peer, let payload) = event, STUNMessage.looksLikeSTUN(payload) {
          processSTUN(payload, from: peer, socket: relays[index].pseudoSocket, now: now)
        }
      }
    }
  }

  /// Sends the relay's datagrams and applies its allocation events; returns all its events.
  private func drainRelay(_ index: Int) -> [TURNEvent] {
    let client = relays[index].client
    for datagram in client.takeDatagrams() { outputs.append(.send(datagram)) }
    let events = client.takeEvents()
    for event in events {
      switch event {
      case .allocated(let relayed, let mapped, _):
        guard !relays[index].allocated else { continue }
        relays[index].allocated = true
        addRelayedCandidate(relayed, mapped: mapped, relay: relays[index])
        finishGatheringStep()
      case .failed(let reason):
        relays[index].failure = reason
        if !relays[index].allocated {
          finishGatheringStep()
        } else {
          let pseudo = relays[index].pseudoSocket
          for pair in pairs.indices where pairs[pair].pair.socket == pseudo {
            pairs[pair].state = .failed
            pairs[pair].valid = false
          }
        }
      case .data:
        break
      }
    }
    return events
  }

  private func addRelayedCandidate(
    _ relayed: ICETransportAddress, mapped: ICETransportAddress?, relay: Relay
  ) {
    guard let base = socket(relay.baseSocket) else { return }
    // Under the relay policy no local address is revealed, not even as raddr (RFC 8828 §5.2
    // mode 4; browsers send 0.0.0.0 / port 0 then).
    let related =
      configuration.transportPolicy == .relay
      ? ICETransportAddress(ip: base.address.ip.isIPv6 ? .v6(0, 0) : .v4(0), port: 0)
      : mapped ?? base.address
    let candidate = ICECandidate(
      foundation: "r\(relay.baseSocket + 1)",
      priority: ICECandidate.priority(type: .relayed, localPreference: base.localPreference),
      address: relayed, type: .relayed, relatedAddress: related)
    sockets.append(
      LocalSocket(
        id: relay.pseudoSocket, address: relayed, localPreference: base.localPreference,
        host: candidate))
    localCandidates.append(candidate)
    // Pairs (and with them the permissions for the known peers) before the candidate is
    // signalled: a peer told of it at once must not reach the server before its permission.
    for remote in remoteCandidates { addPair(socket: relay.pseudoSocket, remote: remote) }
    outputs.append(.localCandidate(candidate))
  }
}

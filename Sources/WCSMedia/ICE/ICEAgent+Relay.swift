/// What `ICEAgent.receive` did with a datagram.
public enum ICEReceiveResult: Equatable, Sendable {
  /// STUN for the agent (or its TURN clients): consumed.
  case handled
  /// Not STUN: the driver hands the datagram itself to DTLS/SRTP (RFC 7983).
  case notSTUN
  /// Application data that came through a TURN relay from `peer`, unwrapped from a Data
  /// indication.
  case relayedData([UInt8], peer: ICETransportAddress)
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
  public func applicationDatagram(_ bytes: [UInt8], now: Double) -> ICEDatagram? {
    guard let pair = selectedPair else { return nil }
    guard pair.socket < 0 else {
      return ICEDatagram(socket: pair.socket, destination: pair.remote.address, bytes: bytes)
    }
    guard let index = relays.firstIndex(where: { $0.pseudoSocket == pair.socket }) else {
      return nil
    }
    let client = relays[index].client
    client.send(bytes, to: pair.remote.address, now: now)
    let datagrams = client.takeDatagrams()
    // A permission refresh may precede the Send indication: keep it for the next outputs.
    for extra in datagrams.dropLast() { outputs.append(.send(extra)) }
    return datagrams.last
  }

  /// Gives a datagram from a TURN server to its client; returns `nil` when no relay owns the
  /// source, else what the relay made of it.
  func receiveFromRelay(
    _ bytes: [UInt8], from source: ICETransportAddress, socket: ICESocketID, now: Double
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
        result = .relayedData(payload, peer: peer)
      }
    }
    return result
  }

  func serviceRelays(now: Double) {
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
      case .failed:
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
    let candidate = ICECandidate(
      foundation: "r\(relay.baseSocket + 1)",
      priority: ICECandidate.priority(type: .relayed, localPreference: base.localPreference),
      address: relayed, type: .relayed, relatedAddress: mapped ?? base.address)
    sockets.append(
      LocalSocket(
        id: relay.pseudoSocket, address: relayed, localPreference: base.localPreference,
        host: candidate))
    localCandidates.append(candidate)
    outputs.append(.localCandidate(candidate))
    for remote in remoteCandidates { addPair(socket: relay.pseudoSocket, remote: remote) }
  }
}

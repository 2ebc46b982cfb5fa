extension ICEAgent {
  /// Handles a datagram that arrived on `socket` from `source`. Returns `.notSTUN` when the
  /// driver must pass it on to DTLS/SRTP (RFC 7983), `.relayedData` for application bytes that
  /// came through a TURN relay. STUN that fails to decode or verify is counted and dropped,
  /// never thrown.
  @discardableResult
  public func receive(
    _ bytes: [UInt8], from source: ICETransportAddress, socket: ICESocketID, now: MediaInstant
  ) -> ICEReceiveResult {
    // ChannelData (RFC 8656 §12) comes only from a TURN server, for its relay.
    if socket >= 0, TURNClient.isChannelData(bytes), state != .closed {
      currentTime = now
      guard let relayed = receiveFromRelay(bytes, from: source, socket: socket, now: now) else {
        return .notSTUN
      }
      service(now: now)
      return relayed
    }
    guard STUNMessage.looksLikeSTUN(bytes) else { return .notSTUN }
    guard state != .closed else { return .handled }
    currentTime = now
    if socket >= 0, let relayed = receiveFromRelay(bytes, from: source, socket: socket, now: now) {
      service(now: now)
      return relayed
    }
    // Under the relay policy (or on a relay-only socket) a host socket talks only to TURN
    // servers: a check sent straight to it would pair (and reveal) a host candidate.
    if socket >= 0,
      configuration.transportPolicy == .relay || self.socket(socket)?.relayOnly == true
    {
      service(now: now)
      return .handled
    }
    processSTUN(bytes, from: source, socket: socket, now: now)
    service(now: now)
    return .handled
  }

  /// Decodes and dispatches one STUN datagram (also the ones unwrapped from TURN Data
  /// indications, with the relay's pseudo socket).
  func processSTUN(
    _ bytes: [UInt8], from source: ICETransportAddress, socket: ICESocketID, now: MediaInstant
  ) {
    let message: STUNMessage
    do {
      message = try STUNMessage.decode(bytes)
    } catch {
      malformedMessages += 1
      return
    }
    guard message.type.method == .binding else { return }
    switch message.type.messageClass {
    case .request:
      handleRequest(message, from: source, socket: socket, now: now)
    case .successResponse, .errorResponse:
      handleResponse(message, from: source, socket: socket, now: now)
    case .indication:
      break
    }
  }

  /// RFC 8445 §7.3: authenticate, resolve role conflicts, answer, learn peer-reflexive
  /// candidates, queue a triggered check and honour USE-CANDIDATE.
  func handleRequest(
    _ request: STUNMessage, from source: ICETransportAddress, socket: ICESocketID, now: MediaInstant
  ) {
    guard let username = request.username, request.messageIntegrity != nil else {
      respondError(to: request, code: 400, reason: "Bad Request", source, socket, signed: false)
      return
    }
    let localUfrag = username.split(separator: ":", maxSplits: 1).first.map(String.init)
    guard localUfrag == configuration.localCredentials.ufrag else {
      respondError(to: request, code: 401, reason: "Unauthorized", source, socket, signed: false)
      return
    }
    do {
      try request.verifyIntegrity(key: localKey)
    } catch {
      integrityFailures += 1
      respondError(to: request, code: 401, reason: "Unauthorized", source, socket, signed: false)
      return
    }
    guard request.unknownComprehensionRequired.isEmpty else {
      respondError(
        to: request, code: 420, reason: "Unknown Attribute", source, socket, signed: true,
        extra: [.unknownAttributes(request.unknownComprehensionRequired)])
      return
    }
    if configuration.mode == .full && !resolveRoleConflict(request, source, socket) {
      return
    }
    respondSuccess(to: request, source, socket)
    markValidated(source, socket: socket)
    lastAuthenticatedRequest = now
    if state == .new { setState(.checking) }

    let remote = learnRemoteCandidate(
      source, priority: request.priority,
      transport: self.socket(socket)?.host.transport ?? .udp)
    guard let index = pairIndexForIncoming(socket: socket, remote: remote) else { return }
    if configuration.mode == .full {
      switch pairs[index].state {
      case .succeeded, .inProgress:
        break
      case .frozen, .waiting, .failed:
        pairs[index].state = .waiting
        if selectedPair == nil && !triggeredQueue.contains(pairs[index].key) {
          triggeredQueue.append(pairs[index].key)
        }
      }
    }
    guard request.useCandidate, role == .controlled else { return }
    if configuration.mode == .lite || pairs[index].valid {
      nominate(index, now: now)
    } else {
      pairs[index].nominateOnSuccess = true
    }
  }

  /// Returns `false` when the request was answered with 487 and must not be processed further.
  private func resolveRoleConflict(
    _ request: STUNMessage, _ source: ICETransportAddress, _ socket: ICESocketID
  ) -> Bool {
    if role == .controlling, let theirs = request.iceControlling {
      if configuration.tieBreaker >= theirs {
        respondError(to: request, code: 487, reason: "Role Conflict", source, socket, signed: true)
        return false
      }
      switchRole(to: .controlled)
    } else if role == .controlled, let theirs = request.iceControlled {
      if configuration.tieBreaker >= theirs {
        switchRole(to: .controlling)
      } else {
        respondError(to: request, code: 487, reason: "Role Conflict", source, socket, signed: true)
        return false
      }
    }
    return true
  }

  func switchRole(to newRole: ICERole) {
    guard role != newRole, configuration.mode == .full else { return }
    role = newRole
    for index in pairs.indices { pairs[index].nominating = false }
    outputs.append(.roleChanged(newRole))
  }

  /// The remote candidate with this address, or a new peer-reflexive one (RFC 8445 §7.3.1.3).
  private func learnRemoteCandidate(
    _ address: ICETransportAddress, priority: UInt32?, transport: ICETransportProtocol
  ) -> ICECandidate {
    if let index = remoteCandidateIndex[address] { return remoteCandidates[index] }
    peerReflexiveCount += 1
    // Beyond the limit the candidate is answered but not remembered (no pair will be formed).
    guard remoteCandidates.count < configuration.maximumRemoteCandidates else {
      return ICECandidate(
        foundation: "prflx", priority: priority ?? 0, address: address, type: .peerReflexive,
        transport: transport)
    }
    let candidate = ICECandidate(
      foundation: "prflx\(peerReflexiveCount)", priority: priority ?? 0, address: address,
      type: .peerReflexive, transport: transport)
    appendRemoteCandidate(candidate)
    return candidate
  }

  private func pairIndexForIncoming(socket: ICESocketID, remote: ICECandidate) -> Int? {
    if let index = pairIndex(ICEPairKey(socket: socket, remote: remote.address)) { return index }
    return addPair(socket: socket, remote: remote)
  }

  private func respondSuccess(
    to request: STUNMessage, _ source: ICETransportAddress, _ socket: ICESocketID
  ) {
    var attributes: [STUNAttribute] = [.xorMappedAddress(source)]
    if let software = configuration.software { attributes.append(.software(software)) }
    let response = STUNMessage(
      type: .bindingSuccess, transactionID: request.transactionID, attributes: attributes)
    guard let bytes = try? response.encode(key: localKey, fingerprint: true) else { return }
    emit(ICEDatagram(socket: socket, destination: source, bytes: bytes))
  }

  private func respondError(
    to request: STUNMessage, code: Int, reason: String, _ source: ICETransportAddress,
    _ socket: ICESocketID, signed: Bool, extra: [STUNAttribute] = []
  ) {
    let response = STUNMessage(
      type: .bindingError, transactionID: request.transactionID,
      attributes: [.errorCode(code: code, reason: reason)] + extra)
    guard let bytes = try? response.encode(key: signed ? localKey : nil, fingerprint: true) else {
      return
    }
    emit(ICEDatagram(socket: socket, destination: source, bytes: bytes))
  }

  /// RFC 8445 §7.2.5: match the transaction, authenticate, then update the pair.
  func handleResponse(
    _ response: STUNMessage, from source: ICETransportAddress, socket: ICESocketID,
    now: MediaInstant
  ) {
    guard let transaction = transactions[response.transactionID] else { return }
    switch transaction.purpose {
    case .serverReflexive(let socketID, let server):
      guard source == server, socketID == socket else { return }
      transactions[response.transactionID] = nil
      if response.type.messageClass == .successResponse,
        let mapped = response.xorMappedAddress ?? response.mappedAddress
      {
        addServerReflexive(mapped, socket: socketID, server: server)
      }
      finishGatheringStep()
    case .consent(let key):
      guard (try? response.verifyIntegrity(key: remoteKey ?? localKey)) != nil else {
        integrityFailures += 1
        return
      }
      transactions[response.transactionID] = nil
      guard response.type.messageClass == .successResponse, source == key.remote,
        socket == key.socket
      else { return }
      consentReceived(now: now)
    case .check(let key, let nominating):
      guard let remoteKey else { return }
      let signed = (try? response.verifyIntegrity(key: remoteKey)) != nil
      // Unsigned errors (400, 401) are accepted: the peer could not authenticate us.
      if !signed && response.type.messageClass == .successResponse {
        integrityFailures += 1
        return
      }
      transactions[response.transactionID] = nil
      guard let index = pairIndex(key) else { return }
      guard source == key.remote, socket == key.socket else {
        // Non-symmetric addresses (RFC 8445 §7.2.5.2.1).
        pairs[index].state = .failed
        return
      }
      if response.type.messageClass == .errorResponse {
        if signed, response.errorCode?.code == 487 {
          // Switch away from the role the request claimed (RFC 8445 §7.2.5.1).
          switchRole(to: transaction.role == .controlling ? .controlled : .controlling)
          pairs[index].state = .waiting
          if !triggeredQueue.contains(key) { triggeredQueue.append(key) }
        } else {
          pairs[index].state = .failed
          pairs[index].nominating = false
        }
        return
      }
      markValidated(source, socket: socket)
      if !transaction.retransmitted { roundTripTime = now - transaction.sentAt }
      checkSucceeded(index, nominating: nominating, now: now)
    }
  }

  private func checkSucceeded(_ index: Int, nominating: Bool, now: MediaInstant) {
    pairs[index].state = .succeeded
    pairs[index].valid = true
    if firstValidTime == nil { firstValidTime = now }
    if selectedPair?.socket == pairs[index].pair.socket
      && selectedPair?.remote.address == pairs[index].pair.remote.address
    {
      consentReceived(now: now)
    }
    let foundation = pairs[index].pair.local.foundation + "/" + pairs[index].pair.remote.foundation
    for other in pairs.indices
    where pairs[other].state == .frozen
      && pairs[other].pair.local.foundation + "/" + pairs[other].pair.remote.foundation
        == foundation
    {
      pairs[other].state = .waiting
    }
    if nominating && role == .controlling {
      pairs[index].nominating = false
      nominate(index, now: now)
    } else if pairs[index].nominateOnSuccess && role == .controlled {
      nominate(index, now: now)
    }
  }

  /// Marks a pair nominated and selects it unless a higher-priority pair is already selected
  /// (RFC 8445 §8.1.1).
  func nominate(_ index: Int, now: MediaInstant) {
    pairs[index].nominated = true
    pairs[index].valid = true
    let pair = pairs[index].pair
    if let current = selectedPair,
      current.priority(localIsControlling: role == .controlling)
        >= pair.priority(localIsControlling: role == .controlling)
    {
      return
    }
    selectedPair = pair
    outputs.append(.selectedPair(pair))
    triggeredQueue.removeAll()
    if configuration.mode == .full {
      lastConsentResponse = now
      consentNextSend = now + jitteredConsentInterval()
    }
    setState(.connected)
    if remoteGatheringComplete { setState(.completed) }
  }

  func consentReceived(now: MediaInstant) {
    lastConsentResponse = now
    if state == .disconnected { setState(remoteGatheringComplete ? .completed : .connected) }
  }

  private func addServerReflexive(
    _ mapped: ICETransportAddress, socket id: ICESocketID, server: ICETransportAddress
  ) {
    guard let socket = socket(id), mapped != socket.address,
      !localCandidates.contains(where: { $0.address == mapped })
    else { return }
    let candidate = ICECandidate(
      foundation: "s\(id + 1)",
      priority: ICECandidate.priority(
        type: .serverReflexive, localPreference: socket.localPreference),
      address: mapped, type: .serverReflexive, relatedAddress: socket.address)
    localCandidates.append(candidate)
    outputs.append(.localCandidate(candidate))
  }

  func finishGatheringStep() {
    gatheringPending -= 1
    if gatheringPending == 0 { outputs.append(.gatheringComplete) }
  }
}

extension ICEAgent {
  /// Runs whatever is due at `now`: retransmissions and check timeouts, the next paced check
  /// (every Ta), nomination, consent requests and consent expiry. Call it at `nextDeadline`
  /// (calling early is harmless). `now`: the caller's clock, as for every input.
  public func handleTimeout(now: MediaInstant) {
    service(now: now)
  }

  /// When `handleTimeout` should run next, on the clock of the `now` values passed in, or `nil`
  /// when nothing is pending (closed or failed). May be in the past: then call it right away.
  public var nextDeadline: MediaInstant? {
    guard state != .closed, state != .failed else { return nil }
    var deadline = MediaInstant.distantFuture
    for transaction in transactions.values { deadline = min(deadline, transaction.deadline) }
    for relay in relays {
      if let next = relay.client.nextDeadline { deadline = min(deadline, next) }
    }
    if hasPacedWork { deadline = min(deadline, lastPacedSend + configuration.pacingInterval) }
    if let nominationTime { deadline = min(deadline, nominationTime) }
    if let consentNextSend { deadline = min(deadline, consentNextSend) }
    if let lastConsentResponse, selectedPair != nil, configuration.mode == .full {
      if state != .disconnected {
        deadline = min(deadline, lastConsentResponse + configuration.disconnectedTimeout)
      }
      deadline = min(deadline, lastConsentResponse + configuration.consentTimeout)
    }
    return deadline < .distantFuture ? deadline : nil
  }

  func service(now: MediaInstant) {
    guard state != .closed, state != .failed else { return }
    currentTime = now
    serviceRelays(now: now)
    retransmitOrExpire(now: now)
    if hasPacedWork && now >= lastPacedSend + configuration.pacingInterval {
      sendPaced(now: now)
    }
    if let nominationTime, now >= nominationTime { startNomination(now: now) }
    serviceConsent(now: now)
    failIfExhausted()
  }

  private var checksAllowed: Bool {
    configuration.mode == .full && remoteKey != nil && selectedPair == nil
  }

  private var hasPacedWork: Bool {
    if !serverReflexiveQueue.isEmpty { return true }
    guard checksAllowed else { return false }
    return !triggeredQueue.isEmpty || pairs.contains { $0.state == .waiting || $0.state == .frozen }
  }

  /// Controlling: when to nominate the best valid pair if no better pair is still pending.
  private var nominationTime: MediaInstant? {
    guard role == .controlling, configuration.mode == .full, selectedPair == nil,
      let firstValidTime, !pairs.contains(where: { $0.nominating })
    else { return nil }
    guard let best = bestValidIndex else { return nil }
    let bestPriority = pairPriority(pairs[best])
    let betterPending = pairs.contains {
      ($0.state == .waiting || $0.state == .frozen || $0.state == .inProgress)
        && pairPriority($0) > bestPriority
    }
    return betterPending ? firstValidTime + configuration.nominationDelay : firstValidTime
  }

  private var bestValidIndex: Int? {
    pairs.indices.filter { pairs[$0].valid && pairs[$0].state != .failed }
      .max { pairPriority(pairs[$0]) < pairPriority(pairs[$1]) }
  }

  /// Regular nomination (RFC 8445 §8.1.1): re-check the best valid pair with USE-CANDIDATE.
  ///
  /// Facing a lite peer the check goes out at once rather than in the next pacing slot: a lite
  /// agent sends no checks and selects on our USE-CANDIDATE alone, so the slot would only hold
  /// the media back by up to Ta (20 ms by default), on every connection. It is one transaction
  /// in the agent's life and the slot after it is still paced (RFC 8445 §14.2 limits the rate of
  /// new transactions, which this leaves at one per Ta on average).
  private func startNomination(now: MediaInstant) {
    guard let best = bestValidIndex else { return }
    pairs[best].nominating = true
    triggeredQueue.removeAll { $0 == pairs[best].key }
    if remoteIsLite, sendCheck(best, nominating: true, now: now) {
      lastPacedSend = now
      return
    }
    triggeredQueue.insert(pairs[best].key, at: 0)
  }

  /// One new transaction per Ta: server-reflexive requests, then triggered checks, then the
  /// highest-priority Waiting pair, then the highest-priority Frozen one (RFC 8445 §6.1.4.2).
  private func sendPaced(now: MediaInstant) {
    if !serverReflexiveQueue.isEmpty {
      let (socket, server) = serverReflexiveQueue.removeFirst()
      let request = STUNMessage(
        type: .bindingRequest, transactionID: .random(using: &random), attributes: [])
      if let bytes = try? request.encode(fingerprint: true) {
        startTransaction(
          request.transactionID, .serverReflexive(socket: socket, server: server), socket: socket,
          destination: server, bytes: bytes, transmissions: configuration.maxTransmissions,
          now: now)
      } else {
        finishGatheringStep()
      }
      lastPacedSend = now
      return
    }
    guard checksAllowed else { return }
    while !triggeredQueue.isEmpty {
      let key = triggeredQueue.removeFirst()
      guard let index = pairIndex(key) else { continue }
      if sendCheck(index, nominating: pairs[index].nominating, now: now) {
        lastPacedSend = now
        return
      }
    }
    for wanted in [ICEPairState.waiting, .frozen] {
      let candidates = pairs.indices.filter { pairs[$0].state == wanted }
      if let index = candidates.max(by: { pairPriority(pairs[$0]) < pairPriority(pairs[$1]) }) {
        if sendCheck(index, nominating: false, now: now) {
          lastPacedSend = now
        } else {
          pairs[index].state = .failed
        }
        return
      }
    }
  }

  /// Sends a connectivity check (RFC 8445 §7.2.2): USERNAME "remote:local", PRIORITY as a
  /// peer-reflexive candidate, the role attribute with the tie-breaker, USE-CANDIDATE when
  /// nominating, MESSAGE-INTEGRITY with the remote password, FINGERPRINT.
  private func sendCheck(_ index: Int, nominating: Bool, now: MediaInstant) -> Bool {
    let entry = pairs[index]
    guard let request = bindingRequest(for: entry.pair, useCandidate: nominating),
      let remoteKey, let bytes = try? request.encode(key: remoteKey, fingerprint: true)
    else { return false }
    if entry.state != .succeeded { pairs[index].state = .inProgress }
    startTransaction(
      request.transactionID, .check(entry.key, nominating: nominating), socket: entry.pair.socket,
      destination: entry.pair.remote.address, bytes: bytes,
      transmissions: configuration.maxTransmissions, now: now)
    if state == .new { setState(.checking) }
    return true
  }

  private func bindingRequest(for pair: ICECandidatePair, useCandidate: Bool) -> STUNMessage? {
    guard let remoteCredentials, let socket = socket(pair.socket) else { return nil }
    var attributes: [STUNAttribute] = [
      .username(remoteCredentials.ufrag + ":" + configuration.localCredentials.ufrag),
      .priority(
        ICECandidate.priority(type: .peerReflexive, localPreference: socket.localPreference)),
      role == .controlling
        ? .iceControlling(configuration.tieBreaker) : .iceControlled(configuration.tieBreaker),
    ]
    if useCandidate { attributes.append(.useCandidate) }
    if let software = configuration.software { attributes.append(.software(software)) }
    return STUNMessage(
      type: .bindingRequest, transactionID: .random(using: &random), attributes: attributes)
  }

  private func startTransaction(
    _ id: STUNTransactionID, _ purpose: ICETransactionPurpose, socket: ICESocketID,
    destination: ICETransportAddress, bytes: [UInt8], transmissions: Int, now: MediaInstant
  ) {
    let timeout =
      transmissions > 1 ? configuration.initialRetransmissionTimeout : configuration.consentInterval
    transactions[id] = ICETransaction(
      purpose: purpose, role: role, socket: socket, destination: destination, bytes: bytes,
      transmissions: transmissions - 1, timeout: timeout, deadline: now + timeout, sentAt: now)
    emit(ICEDatagram(socket: socket, destination: destination, bytes: bytes))
  }

  /// RFC 8489 §6.2.1 retransmissions with a doubling, capped timeout; a transaction out of
  /// transmissions fails its pair (or its gathering step).
  private func retransmitOrExpire(now: MediaInstant) {
    let due = transactions.filter { $0.value.deadline <= now }.sorted {
      $0.value.deadline < $1.value.deadline
    }
    for (id, var transaction) in due {
      if transaction.transmissions > 0 {
        transaction.transmissions -= 1
        transaction.timeout = min(transaction.timeout * 2, configuration.maxRetransmissionTimeout)
        transaction.deadline = now + transaction.timeout
        transaction.retransmitted = true
        transactions[id] = transaction
        emit(
          ICEDatagram(
            socket: transaction.socket, destination: transaction.destination,
            bytes: transaction.bytes))
        continue
      }
      transactions[id] = nil
      switch transaction.purpose {
      case .check(let key, _):
        if let index = pairIndex(key) {
          pairs[index].nominating = false
          if !pairs[index].valid { pairs[index].state = .failed }
        }
      case .serverReflexive:
        finishGatheringStep()
      case .consent:
        break
      }
    }
  }

  /// RFC 7675: a Binding request on the selected pair every ~5 s (±20 % jitter); no response
  /// for `disconnectedTimeout` → disconnected, for `consentTimeout` → failed.
  private func serviceConsent(now: MediaInstant) {
    guard configuration.mode == .full, let pair = selectedPair,
      let lastConsentResponse
    else { return }
    // Compared as sums, exactly as `nextDeadline` computes them, so a deadline always fires.
    if now >= lastConsentResponse + configuration.consentTimeout {
      consentNextSend = nil
      transactions.removeAll()
      setState(.failed)
      return
    }
    if now >= lastConsentResponse + configuration.disconnectedTimeout {
      setState(.disconnected)
    }
    if let next = consentNextSend, now >= next {
      consentNextSend = now + jitteredConsentInterval()
      if let request = bindingRequest(for: pair, useCandidate: false), let remoteKey,
        let bytes = try? request.encode(key: remoteKey, fingerprint: true)
      {
        startTransaction(
          request.transactionID,
          .consent(ICEPairKey(socket: pair.socket, remote: pair.remote.address)),
          socket: pair.socket, destination: pair.remote.address, bytes: bytes, transmissions: 1,
          now: now)
      }
    }
  }

  func jitteredConsentInterval() -> MediaDuration {
    configuration.consentInterval * Double.random(in: 0.8...1.2, using: &random)
  }

  /// With end-of-candidates received and nothing left to check and nothing valid, the agent
  /// fails (RFC 8445 §8.1.2).
  private func failIfExhausted() {
    // Without any pair the agent keeps waiting for peer-reflexive candidates.
    guard configuration.mode == .full, selectedPair == nil, remoteGatheringComplete,
      remoteKey != nil, state != .failed
    else { return }
    guard !pairs.isEmpty else {
      // A lite peer sends no checks, so no peer-reflexive pair can come: once gathering is
      // done, candidates that pair with none of ours (UDP against TCP-only, say) never will.
      if remoteIsLite && gatheringStarted && gatheringPending == 0 && !remoteCandidates.isEmpty {
        setState(.failed)
      }
      return
    }
    let pending = pairs.contains {
      $0.state == .waiting || $0.state == .frozen || $0.state == .inProgress || $0.valid
    }
    guard !pending, triggeredQueue.isEmpty else { return }
    setState(.failed)
  }
}

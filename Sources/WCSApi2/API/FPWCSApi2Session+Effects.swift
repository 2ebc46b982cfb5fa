import Dispatch
import Foundation
import WCSTransport

/// Carrying out the session core's effects, on the work queue: transport I/O, media connections,
/// app callbacks, async waiters.
extension FPWCSApi2Session {
  func run(_ effects: [SessionEffect]) {
    for effect in effects { perform(effect) }
  }

  fileprivate func perform(_ effect: SessionEffect) {
    switch effect {
    case .openTransport: openTransport()
    case .send(let message): transport?.send(WCSMessageCodec.encode(message))
    case .closeTransport:
      transportGeneration += 1
      transport?.close(code: 1000, reason: "")
      transport = nil
    case .sessionStatus(let status): sessionStatusChanged(status)
    case .streamStatus(let status, let state): streamStatusChanged(status, state)
    case .streamUpdated(let state): streamObjects[state.id]?.update(state)
    case .createOffer(let id): createOffer(id)
    case .applyAnswer(let id, let sdp): applyAnswer(id, sdp)
    case .setTrackEnabled(let id, let audio, let enabled):
      connections[id]?.setTrackEnabled(audio ? .audio : .video, enabled: enabled)
    case .releaseMedia(let id): connections.removeValue(forKey: id)?.close()
    case .streamEvent(let id, let type, let payload):
      let event = FPWCSApi2StreamEvent(type: type, payload: payload, mediaSessionId: id)
      streamObjects[id]?.deliverEvent(event)
    case .availability(let checkId, let available, let info):
      guard let callback = availabilityCallbacks.removeValue(forKey: checkId) else { return }
      callbackQueue.async { callback.value(available, info) }
    case .dataStatus(let operationId, let accepted, let payload, let status, let info):
      dataStatus(operationId, accepted: accepted, payload: payload, status: status, info: info)
    case .appData(let operationId, let payload):
      let data = FPWCSApi2Data(operationId: operationId, payload: payload, status: nil, info: nil)
      let callback = callbacks.withLock { $0.appData }
      callbackQueue.async { [weak self] in callback?.value(self, data) }
    case .serverVideoRate(let id, let bitrate):
      guard let stream = streamObjects[id], stream.isQualityCalculationEnabled,
        let connection = connections[id]
      else { return }
      connection.stats { stats in
        stream.addQualitySample(clientBitrate: stats.currentVideoBitrate, serverBitrate: bitrate)
      }
    case .call(let effect): performCall(effect)
    case .skipped(let reason):
      skipped.withLock {
        $0.append(reason)
        if $0.count > 64 { $0.removeFirst() }
      }
    }
  }

  fileprivate func openTransport() {
    transportGeneration += 1
    let generation = transportGeneration
    transport?.close(code: 1000, reason: "")
    let newTransport = injectedTransport ?? WCSApi2Environment.makeSignalingTransport()
    transport = newTransport
    var options = connectOptions
    if let headers = headerOverride { options.headers.merge(headers) { _, new in new } }
    newTransport.connect(to: serverUrl, options: options) { [weak self] event in
      guard let self else { return }
      self.work.async { self.transportEvent(event, generation: generation) }
    }
  }

  fileprivate func transportEvent(_ event: SignalingEvent, generation: Int) {
    guard generation == transportGeneration else { return }
    switch event {
    case .opened: run(core.transportOpened())
    case .text(let text):
      run(core.receive(text))
      publishSnapshot()
    case .closed(let code, let reason):
      transport = nil
      run(core.transportClosed(code: code, reason: reason))
    case .failed(let error):
      transport = nil
      run(core.transportFailed(reason: "\(error)"))
    }
  }

  func publishSnapshot() {
    let status = core.status
    let token = core.authToken
    let reason = core.failureReason
    let refused = core.refusedByServer
    let version = core.serverVersion
    let ids = core.streamIds
    snapshot.withLock {
      $0.status = status
      $0.authToken = token
      $0.failureReason = reason
      $0.refusedByServer = refused
      $0.serverVersion = version
      $0.streamIds = ids
    }
  }

  fileprivate func sessionStatusChanged(_ status: kFPWCSSessionStatus) {
    publishSnapshot()
    let (callback, continuations) = callbacks.withLock {
      ($0.status[status], Array($0.statusContinuations.values))
    }
    for continuation in continuations { continuation.yield(status) }
    // Strong capture: a Disconnected/Failed session leaves `getSessions()` and may have no other
    // owner; its callback must still receive it.
    callbackQueue.async { callback?.value(self) }
    switch status {
    case .fpwcsSessionStatusEstablished, .fpwcsSessionStatusRegistered:
      startProbeTimer()
      startBandwidthTimer()
      let waiters = connectWaiters
      connectWaiters = []
      for waiter in waiters { waiter.resume() }
    case .fpwcsSessionStatusFailed, .fpwcsSessionStatusDisconnected:
      let error: WCSError
      if status == .fpwcsSessionStatusDisconnected {
        error = .disconnected
      } else if core.refusedByServer {
        error = .connectionRefused(reason: core.failureReason ?? "")
      } else {
        error = .connectionFailed(reason: core.failureReason ?? "")
      }
      let waiters = connectWaiters
      connectWaiters = []
      for waiter in waiters { waiter.resume(throwing: error) }
      probeTimer?.cancel()
      probeTimer = nil
      bandwidthTimer?.cancel()
      bandwidthTimer = nil
      FPWCSApi2.unregister(self)
    default:
      break
    }
  }

  /// Every `bandwidthSampleInterval`, asks each media connection for its stats and feeds them
  /// to the core (`SessionCore.bandwidthSample`).
  fileprivate func startBandwidthTimer() {
    guard bandwidthSampleInterval > 0, bandwidthTimer == nil else { return }
    let timer = DispatchSource.makeTimerSource(queue: work)
    timer.schedule(
      deadline: .now() + bandwidthSampleInterval, repeating: bandwidthSampleInterval)
    timer.setEventHandler { [weak self] in
      guard let self else { return }
      for (id, connection) in self.connections {
        connection.stats { [weak self] stats in
          let now = Int64(DispatchTime.now().uptimeNanoseconds / 1000)
          self?.work.async { [weak self] in
            guard let self else { return }
            self.run(self.core.bandwidthSample(streamId: id, stats: stats, now: now))
          }
        }
      }
    }
    bandwidthTimer = timer
    timer.resume()
  }

  fileprivate func startProbeTimer() {
    guard core.config.receiveProbes > 0, probeTimer == nil else { return }
    let timer = DispatchSource.makeTimerSource(queue: work)
    timer.schedule(deadline: .now() + probesInterval, repeating: probesInterval)
    timer.setEventHandler { [weak self] in
      guard let self else { return }
      self.run(self.core.probeTick())
    }
    probeTimer = timer
    timer.resume()
  }

  fileprivate func streamStatusChanged(_ status: kFPWCSStreamStatus, _ state: StreamState) {
    guard let stream = streamObjects[state.id] else { return }
    stream.update(state)
    stream.deliverStatus(status, state: state)
    if state.status.isTerminal {
      streamObjects[state.id] = nil
      publishSnapshot()
    }
  }

  fileprivate func createOffer(_ id: String) {
    guard let connection = connections[id] else {
      run(core.offerCreated(streamId: id, result: .failure(.closed)))
      return
    }
    connection.createOffer { [weak self] result in
      guard let self else { return }
      self.work.async { self.run(self.core.offerCreated(streamId: id, result: result)) }
    }
  }

  fileprivate func applyAnswer(_ id: String, _ sdp: String) {
    guard let connection = connections[id] else { return }
    connection.setRemoteAnswer(sdp) { [weak self] result in
      guard let self, case .failure(let error) = result else { return }
      self.work.async { self.run(self.core.answerFailed(streamId: id, error: error)) }
    }
  }

  fileprivate func dataStatus(
    _ operationId: String, accepted: Bool, payload: JSONValue?, status: String?, info: String?
  ) {
    let data = FPWCSApi2Data(operationId: operationId, payload: payload, status: status, info: info)
    if let continuation = dataContinuations.removeValue(forKey: operationId) {
      if accepted {
        continuation.resume(returning: data)
      } else {
        continuation.resume(throwing: WCSError.dataRejected(info: info))
      }
    }
    if let handler = dataHandlers.removeValue(forKey: operationId) {
      callbackQueue.async { [weak self] in
        if accepted {
          handler.value.onAccepted?(self, data)
        } else {
          handler.value.onRejected?(self, data)
        }
      }
    }
  }
}

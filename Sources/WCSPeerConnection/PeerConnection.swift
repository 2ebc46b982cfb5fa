import Foundation
import WCSEventLoop
import WCSProtocols

/// A WebRTC transport for one peer: ICE over UDP sockets, DTLS on the selected pair, SRTP
/// keyed from DTLS, with BUNDLE (every m-section on one 5-tuple) and rtcp-mux, as WCS and
/// browsers use them (RFC 8829, RFC 8843, RFC 5764, RFC 5761).
///
/// The driver of the Sans-I/O cores: it owns the sockets and the single timer on its
/// `EventLoop`, feeds datagrams to the ICE agent, the DTLS endpoint or SRTP by their first
/// byte (RFC 7983), and sends what they produce.
///
/// Signalling, two ways:
/// - offerer: `createOffer(...)`/`localDescriptionForOffer()`, then `setRemoteDescription` /
///   `setRemoteAnswer(_:)`. Full ICE, controlling; DTLS role from the answer's `a=setup`.
/// - answerer: `setRemoteOffer`, then `createAnswer()`/`localDescriptionForAnswer()`. Full
///   ICE (controlled) or, with `configuration.iceLite`, ICE-lite as a server is.
///
/// Media: nothing is sent or delivered before `.connected` (DTLS verified the peer's
/// certificate against its SDP fingerprint). `sendRTP`/`sendRTCP` protect and send;
/// `onRTP`/`onRTCP` get unprotected packets.
///
/// Threading: every method and property must be used on `loop` (use `loop.execute` or
/// `loop.submit` from elsewhere); checked: a use off the loop traps, in every build. Every
/// handler (`onEvent`, `onRTP`, `onRTCP`) is called on the loop thread; it must not block —
/// hop to your own queue for slow work.
public final class PeerConnection: Sendable {
  /// Called on the loop for each event.
  public typealias EventHandler = @Sendable (PeerConnectionEvent) -> Void
  /// Called on the loop for each RTP packet after SRTP unprotect: its SSRC and the whole RTP
  /// packet (header + payload), valid only during the call.
  public typealias RTPHandler = (_ ssrc: UInt32, _ packet: UnsafeRawBufferPointer) -> Void
  /// Called on the loop for each compound RTCP packet after SRTCP unprotect, valid only
  /// during the call.
  public typealias RTCPHandler = (_ packet: UnsafeRawBufferPointer) -> Void

  /// Which side of offer/answer this connection plays.
  public enum SignalingRole: Sendable, Equatable {
    /// Sent the offer (ICE controlling, `a=setup:actpass`).
    case offerer
    /// Answers an offer (ICE controlled or lite).
    case answerer
  }

  /// The loop everything runs on.
  public let loop: EventLoop
  /// The configuration given at creation.
  public let configuration: PeerConnectionConfiguration
  /// Our ICE credentials (random per connection).
  public let localCredentials: ICECredentials
  /// The current state.
  public internal(set) var state: PeerConnectionState {
    get { loopState.value.state }
    _modify { yield &loopState.value.state }
  }
  /// Offerer or answerer, once a description was made or received.
  public internal(set) var signalingRole: SignalingRole? {
    get { loopState.value.signalingRole }
    _modify { yield &loopState.value.signalingRole }
  }
  /// Our `a=setup` once decided.
  public internal(set) var localSetup: DTLSSetup? {
    get { loopState.value.localSetup }
    _modify { yield &loopState.value.localSetup }
  }
  /// The peer's transport description once set.
  public internal(set) var remoteDescription: PeerConnectionTransportDescription? {
    get { loopState.value.remoteDescription }
    _modify { yield &loopState.value.remoteDescription }
  }
  /// Receives events; set it on the loop before signalling starts.
  public var onEvent: EventHandler? {
    get { loopState.value.onEvent }
    _modify { yield &loopState.value.onEvent }
  }
  /// Receives unprotected RTP; set it on the loop.
  public var onRTP: RTPHandler? {
    get { loopState.value.onRTP }
    _modify { yield &loopState.value.onRTP }
  }
  /// Receives unprotected RTCP; set it on the loop.
  public var onRTCP: RTCPHandler? {
    get { loopState.value.onRTCP }
    _modify { yield &loopState.value.onRTCP }
  }
  /// The negotiated sections of the answer, after `setRemoteDescription(answer:)`: accepted
  /// codecs and payload types per m-section, for the media pipeline.
  public internal(set) var remoteAnswer: SDPAnswerAnalysis? {
    get { loopState.value.remoteAnswer }
    _modify { yield &loopState.value.remoteAnswer }
  }
  /// The peer's offer, after `setRemoteDescription(offer:)`.
  public internal(set) var remoteOffer: SessionDescription? {
    get { loopState.value.remoteOffer }
    _modify { yield &loopState.value.remoteOffer }
  }
  /// The offer or answer we made, once made.
  public internal(set) var localSessionDescription: SessionDescription? {
    get { loopState.value.localSessionDescription }
    _modify { yield &loopState.value.localSessionDescription }
  }
  /// Our `o=` session id and last version as answerer: random on the first answer, then kept,
  /// the version bumped by each new answer (RFC 3264 §8).
  public internal(set) var answerOrigin: SDPLocalOrigin? {
    get { loopState.value.answerOrigin }
    _modify { yield &loopState.value.answerOrigin }
  }

  /// Everything that changes, in one value checked to be used on `loop` only (any use off it
  /// traps); the properties here and below forward to it.
  let loopState: LoopBoundBox<LoopState>
  var sockets: [EventLoopUDPSocket] {
    get { loopState.value.sockets }
    _modify { yield &loopState.value.sockets }
  }
  var turnStreams: [PeerConnectionTURNStream] {
    get { loopState.value.turnStreams }
    _modify { yield &loopState.value.turnStreams }
  }
  var certificate: DTLSCertificate? {
    get { loopState.value.certificate }
    _modify { yield &loopState.value.certificate }
  }
  var agent: ICEAgent? {
    get { loopState.value.agent }
    _modify { yield &loopState.value.agent }
  }
  var dtls: DTLSEndpoint? {
    get { loopState.value.dtls }
    _modify { yield &loopState.value.dtls }
  }
  var dtlsRole: DTLSRole? {
    get { loopState.value.dtlsRole }
    _modify { yield &loopState.value.dtlsRole }
  }
  var srtpOutbound: SRTPSession? {
    get { loopState.value.srtpOutbound }
    _modify { yield &loopState.value.srtpOutbound }
  }
  var srtpInbound: SRTPSession? {
    get { loopState.value.srtpInbound }
    _modify { yield &loopState.value.srtpInbound }
  }
  var selectedPair: ICECandidatePair? {
    get { loopState.value.selectedPair }
    _modify { yield &loopState.value.selectedPair }
  }
  var dtlsFallbackDestination: (socket: ICESocketID, address: ICETransportAddress)? {
    get { loopState.value.dtlsFallbackDestination }
    _modify { yield &loopState.value.dtlsFallbackDestination }
  }
  var counters: PeerConnectionStats {
    get { loopState.value.counters }
    _modify { yield &loopState.value.counters }
  }
  var localSendSSRCs: Set<UInt32> {
    get { loopState.value.localSendSSRCs }
    _modify { yield &loopState.value.localSendSSRCs }
  }
  var timer: EventLoopTimer? {
    get { loopState.value.timer }
    _modify { yield &loopState.value.timer }
  }
  var timerDeadline: MediaInstant? {
    get { loopState.value.timerDeadline }
    _modify { yield &loopState.value.timerDeadline }
  }
  var watchdog: EventLoopTimer? {
    get { loopState.value.watchdog }
    _modify { yield &loopState.value.watchdog }
  }
  var connectDeadline: MediaInstant? {
    get { loopState.value.connectDeadline }
    _modify { yield &loopState.value.connectDeadline }
  }
  var hasConnected: Bool {
    get { loopState.value.hasConnected }
    _modify { yield &loopState.value.hasConnected }
  }
  var iceTCP: PeerConnectionICETCP { loopState.value.iceTCP }
  var sendBuffer: UnsafeMutableRawBufferPointer { loopState.value.sendBuffer }
  var reception: Reception { loopState.value.reception }
  /// `selectedPair?.remote.address`, kept apart so each received packet compares one address
  /// instead of copying the whole pair (its candidates' strings included).
  var selectedRemoteAddress: ICETransportAddress? { reception.selectedRemoteAddress }
  var peerClosedDTLS: Bool {
    get { reception.peerClosedDTLS }
    set { loopState.value.setPeerClosedDTLS(newValue) }
  }

  /// Creates a connection; no socket is bound until a description is made. Callable from any
  /// thread.
  ///
  /// - Parameters:
  ///   - configuration: servers, ICE mode, addresses, DTLS settings.
  ///   - loop: the event loop; `EventLoop.shared` by default.
  public init(
    configuration: PeerConnectionConfiguration = PeerConnectionConfiguration(),
    loop: EventLoop = .shared
  ) {
    self.configuration = configuration
    self.loop = loop
    var generator = SystemRandomNumberGenerator()
    localCredentials = ICECredentials.random(using: &generator)
    loopState = LoopBoundBox(
      LoopState(sendBuffer: .allocate(byteCount: EventLoop.maximumDatagramSize, alignment: 16)),
      loop: loop)
    Self.prepareSecurity()
  }

  deinit {
    // Owners call close(); this only frees what no loop work can touch any more (the socket
    // handlers and the timer hold this object weakly). Whether a socket is closed is asked on
    // its loop: this may run on any thread (`close()` does nothing the second time).
    let state = loopState.valueInOwnersDeinit
    for socket in state.sockets {
      loop.execute { socket.close() }
    }
    state.sendBuffer.deallocate()
  }

  /// Our transport description as an offerer: binds the sockets, creates the controlling
  /// full ICE agent and starts gathering; `a=setup:actpass`. Call on the loop, once.
  ///
  /// - Throws: `PeerConnectionError.invalidState` when a description was already made, or
  ///   `.socket` when no host address could be bound.
  public func localDescriptionForOffer() throws(PeerConnectionError)
    -> PeerConnectionTransportDescription
  {
    loop.assertInEventLoop()
    guard signalingRole == nil, !state.isFinal else {
      throw .invalidState(reason: "a local description was already made")
    }
    signalingRole = .offerer
    localSetup = .actpass
    try startTransport(mode: .full, role: .controlling, remoteIsLite: false)
    return try localDescription()
  }

  /// Applies the answer's transport description (offerer side): ICE credentials and
  /// candidates (checks start), DTLS role from our `actpass` and its `a=setup`
  /// (`DTLSRole.from`), its fingerprint. Call on the loop, once, after
  /// `localDescriptionForOffer()`.
  ///
  /// - Throws: `.invalidState` out of order, `.incompatibleSetup` for an answer with
  ///   `holdconn`, `.dtls` when the endpoint cannot be made.
  public func setRemoteAnswer(_ answer: PeerConnectionTransportDescription)
    throws(PeerConnectionError)
  {
    loop.assertInEventLoop()
    guard signalingRole == .offerer, remoteDescription == nil, !state.isFinal else {
      throw .invalidState(reason: "setRemoteAnswer needs an offer made and no answer yet")
    }
    try applyRemote(answer, localSetup: .actpass)
  }

  /// Applies an offer's transport description (answerer side): binds the sockets, creates the
  /// ICE agent (lite when `configuration.iceLite`, else full and controlled — controlling if
  /// the offerer is lite), picks our `a=setup` with `DTLSSetup.answer(toOffer:)` and the DTLS
  /// role. Returns our description for the answer. Call on the loop, once.
  ///
  /// - Throws: `.invalidState` out of order, `.socket`, `.incompatibleSetup`, `.dtls`.
  public func setRemoteOffer(_ offer: PeerConnectionTransportDescription)
    throws(PeerConnectionError) -> PeerConnectionTransportDescription
  {
    loop.assertInEventLoop()
    guard signalingRole == nil, !state.isFinal else {
      throw .invalidState(reason: "a local description was already made")
    }
    signalingRole = .answerer
    let setup = DTLSSetup.answer(toOffer: offer.setup)
    localSetup = setup
    let lite = configuration.iceLite
    try startTransport(
      mode: lite ? .lite : .full, role: offer.iceLite && !lite ? .controlling : .controlled,
      remoteIsLite: offer.iceLite)
    try applyRemote(offer, localSetup: setup)
    return try localDescription()
  }

  /// Adds a trickled remote candidate. Call on the loop after the remote description.
  public func addRemoteCandidate(_ candidate: ICECandidate) {
    loop.assertInEventLoop()
    guard let agent, !state.isFinal else { return }
    agent.addRemoteCandidate(candidate, now: loop.mediaNow())
    serviceICE()
  }

  /// The peer finished trickling (RFC 8838 §8): ICE may fail once every pair failed.
  public func setRemoteEndOfCandidates() {
    loop.assertInEventLoop()
    guard let agent, !state.isFinal else { return }
    agent.setRemoteGatheringComplete(now: loop.mediaNow())
    serviceICE()
  }

  /// Our local candidates so far (host candidates right after the description was made).
  public var localCandidates: [ICECandidate] { agent?.localCandidates ?? [] }

  /// The TURN allocations that failed, with the server's reason (`ICEAgent.relayFailures`).
  public var turnAllocationFailures: [String] { agent?.relayFailures ?? [] }

  /// The addresses our sockets are bound to.
  public var localAddresses: [ICETransportAddress] { sockets.map(\.localAddress) }

  /// What the network emulation (`PeerConnectionConfiguration.networkEmulation`) did to this
  /// connection's datagrams so far, summed over its sockets; zero without emulation. Call on
  /// the loop.
  public var networkEmulationStatistics: NetworkEmulationStatistics {
    loop.assertInEventLoop()
    return sockets.reduce(NetworkEmulationStatistics()) { $0 + $1.emulationStatistics }
  }

  /// Counters and negotiated parameters now. Call on the loop.
  public var stats: PeerConnectionStats {
    loop.assertInEventLoop()
    var result = counters
    result.state = state
    result.selectedPair = selectedPair
    result.iceRole = agent?.role
    result.dtlsRole = dtlsRole
    result.protectionProfile = dtls?.negotiatedProfile
    return result
  }

  /// Closes the connection: DTLS close_notify to the peer (when DTLS finished), ICE stopped and
  /// TURN allocations released, sockets closed, timer cancelled, SRTP keys dropped; state
  /// `.closed`. Call on the loop; calling it again is harmless.
  public func close() {
    loop.assertInEventLoop()
    guard state != .closed else { return }
    if let dtls {
      let output = dtls.close(now: loop.mediaNow())
      sendDTLS(output.datagrams)
    }
    closeAgent()
    tearDown()
    setState(.closed)
  }

  // MARK: - Setup

  func localDescription() throws(PeerConnectionError) -> PeerConnectionTransportDescription {
    guard let certificate else { throw .invalidState(reason: "no certificate") }
    return PeerConnectionTransportDescription(
      iceCredentials: localCredentials,
      iceLite: configuration.iceLite && signalingRole == .answerer,
      candidates: agent?.localCandidates ?? [], endOfCandidates: endOfLocalCandidates,
      fingerprint: certificate.fingerprint, setup: localSetup)
  }

  /// Whether the local description may say `a=end-of-candidates`. Always, as before, for
  /// `.all` (host candidates are all there; later ones are trickled); under `.relay` only once
  /// the TURN allocations answered, since the description has no candidate before that.
  var endOfLocalCandidates: Bool {
    guard configuration.iceTransportPolicy == .relay, let agent else { return true }
    return agent.gatheringStarted && agent.gatheringPending == 0
  }

  private func startTransport(mode: ICEMode, role: ICERole, remoteIsLite: Bool)
    throws(PeerConnectionError)
  {
    if let given = configuration.certificate {
      certificate = given
    } else {
      do {
        certificate = try DTLSCertificate.shared
      } catch {
        throw .dtls(error)
      }
    }
    var iceConfiguration = ICEAgentConfiguration(
      mode: mode, role: role, remoteIsLite: remoteIsLite, localCredentials: localCredentials,
      stunServers: configuration.stunServers)
    iceConfiguration.turnServers = configuration.turnServers
    iceConfiguration.transportPolicy = configuration.iceTransportPolicy
    iceConfiguration.disconnectedTimeout = MediaDuration(configuration.iceDisconnectedTimeout)
    iceConfiguration.consentTimeout = MediaDuration(configuration.iceConsentTimeout)
    iceConfiguration.pacingInterval = MediaDuration(configuration.icePacingInterval)
    iceConfiguration.consentInterval = MediaDuration(configuration.iceConsentInterval)
    let agent = ICEAgent(configuration: iceConfiguration)
    self.agent = agent
    let now = loop.mediaNow()
    if configuration.iceCandidateProtocol == .tcp {
      if mode == .full && configuration.turnServers.contains(where: \.transport.isStream) {
        // The relays of TURN servers reached over TCP/TLS need a UDP base socket, though
        // nothing is sent from it (`openTURNStreams`): it offers no candidate of its own.
        try bindSockets()
        for (index, socket) in sockets.enumerated() {
          agent.addLocalSocket(index, address: socket.localAddress, relayOnly: true, now: now)
        }
      }
      try startICETCP(agent: agent, lite: mode == .lite, now: now)
    } else {
      try bindSockets()
      for (index, socket) in sockets.enumerated() {
        agent.addLocalSocket(index, address: socket.localAddress, now: now)
      }
    }
    openTURNStreams()
    agent.startGathering(now: now)
    serviceICE()
  }

  /// The host addresses candidates are made on (`PeerConnectionConfiguration.hostAddresses`).
  func hostIPs() -> [ICEIPAddress] {
    var addresses =
      configuration.hostAddresses
      ?? ICEHostAddresses.current(
        includeLoopback: configuration.allowLoopback, interfaces: configuration.hostInterfaces)
    if addresses.isEmpty && configuration.allowLoopback { addresses = [.loopbackV4] }
    if !configuration.allowLoopback { addresses.removeAll { $0.isLoopback } }
    return addresses
  }

  private func bindSockets() throws(PeerConnectionError) {
    let addresses = hostIPs()
    var lastError = EventLoopError.bindFailed(
      address: ICETransportAddress(ip: .loopbackV4, port: 0), errno: EADDRNOTAVAIL)
    for ip in addresses {
      let index = sockets.count
      do {
        let socket = try EventLoopUDPSocket(
          loop: loop, bindingTo: ICETransportAddress(ip: ip, port: 0),
          // Coalescing from the first connect on (`setState`).
          portRange: configuration.portRange, emulation: configuration.networkEmulation
        ) { [reference = WeakReference(self)] bytes, source in
          // A constant weak reference rather than `[weak self]` (see `WeakReference`).
          reference.object?.receive(bytes, from: source, socket: index)
        }
        sockets.append(socket)
      } catch {
        lastError = error
      }
    }
    guard !sockets.isEmpty else { throw .socket(lastError) }
  }

  private func applyRemote(_ remote: PeerConnectionTransportDescription, localSetup: DTLSSetup)
    throws(PeerConnectionError)
  {
    let role: DTLSRole
    do {
      role = try DTLSRole.from(localSetup: localSetup, remoteSetup: remote.setup)
    } catch {
      throw .incompatibleSetup(
        reason: "local \(localSetup.rawValue), remote \(remote.setup?.rawValue ?? "none")")
    }
    let guessed = DTLSRole.isGuessed(localSetup: localSetup, remoteSetup: remote.setup)
    guard let certificate else { throw .invalidState(reason: "no certificate") }
    do {
      dtls = try DTLSEndpoint(
        role: role, certificate: certificate,
        remoteFingerprint: remote.fingerprint,
        additionalRemoteFingerprints: Array(remote.fingerprints.dropFirst()),
        profiles: configuration.srtpProfiles,
        fallbackToClientAfter: guessed ? configuration.dtlsClientFallback : nil,
        handshakeTimeout: configuration.dtlsHandshakeTimeout)
    } catch {
      throw .dtls(error)
    }
    dtlsRole = role
    remoteDescription = remote
    guard let agent else { return }
    let now = loop.mediaNow()
    if remote.iceLite { agent.setRemoteIsLite(now: now) }
    agent.setRemoteCredentials(remote.iceCredentials, now: now)
    for candidate in remote.candidates { agent.addRemoteCandidate(candidate, now: now) }
    if remote.endOfCandidates { agent.setRemoteGatheringComplete(now: now) }
    setState(.connecting)
    connectDeadline = now + MediaDuration(configuration.connectTimeout)
    serviceICE()
    serviceWatchdog()
  }

  /// Releases sockets, the timer and the cores' keys; used by `close()` and on failure.
  func tearDown() {
    if let timer { loop.cancel(timer) }
    timer = nil
    timerDeadline = nil
    if let watchdog { loop.cancel(watchdog) }
    watchdog = nil
    for socket in sockets { socket.close() }
    closeTURNStreams()
    iceTCP.close()
    srtpOutbound = nil
    srtpInbound = nil
  }

  // MARK: - State

  func setState(_ newState: PeerConnectionState) {
    guard newState != state, !state.isFinal else { return }
    state = newState
    let firstConnect = newState == .connected && !hasConnected
    if firstConnect { hasConnected = true }
    onEvent?(.stateChanged(newState))
    // From the connect deadline to the consent deadline.
    if firstConnect { serviceWatchdog() }
    // Media flow from now on: before, the ICE checks (paced every Ta) and the DTLS handshake
    // would each wait up to the window for the next pacing timer, ≈ 50 ms more to connect.
    if firstConnect {
      for socket in sockets { socket.setCoalescing(configuration.receiveCoalescing) }
    }
  }

  func fail(_ error: PeerConnectionError) {
    guard !state.isFinal else { return }
    closeAgent()
    tearDown()
    setState(.failed(error))
  }

  /// Stops ICE and sends its last datagrams, which release the TURN allocations (Refresh with
  /// LIFETIME 0, RFC 8656 §7) instead of leaving them on the server until their lifetime ends;
  /// its other outputs no longer matter.
  private func closeAgent() {
    guard let agent else { return }
    agent.close()
    for output in agent.takeOutputs() {
      if case .send(let datagram) = output {
        send(datagram.bytes, socket: datagram.socket, to: datagram.destination)
      }
    }
  }

  /// Derives the state from ICE and DTLS after either changed.
  func updateState() {
    guard !state.isFinal, let agent else { return }
    switch agent.state {
    case .failed:
      fail(.iceFailed)
    case .disconnected:
      if state != .new { setState(.disconnected) }
    case .connected, .completed:
      if peerClosedDTLS {
        setState(.disconnected)
      } else {
        setState(srtpInbound != nil ? .connected : .connecting)
      }
    case .checking:
      setState(peerClosedDTLS ? .disconnected : .connecting)
    case .new, .closed:
      break
    }
  }
}

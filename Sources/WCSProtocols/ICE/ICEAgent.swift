/// A Sans-I/O ICE agent (RFC 8445) for one data stream with one component, over UDP or TCP
/// (RFC 6544 active and passive host candidates, `ICEAgent+TCP.swift`).
///
/// Inputs: local sockets (`addLocalSocket`), remote credentials and candidates, end of remote
/// candidates, received datagrams (`receive`) and timer ticks (`handleTimeout`). Every input takes
/// `now`, a `MediaInstant` on one monotonic clock the caller chooses (the event loop's, a
/// virtual one in tests); deadlines come back on that clock. Outputs come
/// from `takeOutputs()` in order: datagrams to send (socket and destination), state changes, local
/// candidates, the selected pair. `nextDeadline` says when to call `handleTimeout` next.
///
/// Full mode gathers server-reflexive candidates, paces checks every Ta (50 ms), answers checks,
/// learns peer-reflexive candidates, resolves role conflicts (§7.3.1.1), nominates as the
/// controlling agent (regular nomination, §8.1.1) and checks consent on the selected pair
/// (RFC 7675). Lite mode (§2.5) only answers checks and selects the pair the peer nominates.
/// TURN relayed candidates (RFC 8656) use negative pseudo socket IDs in pairs; application
/// bytes for them go through `applicationDatagram` or `relayDatagrams`. With
/// `ICETransportPolicy.relay` only relayed candidates are signalled and paired.
///
/// Not thread-safe: call it from one thread or queue.
public final class ICEAgent {
  /// The configuration given at creation.
  public let configuration: ICEAgentConfiguration
  /// The current role; changes after a role conflict.
  public internal(set) var role: ICERole
  /// Whether the peer is an ICE-lite agent: `configuration.remoteIsLite`, or told later by
  /// `setRemoteIsLite(now:)` (an offerer learns it from the answer).
  public private(set) var remoteIsLite: Bool
  /// The current connection state.
  public internal(set) var state: ICEConnectionState = .new
  /// The pair media uses, once one is nominated.
  public internal(set) var selectedPair: ICECandidatePair?
  /// Local candidates so far (host, then server-reflexive).
  public internal(set) var localCandidates: [ICECandidate] = []
  /// Remote candidates so far (signalled, then peer-reflexive).
  public internal(set) var remoteCandidates: [ICECandidate] = []
  /// Signalled remote candidates refused by `addRemoteCandidate`: past
  /// `ICEAgentConfiguration.maximumRemoteCandidates` or not UDP component 1.
  public internal(set) var refusedRemoteCandidates = 0
  /// Index into `remoteCandidates` by address, so intake stays O(1) per candidate.
  var remoteCandidateIndex: [ICETransportAddress: Int] = [:]
  /// The peer's credentials, once known.
  public internal(set) var remoteCredentials: ICECredentials?
  /// Requests or responses dropped because MESSAGE-INTEGRITY did not verify.
  public internal(set) var integrityFailures = 0
  /// Datagrams that looked like STUN but did not decode.
  public internal(set) var malformedMessages = 0

  struct LocalSocket {
    var id: ICESocketID
    var address: ICETransportAddress
    var localPreference: UInt16
    var host: ICECandidate
    /// For TCP (RFC 6544): the peer address of a connection socket (`ICEAgent+TCP.swift`);
    /// `nil` for a UDP socket, a relay or a TCP candidate's base.
    var connectedTo: ICETransportAddress? = nil
    /// A UDP socket that is only the base of TURN allocations (`addLocalSocket(relayOnly:)`):
    /// no host or server-reflexive candidate, no direct checks.
    var relayOnly = false

    /// Whether the socket's own address may be a candidate and take checks: a UDP socket not
    /// limited to relaying, under the `.all` policy.
    func offersHost(under policy: ICETransportPolicy) -> Bool {
      policy == .all && !relayOnly
    }
  }

  /// A TURN allocation: its client, the driver socket it lives on, and the pseudo socket ID
  /// (negative) its relayed candidate uses in pairs.
  struct Relay {
    var client: TURNClient
    var baseSocket: ICESocketID
    var pseudoSocket: ICESocketID
    var allocated = false
    /// Why the allocation failed or ended (`TURNEvent.failed`), e.g. "allocate: 486
    /// Allocation Quota Reached"; `nil` while it works or is pending.
    var failure: String?
  }

  /// One line per TURN allocation that failed, naming the server and its transport and the
  /// reason (the error code and phrase the server gave, RFC 8656 §6.4 / §18), e.g.
  /// "127.0.0.1:3478 udp: allocate: 486 Allocation Quota Reached"; at most one per relay.
  public var relayFailures: [String] {
    relays.compactMap { relay in
      relay.failure.map {
        "\(relay.client.server.address) \(relay.client.server.transport.rawValue): \($0)"
      }
    }
  }

  var sockets: [LocalSocket] = []
  var relays: [Relay] = []
  var currentTime = MediaInstant(nanoseconds: 0)
  var pairs: [ICEPairEntry] = []
  var triggeredQueue: [ICEPairKey] = []
  var transactions: [STUNTransactionID: ICETransaction] = [:]
  var serverReflexiveQueue: [(socket: ICESocketID, server: ICETransportAddress)] = []
  package var gatheringPending = 0
  package var gatheringStarted = false
  var lastPacedSend = MediaInstant.distantPast
  var firstValidTime: MediaInstant?
  var remoteGatheringComplete = false
  var consentNextSend: MediaInstant?
  var lastConsentResponse: MediaInstant?
  /// Agent time of the last Binding request from the peer that passed
  /// MESSAGE-INTEGRITY, `nil` before the first. A lite agent sends no consent checks of its
  /// own, so this is how its owner sees whether the peer is still there (RFC 7675 §5.1).
  public internal(set) var lastAuthenticatedRequest: MediaInstant?
  /// Time between sending our latest successful connectivity check and its response, from
  /// checks sent once only (a response to a retransmitted one could answer either copy:
  /// Karn's rule); `nil` before the first. A lite agent sends no checks, so it never has one.
  public internal(set) var roundTripTime: MediaDuration?
  var peerReflexiveCount = 0
  /// (local socket, remote address) combinations that proved the peer's credentials: an
  /// authenticated Binding request from them, or a verified success response to our check.
  var validatedAddresses: Set<ICEPairKey> = []
  let localKey: STUNIntegrityKey
  var remoteKey: STUNIntegrityKey?
  var random: ICERandom
  var outputs: [ICEOutput] = []

  /// Limit of the authenticated-address set (`validatedAddresses`); the checklist limit.
  var maximumPairs: Int { configuration.maximumPairs }
  /// Pair keys in `pairs`, so a duplicate pair is found without a scan.
  var pairKeys: [ICEPairKey: Int] = [:]
  /// Connection sockets of active TCP candidates, by (base, passive remote address).
  var tcpConnections: [ICEPairKey: ICESocketID] = [:]
  /// TCP connection sockets made so far (their IDs count up from
  /// `ICEAgent.firstTCPConnectionSocket`).
  var tcpConnectionCount = 0

  /// Creates an agent. A lite agent is always controlled; a full agent facing a lite peer is
  /// always controlling (RFC 8445 §6.1.1).
  public init(configuration: ICEAgentConfiguration) {
    self.configuration = configuration
    remoteIsLite = configuration.remoteIsLite
    if configuration.mode == .lite {
      role = .controlled
    } else if configuration.remoteIsLite {
      role = .controlling
    } else {
      role = configuration.role
    }
    localKey = STUNIntegrityKey(shortTermPassword: configuration.localCredentials.pwd)
    random = ICERandom(seed: configuration.randomSeed)
  }

  /// Removes and returns the outputs produced so far, oldest first.
  public func takeOutputs() -> [ICEOutput] {
    defer { outputs.removeAll(keepingCapacity: true) }
    return outputs
  }

  /// Adds a bound local UDP socket; its address becomes a host candidate (emitted as
  /// `.localCandidate`) and is paired with every remote candidate of the same family. Sockets
  /// added first get the higher local preference. Socket IDs must be ≥ 0: negative IDs name
  /// TURN relays in pairs. Under `ICETransportPolicy.relay`, or with `relayOnly` (ICE-TCP with
  /// TURN over TCP/TLS: the offer carries TCP host candidates only, yet the relays need a UDP
  /// base), the socket is only a base for TURN allocations: no host candidate is emitted or
  /// paired.
  public func addLocalSocket(
    _ socket: ICESocketID, address: ICETransportAddress, relayOnly: Bool = false, now: MediaInstant
  ) {
    guard socket >= 0, !sockets.contains(where: { $0.id == socket }) else { return }
    let preference = UInt16(max(0, 65535 - sockets.count))
    let host = ICECandidate(
      foundation: "\(socket + 1)",
      priority: ICECandidate.priority(type: .host, localPreference: preference),
      address: address, type: .host)
    sockets.append(
      LocalSocket(
        id: socket, address: address, localPreference: preference, host: host,
        relayOnly: relayOnly))
    guard !relayOnly, configuration.transportPolicy == .all else {
      service(now: now)
      return
    }
    localCandidates.append(host)
    outputs.append(.localCandidate(host))
    if configuration.mode == .full {
      for remote in remoteCandidates { addPair(socket: socket, remote: remote) }
    }
    service(now: now)
  }

  /// Starts gathering server-reflexive candidates from the configured STUN servers (one Binding
  /// request per socket and server of the same family, paced by Ta). Emits `.gatheringComplete`
  /// when every request answered or timed out (immediately when there is nothing to ask).
  public func startGathering(now: MediaInstant) {
    guard !gatheringStarted else { return }
    gatheringStarted = true
    if configuration.mode == .full {
      for socket in sockets
      where socket.host.transport == .udp && socket.offersHost(under: configuration.transportPolicy)
      {
        for server in configuration.stunServers where server.ip.isIPv6 == socket.address.ip.isIPv6 {
          serverReflexiveQueue.append((socket.id, server))
        }
      }
    }
    if configuration.mode == .full {
      // TURN allocations live on UDP sockets (over a TCP/TLS stream for those transports).
      for socket in sockets where socket.host.transport == .udp {
        for server in configuration.turnServers
        where server.address.ip.isIPv6 == socket.address.ip.isIPv6 {
          let client = TURNClient(
            server: server, socket: socket.id,
            randomSeed: configuration.randomSeed == nil ? nil : random.next())
          relays.append(
            Relay(client: client, baseSocket: socket.id, pseudoSocket: -1 - relays.count))
          client.start(now: now)
        }
      }
    }
    gatheringPending = serverReflexiveQueue.count + relays.count
    if gatheringPending == 0 { outputs.append(.gatheringComplete) }
    service(now: now)
  }

  /// The peer declared `a=ice-lite` (RFC 8839 §5.3), e.g. in the answer to our offer: a full
  /// agent becomes controlling (RFC 8445 §6.1.1) and nominates its first valid pair at once
  /// when nothing better is pending, without waiting for a pacing slot.
  public func setRemoteIsLite(now: MediaInstant) {
    guard !remoteIsLite else { return }
    remoteIsLite = true
    if configuration.mode == .full { switchRole(to: .controlling) }
    service(now: now)
  }

  /// Sets the peer's `ice-ufrag`/`ice-pwd` (from its SDP); checks start once they are known.
  public func setRemoteCredentials(_ credentials: ICECredentials, now: MediaInstant) {
    remoteCredentials = credentials
    remoteKey = STUNIntegrityKey(shortTermPassword: credentials.pwd)
    service(now: now)
  }

  /// Adds a remote candidate (from SDP or trickle), UDP or TCP, component 1 only; it pairs
  /// with local candidates of its transport (TCP: passive remote with active local). A
  /// candidate with the address of a known peer-reflexive one replaces it (RFC 8445 §7.3.1.3).
  /// Each call costs O(1) in the number of candidates so far (address index); past
  /// `ICEAgentConfiguration.maximumRemoteCandidates` the candidate is refused and counted in
  /// `refusedRemoteCandidates`, so an offer of 100 000 candidates cannot stall the caller.
  /// Returns what happened to the candidate.
  @discardableResult
  public func addRemoteCandidate(_ candidate: ICECandidate, now: MediaInstant)
    -> ICERemoteCandidateIntake
  {
    guard candidate.component == 1 else {
      refusedRemoteCandidates += 1
      return .unsupportedComponent
    }
    if let index = remoteCandidateIndex[candidate.address] {
      guard remoteCandidates[index].type == .peerReflexive else { return .duplicate }
      remoteCandidates[index] = candidate
      for entryIndex in pairs.indices
      where pairs[entryIndex].pair.remote.address == candidate.address {
        pairs[entryIndex].pair.remote = candidate
      }
      return .replacedPeerReflexive
    }
    guard remoteCandidates.count < configuration.maximumRemoteCandidates else {
      refusedRemoteCandidates += 1
      return .limitReached
    }
    appendRemoteCandidate(candidate)
    if configuration.mode == .full {
      for socket in sockets { addPair(socket: socket.id, remote: candidate) }
    }
    service(now: now)
    return .added
  }

  func appendRemoteCandidate(_ candidate: ICECandidate) {
    remoteCandidateIndex[candidate.address] = remoteCandidates.count
    remoteCandidates.append(candidate)
  }

  /// The peer signalled end-of-candidates: once every check failed the agent fails
  /// (RFC 8838 §8, RFC 8445 §8.1.2).
  public func setRemoteGatheringComplete(now: MediaInstant) {
    remoteGatheringComplete = true
    if state == .connected { setState(.completed) }
    service(now: now)
  }

  /// Stops the agent: no more outputs except `.stateChanged(.closed)`.
  public func close() {
    guard state != .closed else { return }
    for relay in relays {
      relay.client.close(now: currentTime)
      for datagram in relay.client.takeDatagrams() { outputs.append(.send(datagram)) }
    }
    transactions.removeAll()
    triggeredQueue.removeAll()
    serverReflexiveQueue.removeAll()
    consentNextSend = nil
    setState(.closed)
  }

  func setState(_ newState: ICEConnectionState) {
    guard state != newState, state != .closed else { return }
    state = newState
    outputs.append(.stateChanged(newState))
  }

  func socket(_ id: ICESocketID) -> LocalSocket? {
    sockets.first { $0.id == id }
  }

  func pairIndex(_ key: ICEPairKey) -> Int? {
    pairKeys[key]
  }

  func pairPriority(_ entry: ICEPairEntry) -> UInt64 {
    entry.pair.priority(localIsControlling: role == .controlling)
  }

  /// Adds a checklist entry if new: Waiting when no other pair of its foundation is active,
  /// Frozen otherwise (RFC 8445 §6.1.2.6). Returns its index.
  @discardableResult
  func addPair(socket base: ICESocketID, remote: ICECandidate) -> Int? {
    guard let baseSocket = socket(base), baseSocket.address.ip.isIPv6 == remote.address.ip.isIPv6,
      base < 0 || baseSocket.offersHost(under: configuration.transportPolicy),
      let id = pairSocket(for: baseSocket, remote: remote), let socket = socket(id)
    else {
      return nil
    }
    let key = ICEPairKey(socket: id, remote: remote.address)
    if let existing = pairIndex(key) { return existing }
    // RFC 8445 §6.1.2.5: a checklist is limited (100 pairs by default).
    guard pairs.count < maximumPairs else { return nil }
    let foundation = socket.host.foundation + "/" + remote.foundation
    let active = pairs.contains {
      $0.pair.local.foundation + "/" + $0.pair.remote.foundation == foundation
        && $0.state != .frozen
    }
    pairs.append(
      ICEPairEntry(
        pair: ICECandidatePair(socket: id, local: socket.host, remote: remote),
        state: active ? .frozen : .waiting))
    pairKeys[key] = pairs.count - 1
    if id < 0 { relayPairAdded(relay: id, remote: remote) }
    return pairs.count - 1
  }
}

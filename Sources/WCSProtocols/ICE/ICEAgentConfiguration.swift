/// Short-term ICE credentials: `ice-ufrag` and `ice-pwd` (RFC 8839 §5.4).
public struct ICECredentials: Hashable, Sendable {
  /// The username fragment (4-256 ice-chars).
  public var ufrag: String
  /// The password (22-256 ice-chars); its UTF-8 bytes are the MESSAGE-INTEGRITY key.
  public var pwd: String

  /// Makes credentials from their two parts.
  public init(ufrag: String, pwd: String) {
    self.ufrag = ufrag
    self.pwd = pwd
  }

  /// Random credentials: 8-character ufrag, 24-character password, from ice-chars.
  public static func random(using generator: inout some RandomNumberGenerator) -> ICECredentials {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    func draw(_ count: Int) -> String {
      String(
        (0..<count).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }
    return ICECredentials(ufrag: draw(8), pwd: draw(24))
  }
}

/// The ICE role (RFC 8445 §6.1.1).
public enum ICERole: String, Sendable, Hashable {
  /// Nominates the pair to use.
  case controlling
  /// Honours the controlling agent's nomination.
  case controlled
}

/// Full or lite implementation (RFC 8445 §2.5).
public enum ICEMode: String, Sendable, Hashable {
  /// Gathers, checks and nominates.
  case full
  /// Answers checks only and never sends one; always controlled. For servers with public
  /// addresses (our local server).
  case lite
}

/// Settings of an `ICEAgent`. Times are seconds.
public struct ICEAgentConfiguration: Sendable {
  /// Full or lite.
  public var mode: ICEMode
  /// The starting role: controlling for the offerer (RFC 8445 §6.1.1). Forced to controlling
  /// when `remoteIsLite` and we are full; forced to controlled when we are lite.
  public var role: ICERole
  /// Whether the peer declared `a=ice-lite`.
  public var remoteIsLite: Bool
  /// Our credentials.
  public var localCredentials: ICECredentials
  /// The 64-bit role tie-breaker (RFC 8445 §7.3.1.1); random by default.
  public var tieBreaker: UInt64
  /// STUN servers for server-reflexive candidates.
  public var stunServers: [ICETransportAddress]
  /// TURN servers for relayed candidates (RFC 8656, UDP), one allocation per IPv4/IPv6 socket
  /// of the server's family.
  public var turnServers: [ICETURNServer]
  /// Which local candidates are gathered and paired; `.all` by default.
  public var transportPolicy: ICETransportPolicy
  /// Pacing interval Ta between new checks (RFC 8445 §14.2): 50 ms.
  public var pacingInterval: MediaDuration
  /// First retransmission timeout of a check (and of a server-reflexive request);
  /// doubles up to `maxRetransmissionTimeout`. 100 ms by default: RFC 8489 §6.2.1 asks for at
  /// least 500 ms except where other mechanisms bound the sending rate, as ICE's Ta pacing does
  /// for checks (RFC 8445 §14.3); libwebrtc re-sends a check every 48 ms until the pair works.
  /// A lost check or response costs this much setup time, so at 10 % loss per datagram one
  /// connection in five pays it once (250 ms before).
  public var initialRetransmissionTimeout: MediaDuration
  /// Cap of the doubling retransmission timeout.
  public var maxRetransmissionTimeout: MediaDuration
  /// How many times a check is sent before the pair fails (RFC 8489 Rc = 7).
  public var maxTransmissions: Int
  /// How long the controlling agent waits for a better pair after the first valid one before
  /// nominating the best valid pair.
  public var nominationDelay: MediaDuration
  /// Consent check interval (RFC 7675 §5.1: 5 s, randomised by ±20 %).
  public var consentInterval: MediaDuration
  /// Without a consent response for this long the state becomes disconnected.
  public var disconnectedTimeout: MediaDuration
  /// Without a consent response for this long consent is lost: failed (RFC 7675 §5.1: 30 s).
  public var consentTimeout: MediaDuration
  /// Seed for transaction IDs and jitter; `nil` uses the system CSPRNG (tests pass a seed).
  public var randomSeed: UInt64?
  /// SOFTWARE attribute value, or `nil` to omit it.
  public var software: String?
  /// Most remote candidates kept (signalled and peer-reflexive together): 100. Candidates
  /// come from the peer's SDP and the network, so past this `addRemoteCandidate` refuses them
  /// (`.limitReached`) at constant cost.
  public var maximumRemoteCandidates: Int
  /// Checklist size limit (RFC 8445 §6.1.2.5: 100 pairs by default).
  public var maximumPairs: Int

  /// A configuration with the RFC defaults.
  public init(
    mode: ICEMode = .full, role: ICERole = .controlling, remoteIsLite: Bool = false,
    localCredentials: ICECredentials, tieBreaker: UInt64? = nil,
    stunServers: [ICETransportAddress] = [], randomSeed: UInt64? = nil
  ) {
    self.mode = mode
    self.role = role
    self.remoteIsLite = remoteIsLite
    self.localCredentials = localCredentials
    var generator = SystemRandomNumberGenerator()
    self.tieBreaker = tieBreaker ?? UInt64.random(in: .min ... .max, using: &generator)
    self.stunServers = stunServers
    self.turnServers = []
    self.transportPolicy = .all
    self.pacingInterval = .milliseconds(50)
    self.initialRetransmissionTimeout = .milliseconds(100)
    self.maxRetransmissionTimeout = .milliseconds(1600)
    self.maxTransmissions = 7
    self.nominationDelay = .milliseconds(200)
    self.consentInterval = .seconds(5)
    self.disconnectedTimeout = .seconds(10)
    self.consentTimeout = .seconds(30)
    self.randomSeed = randomSeed
    self.software = nil
    self.maximumRemoteCandidates = 100
    self.maximumPairs = 100
  }
}

/// The agent's overall state, as WebRTC's `RTCIceConnectionState` names it.
public enum ICEConnectionState: String, Sendable, Hashable {
  /// Nothing happened yet.
  case new
  /// Checks are running.
  case checking
  /// A pair is selected; media may flow.
  case connected
  /// Selected and no more checks to do (remote gathering complete).
  case completed
  /// Every pair failed, or consent was lost (RFC 7675).
  case failed
  /// Consent responses stopped for `disconnectedTimeout`; may come back.
  case disconnected
  /// `close()` was called.
  case closed
}

/// A datagram the driver must send.
public struct ICEDatagram: Equatable, Sendable {
  /// The local socket to send from.
  public var socket: ICESocketID
  /// Where to send it.
  public var destination: ICETransportAddress
  /// The UDP payload.
  public var bytes: [UInt8]

  /// Makes a datagram.
  public init(socket: ICESocketID, destination: ICETransportAddress, bytes: [UInt8]) {
    self.socket = socket
    self.destination = destination
    self.bytes = bytes
  }
}

/// What an `ICEAgent` asks of its driver and tells its owner, in order.
public enum ICEOutput: Equatable, Sendable {
  /// Send this datagram.
  case send(ICEDatagram)
  /// The connection state changed.
  case stateChanged(ICEConnectionState)
  /// A new local candidate to signal (trickle).
  case localCandidate(ICECandidate)
  /// Local gathering finished (send end-of-candidates).
  case gatheringComplete
  /// The selected pair (media goes here) changed.
  case selectedPair(ICECandidatePair)
  /// The role switched after a role conflict (RFC 8445 §7.3.1.1).
  case roleChanged(ICERole)
}

/// What `ICEAgent.addRemoteCandidate` did with a candidate.
public enum ICERemoteCandidateIntake: Sendable, Hashable {
  /// Kept and paired with every local socket of its family (checklist permitting).
  case added
  /// Replaced the peer-reflexive candidate learnt from the same address (RFC 8445 §7.3.1.3).
  case replacedPeerReflexive
  /// A candidate with this address is already known; ignored.
  case duplicate
  /// Refused: not UDP component 1 (this agent has one component).
  case unsupportedComponent
  /// Refused: the agent already holds `ICEAgentConfiguration.maximumRemoteCandidates`.
  case limitReached
}

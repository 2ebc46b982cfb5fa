/// Identifies one local UDP socket of the driver; the agent says which socket to send from.
public typealias ICESocketID = Int

/// Candidate types with their recommended type preferences (RFC 8445 §5.1.2.2).
public enum ICECandidateType: String, Sendable, Hashable, CaseIterable {
  /// A local interface address.
  case host
  /// Learned from an incoming or outgoing check (peer-reflexive).
  case peerReflexive = "prflx"
  /// The address a STUN server saw (server-reflexive).
  case serverReflexive = "srflx"
  /// An address on a TURN server.
  case relayed = "relay"

  /// Type preference: host 126, prflx 110, srflx 100, relay 0 (RFC 8445 §5.1.2.2).
  public var typePreference: UInt32 {
    switch self {
    case .host: return 126
    case .peerReflexive: return 110
    case .serverReflexive: return 100
    case .relayed: return 0
    }
  }
}

/// The transport protocol of a candidate: UDP (RFC 8445) or TCP (RFC 6544).
public enum ICETransportProtocol: String, Sendable, Hashable, CaseIterable {
  /// Datagrams on a UDP socket.
  case udp
  /// RFC 4571 framed datagrams on a TCP connection (RFC 6544 §3).
  case tcp
}

/// The connection role of a TCP candidate (RFC 6544 §4.5 `tcptype`).
public enum ICETCPType: String, Sendable, Hashable, CaseIterable {
  /// Opens connections; signalled with port 9 (the discard port, RFC 6544 §4.5).
  case active
  /// Accepts connections.
  case passive
  /// Simultaneous open (both sides connect at once); never paired by this agent.
  case simultaneousOpen = "so"

  /// The direction preference of a host candidate, 0...7: active 6, passive 4, S-O 2
  /// (RFC 6544 §4.2), so a pair where we connect out beats one where we wait.
  public var directionPreference: UInt16 {
    switch self {
    case .active: return 6
    case .passive: return 4
    case .simultaneousOpen: return 2
    }
  }
}

/// An ICE candidate (RFC 8445 §5.1): a transport address with its type, priority and
/// foundation; UDP, or TCP with its `tcptype` (RFC 6544). Component 1 only (RTP and RTCP are
/// multiplexed, RFC 8843 bundle + rtcp-mux).
public struct ICECandidate: Hashable, Sendable, CustomStringConvertible {
  /// Foundation: equal for candidates of the same type, base IP and server (RFC 8445 §5.1.1.3).
  public var foundation: String
  /// Component ID, 1 for RTP.
  public var component: UInt8
  /// Priority (RFC 8445 §5.1.2.1).
  public var priority: UInt32
  /// The transport address.
  public var address: ICETransportAddress
  /// The candidate type.
  public var type: ICECandidateType
  /// The related address (`raddr`/`rport`): the base of a reflexive or relayed candidate.
  public var relatedAddress: ICETransportAddress?
  /// UDP or TCP.
  public var transport: ICETransportProtocol
  /// For TCP: active, passive or S-O (RFC 6544 §4.5); `nil` for UDP.
  public var tcpType: ICETCPType?

  /// Makes a candidate from its fields.
  public init(
    foundation: String, component: UInt8 = 1, priority: UInt32, address: ICETransportAddress,
    type: ICECandidateType, relatedAddress: ICETransportAddress? = nil,
    transport: ICETransportProtocol = .udp, tcpType: ICETCPType? = nil
  ) {
    self.transport = transport
    self.tcpType = transport == .tcp ? tcpType : nil
    self.foundation = foundation
    self.component = component
    self.priority = priority
    self.address = address
    self.type = type
    self.relatedAddress = relatedAddress
  }

  /// priority = 2^24 × type preference + 2^8 × local preference + (256 − component ID)
  /// (RFC 8445 §5.1.2.1). `localPreference` is 0...65535.
  public static func priority(type: ICECandidateType, localPreference: UInt16, component: UInt8 = 1)
    -> UInt32
  {
    (type.typePreference << 24) | (UInt32(localPreference) << 8) | (256 - UInt32(max(component, 1)))
  }

  /// The local preference of a TCP candidate (RFC 6544 §4.2): 2^13 × direction preference +
  /// `otherPreference` (0...8191, clamped), so UDP host candidates (local preference near
  /// 65535) stay ahead of TCP ones of the same type.
  public static func tcpLocalPreference(_ tcpType: ICETCPType, otherPreference: UInt16)
    -> UInt16
  {
    tcpType.directionPreference << 13 | min(otherPreference, 8191)
  }

  /// The SDP attribute value without `a=`: `candidate:<foundation> 1 udp|tcp <priority> <ip>
  /// <port> typ <type> [raddr <ip> rport <port>] [tcptype <tcptype>]` (RFC 8839 §5.1,
  /// RFC 6544 §4.5).
  public var description: String {
    var text =
      "candidate:\(foundation) \(component) \(transport.rawValue) \(priority) \(address.ip) \(address.port) typ \(type.rawValue)"
    if let related = relatedAddress {
      text += " raddr \(related.ip) rport \(related.port)"
    }
    if let tcpType { text += " tcptype \(tcpType.rawValue)" }
    return text
  }
}

/// An ICE candidate pair (RFC 8445 §6.1.2): the local candidate (with the socket that sends for
/// it) and the remote candidate.
public struct ICECandidatePair: Hashable, Sendable, CustomStringConvertible {
  /// The driver socket the pair sends from (the local candidate's base).
  public var socket: ICESocketID
  /// The local candidate.
  public var local: ICECandidate
  /// The remote candidate.
  public var remote: ICECandidate

  /// Makes a pair.
  public init(socket: ICESocketID, local: ICECandidate, remote: ICECandidate) {
    self.socket = socket
    self.local = local
    self.remote = remote
  }

  /// Pair priority 2^32 × min(G, D) + 2 × max(G, D) + (G > D ? 1 : 0), G the controlling
  /// agent's candidate priority, D the controlled one's (RFC 8445 §6.1.2.3).
  public func priority(localIsControlling: Bool) -> UInt64 {
    let controlling = UInt64(localIsControlling ? local.priority : remote.priority)
    let controlled = UInt64(localIsControlling ? remote.priority : local.priority)
    return (min(controlling, controlled) << 32) + 2 * max(controlling, controlled)
      + (controlling > controlled ? 1 : 0)
  }

  /// `local -> remote`.
  public var description: String { "\(local.address) -> \(remote.address)" }
}

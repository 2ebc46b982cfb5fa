/// One candidate of the selected pair, as WebRTC's `RTCIceCandidateStats` describes it.
public struct MediaCandidateStats: Sendable, Equatable, CustomStringConvertible {
  /// `host`, `srflx`, `prflx` or `relay` (RFC 8445 §5.1.1, RFC 8839 §5.1 `typ`).
  public var candidateType: String
  /// The candidate's transport: `udp` or `tcp` (RFC 6544).
  public var transportProtocol: String
  /// For a local `relay` candidate, how we reach the TURN server: `udp`, `tcp` or `tls`
  /// (`RTCIceCandidateStats.relayProtocol`); `nil` otherwise.
  public var relayProtocol: String?
  /// The candidate's IP address as text (`192.0.2.1`, `2001:db8::1`).
  public var address: String
  /// Its port.
  public var port: UInt16

  /// Makes a candidate description.
  public init(
    candidateType: String, transportProtocol: String, relayProtocol: String? = nil,
    address: String, port: UInt16
  ) {
    self.candidateType = candidateType
    self.transportProtocol = transportProtocol
    self.relayProtocol = relayProtocol
    self.address = address
    self.port = port
  }

  /// `relay udp 127.0.0.1:49152 (via tcp)`.
  public var description: String {
    let host = address.contains(":") ? "[\(address)]" : address
    return "\(candidateType) \(transportProtocol) \(host):\(port)"
      + (relayProtocol.map { " (via \($0))" } ?? "")
  }
}

/// What ICE chose for a connection: the policy in force, the pair media uses, and the
/// configured servers that could not be used (with why).
public struct MediaICEStats: Sendable, Equatable {
  /// `.all` or `.relay`.
  public var transportPolicy: MediaICETransportPolicy
  /// The local candidate of the selected pair; `nil` until ICE selected one.
  public var localCandidate: MediaCandidateStats?
  /// The remote candidate of the selected pair; `nil` until ICE selected one.
  public var remoteCandidate: MediaCandidateStats?
  /// One line per ICE server left out (unsupported transport, name that did not resolve).
  public var notes: [String]

  /// Makes the value.
  public init(
    transportPolicy: MediaICETransportPolicy, localCandidate: MediaCandidateStats? = nil,
    remoteCandidate: MediaCandidateStats? = nil, notes: [String] = []
  ) {
    self.transportPolicy = transportPolicy
    self.localCandidate = localCandidate
    self.remoteCandidate = remoteCandidate
    self.notes = notes
  }
}

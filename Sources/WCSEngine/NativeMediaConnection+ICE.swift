import WCSMediaSeam
import WCSPeerConnection
import WCSProtocols

/// What ICE chose, for the stats, and what it tried, for the failure reason.
extension NativeMediaConnection {
  /// Reads what ICE chose: the policy, the selected pair and the servers left out; `nil`
  /// before the offer made a transport. `completion` runs on the loop.
  public func iceStatistics(completion: @escaping @Sendable (MediaICEStats?) -> Void) {
    loop.execute { completion(self.iceStatistics()) }
  }

  /// The policy, selected pair and unusable servers; `nil` before the offer made a transport.
  func iceStatistics() -> MediaICEStats? {
    guard let peerConnection else { return nil }
    let configuration = peerConnection.configuration
    var stats = MediaICEStats(
      transportPolicy: configuration.iceTransportPolicy == .relay ? .relay : .all,
      notes: iceServerNotes)
    if let pair = peerConnection.stats.selectedPair {
      stats.localCandidate = Self.candidateStats(pair.local, configuration: configuration)
      stats.remoteCandidate = Self.candidateStats(pair.remote, configuration: nil)
    }
    return stats
  }

  /// `RTCIceCandidateStats`' view of `candidate`; `configuration` (ours) gives the relay
  /// protocol of a local relayed candidate.
  static func candidateStats(
    _ candidate: ICECandidate, configuration: PeerConnectionConfiguration?
  ) -> MediaCandidateStats {
    MediaCandidateStats(
      candidateType: candidate.type.rawValue,
      transportProtocol: NativeICEServers.candidateProtocol(candidate),
      relayProtocol: configuration.flatMap {
        NativeICEServers.relayProtocol(candidate, configuration: $0)
      },
      address: candidate.address.ip.description, port: candidate.address.port)
  }

  /// Why no pair could work, said with what was tried: the candidate types on each side, the
  /// servers left out, and the likely cause and cure (RFC 8445 §7.2.5.3: every pair failed).
  func noCandidatePairReason() -> String {
    let local = peerConnection?.localCandidates ?? []
    let remote = peerConnection?.remoteDescription?.candidates ?? []
    var parts = ["local \(Self.summary(local))", "remote \(Self.summary(remote))"]
    parts += iceServerNotes
    let localProtocols = Set(local.map(\.transport))
    let remoteProtocols = Set(remote.map(\.transport))
    if !local.isEmpty, !remote.isEmpty, localProtocols.isDisjoint(with: remoteProtocols) {
      // No pair could even be formed, so TURN or blocked UDP is not the question.
      parts.append(
        remoteProtocols == [.tcp]
          ? "the server offers ICE-TCP only: publish/play with transport TCP"
          : "the server offers no TCP candidate: use transport UDP")
      return parts.joined(separator: "; ")
    }
    let relayed = local.contains { $0.type == .relayed }
    let turnConfigured = !(peerConnection?.configuration.turnServers.isEmpty ?? true)
    if relayed {
      parts.append("the TURN relay did not reach the server either")
    } else if turnConfigured {
      let failures = peerConnection?.turnAllocationFailures ?? []
      parts.append(
        "no TURN allocation succeeded"
          + (failures.isEmpty ? "" : " (\(failures.joined(separator: "; ")))"))
    } else {
      parts.append("UDP blocked? configure TURN over TCP (turn:host?transport=tcp or turns:)")
    }
    return parts.joined(separator: "; ")
  }

  /// `2 host udp, 1 relay udp` or `none`.
  static func summary(_ candidates: [ICECandidate]) -> String {
    var counts: [(String, Int)] = []
    for candidate in candidates {
      let key = "\(candidate.type.rawValue) \(NativeICEServers.candidateProtocol(candidate))"
      if let index = counts.firstIndex(where: { $0.0 == key }) {
        counts[index].1 += 1
      } else {
        counts.append((key, 1))
      }
    }
    return counts.isEmpty ? "none" : counts.map { "\($0.1) \($0.0)" }.joined(separator: ", ")
  }
}

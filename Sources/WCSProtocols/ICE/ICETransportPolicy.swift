/// Which local candidates ICE may use, as the W3C `RTCIceTransportPolicy` names it
/// (WebRTC 1.0 §4.2.1; RFC 8828 mode 4 for `.relay`).
public enum ICETransportPolicy: String, Sendable, Hashable {
  /// Host, server-reflexive and relayed candidates are gathered, signalled and paired.
  case all
  /// Only relayed (TURN, RFC 8656) candidates are gathered, signalled and paired: host
  /// addresses are never revealed to the peer, no server-reflexive candidate is gathered,
  /// and STUN arriving directly on a host socket (not from a TURN server) is ignored. The
  /// sockets are still bound, as the TURN allocations' bases. Needs `turnServers` and full
  /// ICE; an ICE-lite agent gathers nothing under this policy.
  case relay
}

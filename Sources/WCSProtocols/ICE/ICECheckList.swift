/// The state of a candidate pair in the checklist (RFC 8445 §6.1.2.6).
enum ICEPairState: Sendable {
  case frozen, waiting, inProgress, succeeded, failed
}

/// A checklist entry: the pair plus its check state.
struct ICEPairEntry {
  var pair: ICECandidatePair
  var state: ICEPairState
  /// A check on it succeeded: the pair is in the valid list (RFC 8445 §7.2.5.3.2).
  var valid = false
  /// The pair is nominated (RFC 8445 §8.1.1).
  var nominated = false
  /// Controlled: USE-CANDIDATE arrived before the pair was valid; nominate when it becomes valid.
  var nominateOnSuccess = false
  /// Controlling: the next check carries USE-CANDIDATE.
  var nominating = false

  var key: ICEPairKey { ICEPairKey(socket: pair.socket, remote: pair.remote.address) }
}

/// Identifies a pair: the local socket (base) and the remote address.
struct ICEPairKey: Hashable {
  var socket: ICESocketID
  var remote: ICETransportAddress
}

/// What an outstanding STUN transaction is for.
enum ICETransactionPurpose {
  /// A connectivity check on a pair; `nominating` when it carries USE-CANDIDATE.
  case check(ICEPairKey, nominating: Bool)
  /// A consent freshness request on the selected pair (RFC 7675).
  case consent(ICEPairKey)
  /// A Binding request to a STUN server from a socket, for a server-reflexive candidate.
  case serverReflexive(socket: ICESocketID, server: ICETransportAddress)
}

/// An outstanding STUN request with its retransmission timer (RFC 8489 §6.2.1).
struct ICETransaction {
  var purpose: ICETransactionPurpose
  /// The role the request claimed (ICE-CONTROLLING or ICE-CONTROLLED).
  var role: ICERole
  var socket: ICESocketID
  var destination: ICETransportAddress
  var bytes: [UInt8]
  var transmissions: Int
  var timeout: MediaDuration
  var deadline: MediaInstant
  /// When the request was first sent.
  var sentAt: MediaInstant
  /// Sent more than once: a response then gives no round-trip time (Karn's rule).
  var retransmitted = false
}

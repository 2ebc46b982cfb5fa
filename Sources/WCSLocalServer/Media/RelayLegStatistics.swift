/// What one leg of the relay (a publisher or a player connection) carried and repaired, so an
/// operator can see why a player froze: `wcs-local-server` logs it at each stream's end and
/// every `--stats` interval. Counts are packets unless named otherwise.
public struct RelayLegStatistics: Equatable, Sendable {
  /// Which side of the relay the leg is.
  public enum Role: String, Equatable, Sendable {
    /// A publisher: media comes in, NACK and PLI go out.
    case publisher
    /// A player: media goes out, NACK and PLI come in.
    case player
  }

  /// `publisher` or `player`.
  public var role: Role
  /// The stream's name.
  public var streamName: String
  /// RTP packets received on this leg (RTX and plain retransmissions included).
  public var packetsIn = 0
  /// Video RTP bytes (header and payload) received (publisher) or sent (player).
  public var videoBytes = 0
  /// RTP packets sent on this leg (retransmissions included).
  public var packetsOut = 0
  /// Publisher: sequence numbers that went missing (gaps seen). Player: the cumulative loss
  /// of the newest receiver report (RFC 3550 §6.4.1), which counts repaired packets as received.
  public var packetsLost = 0
  /// Publisher: sequence numbers requested in generic NACKs (RFC 4585 §6.2.1), retries included.
  /// Player: sequence numbers the player's NACKs asked for.
  public var nackedPackets = 0
  /// Player: NACKed packets answered from the cache (by RTX or plain resend).
  public var nacksAnswered = 0
  /// Player: NACKed packets not answered: not in the cache (never received or evicted), or
  /// already resent within the RTT.
  public var nacksUnanswerable = 0
  /// Player: NACKed packets refused by the per-player resend rate limit.
  public var nacksRateLimited = 0
  /// Publisher: retransmissions received (RTX unwrapped or plain resends that filled a gap).
  /// Player: retransmissions sent (RFC 4588 RTX when negotiated, else plain).
  public var retransmissions = 0
  /// Publisher: missing packets given up (NACKs exhausted or the gap too old).
  public var packetsGivenUp = 0
  /// Publisher: duplicate packets dropped (a second copy of one already received).
  public var duplicatesDropped = 0
  /// Publisher: packets refused because they came from more SSRCs than the relay keeps.
  public var packetsRefused = 0
  /// Publisher: PLIs sent to it. Player: PLI/FIR packets it sent us.
  public var keyFrameRequests = 0
  /// Player: key frame requests of this player forwarded at once (the rest were deferred to
  /// the next PLI the limit allows, never dropped).
  public var keyFrameRequestsForwarded = 0
  /// Player: key frame requests folded into a PLI deferred by the limit.
  public var keyFrameRequestsDeferred = 0
  /// Publisher: key frames received. Player: key frames sent to it.
  public var keyFrames = 0
  /// RTP and RTCP packets that could not be sent (not connected, SRTP refused, socket error).
  public var sendFailures = 0
  /// Whether RTX (RFC 4588) was negotiated on this leg.
  public var retransmissionNegotiated = false

  /// All zero.
  public init(role: Role, streamName: String) {
    self.role = role
    self.streamName = streamName
  }

  /// One log line: `role 'name': in … out … lost … nack … rtx … pli … key frames … send failures …`.
  public var summary: String {
    var parts = ["in \(packetsIn)", "out \(packetsOut)"]
    parts.append("lost \(packetsLost)")
    switch role {
    case .publisher:
      parts.append("nack sent \(nackedPackets)")
      parts.append("retransmissions in \(retransmissions)")
      parts.append("given up \(packetsGivenUp)")
      parts.append("duplicates \(duplicatesDropped)")
      parts.append("refused \(packetsRefused)")
      parts.append("pli sent \(keyFrameRequests)")
      parts.append("key frames in \(keyFrames)")
    case .player:
      parts.append("nack received \(nackedPackets)")
      parts.append("answered \(nacksAnswered)")
      parts.append("unanswerable \(nacksUnanswerable)")
      parts.append("rate limited \(nacksRateLimited)")
      parts.append("retransmissions out \(retransmissions)")
      parts.append(
        "pli received \(keyFrameRequests) (forwarded \(keyFrameRequestsForwarded), "
          + "deferred \(keyFrameRequestsDeferred))")
      parts.append("key frames out \(keyFrames)")
    }
    parts.append("rtx \(retransmissionNegotiated ? "on" : "off")")
    parts.append("send failures \(sendFailures)")
    return "\(role.rawValue) '\(streamName)': " + parts.joined(separator: ", ")
  }
}

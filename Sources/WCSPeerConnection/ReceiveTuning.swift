import WCSProtocols

/// Every latency and wake-up knob of a connection's receive side, in one place: what it is, its
/// unit and default, why it has that default, and which component reads it. Components take it
/// at construction (`PeerConnectionConfiguration.receiveTuning`; the native engine hands it on to
/// its tracks) and read nothing of it from each other. Where one knob must follow another, the
/// rule is a computed property here (`audioTurnLeeway`), not a derivation in a component.
///
/// The figures behind the defaults, and the commands that measure them, are in
/// docs/performance.md ("Threads and wake-ups"): a wake-up of a thread costs more than most of the
/// media work it would run, so the defaults trade a little latency for shared wake-ups.
public struct ReceiveTuning: Sendable, Equatable {
  /// How long a datagram may wait on a connected socket for the wake-up of a loop timer due
  /// within this window, instead of waking the loop itself (`EventLoopUDPSocket`'s coalescing).
  /// Default 25 ms: longer than a played stream's 20 ms audio turn, so the video packets between
  /// two turns are read at the turns. The cost is up to that much latency for what arrives while
  /// such a timer is pending; arrival times stay the kernel's, so jitter, transport-wide feedback
  /// and RTT are unchanged. Sockets coalesce only from the first connect on (the paced ICE checks
  /// and the DTLS handshake would wait for the pacing timer), and a backlog over a socket's read
  /// budget is read on the next turns. Zero reads every datagram at once (the local server's
  /// relay, which has no periodic timer to share). Read by `PeerConnection` at its first connect.
  public var receiveCoalescing: MediaDuration

  /// How early an audio playout turn may hand a frame to the sinks, before the frame is due.
  /// Default 10 ms: with `audioTurnLeeway` of twice this, a turn runs anywhere in a 20 ms window
  /// around the frame's due instant, so it always finds the wake-up of a packet arriving every
  /// 20 ms. Read by the played audio track (`AudioReceiveTrack`).
  public var audioPlayoutAdvance: MediaDuration

  /// The audio turn's leeway while the sockets coalesce over at least a turn's period
  /// (`receiveCoalescing` ≥ 20 ms): the packets then wait for the turn rather than the turn for a
  /// packet, so the turn keeps close to its deadline and wakes the loop once for both. Default
  /// 1 ms. Read through `audioTurnLeeway`.
  public var coalescedAudioTurnLeeway: MediaDuration

  /// How late a play-side poll (jitter-buffer release, NACK, RTCP and transport feedback) may run
  /// after its deadline to share a wake-up. Default 20 ms, an audio packet's period: a release is
  /// followed by a longer lip-sync hold, NACKs go on a 20 ms period, reports and feedback are
  /// 100 ms apart or more. Read by the native engine's connection (`NativeMediaConnection`).
  public var playPollLeeway: MediaDuration

  /// How late the publish side's poll (sender reports) may run. Default 50 ms: RFC 3550 §6.2
  /// spreads report intervals by ±50 % anyway. Read by `NativeMediaConnection`.
  public var publishPollLeeway: MediaDuration

  /// The longest time between two polls of a connection (its deadlines are polled at the earliest
  /// of them, at most this far apart). Default 100 ms, the transport feedback's period. Read by
  /// `NativeMediaConnection`.
  public var maximumPollInterval: MediaDuration

  /// The shortest time between two polls, so a deadline that stays in the past cannot spin the
  /// loop. Default 2 ms. Read by `NativeMediaConnection`.
  public var minimumPollInterval: MediaDuration

  /// The decode time per picture above which a played video track is never placed on the event
  /// loop (`DecodePlacement`). Default 4 ms, about a 1280x720 VP8 or H.264 picture here: longer
  /// decodes would hold the packets and timers of every other stream on the loop. Read when the
  /// track is negotiated.
  public var inlineDecodeCostLimit: MediaDuration

  /// The share of an event loop's time (0…1) that the video tracks placed on it may use together,
  /// estimated at negotiation (each track's estimated decode time per picture times its frame
  /// rate). Default 0.25, so the loop keeps most of its time for packets and timers. Read when a
  /// track is negotiated (`DecodePlacement`).
  public var inlineDecodeShare: Double

  /// The defaults described on each knob.
  public init(
    receiveCoalescing: MediaDuration = .milliseconds(25),
    audioPlayoutAdvance: MediaDuration = .milliseconds(10),
    coalescedAudioTurnLeeway: MediaDuration = .milliseconds(1),
    playPollLeeway: MediaDuration = .milliseconds(20),
    publishPollLeeway: MediaDuration = .milliseconds(50),
    maximumPollInterval: MediaDuration = .milliseconds(100),
    minimumPollInterval: MediaDuration = .milliseconds(2),
    inlineDecodeCostLimit: MediaDuration = .milliseconds(4), inlineDecodeShare: Double = 0.25
  ) {
    self.receiveCoalescing = receiveCoalescing
    self.audioPlayoutAdvance = audioPlayoutAdvance
    self.coalescedAudioTurnLeeway = coalescedAudioTurnLeeway
    self.playPollLeeway = playPollLeeway
    self.publishPollLeeway = publishPollLeeway
    self.maximumPollInterval = maximumPollInterval
    self.minimumPollInterval = minimumPollInterval
    self.inlineDecodeCostLimit = inlineDecodeCostLimit
    self.inlineDecodeShare = inlineDecodeShare
  }

  /// The period of a played audio turn: one 20 ms Opus frame (the receiver plays 20 ms frames;
  /// not a knob).
  public static let audioTurnPeriod = AudioReceiver.frameDuration

  /// How late an audio playout turn may run after its deadline. It follows two knobs, by this rule
  /// only: `coalescedAudioTurnLeeway` when `receiveCoalescing` covers a turn's period (the packets
  /// wait for the turn), else twice `audioPlayoutAdvance` (the turn's window, centred on the
  /// frame's due instant, is as long as a packet's period and shares the packets' wake-ups).
  /// Read by `NativeMediaConnection` for every turn.
  public var audioTurnLeeway: MediaDuration {
    receiveCoalescing >= Self.audioTurnPeriod
      ? coalescedAudioTurnLeeway : audioPlayoutAdvance * 2
  }
}

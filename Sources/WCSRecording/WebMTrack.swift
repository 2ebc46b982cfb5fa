/// One track of a recording: rebases its RTP timestamps to 0 and holds back one packet, so each
/// packet is written with its true duration (the step to the next packet's timestamp).
/// Pure logic; `WebMRecorder` does the FFmpeg calls.
struct WebMTrack {
  /// A packet ready to be muxed; times in ticks of the track's RTP clock since its first packet.
  struct Packet: Equatable {
    var bytes: [UInt8]
    var ticks: Int64
    var durationTicks: Int64
    var isKeyFrame: Bool
  }

  /// What `push` did with a packet.
  enum PushResult: Equatable {
    /// Held back; `ready` is the previous packet, now with its duration, to be written.
    case accepted(ready: Packet?)
    /// Its timestamp was earlier than the packet before it (or equal, for a track that needs
    /// increasing timestamps); a track's timestamps must not go backwards, so it was dropped.
    case droppedOutOfOrder
  }

  /// The track's RTP clock rate in Hz (90 000 for video, 48 000 for Opus).
  let clockRate: Int32
  /// Duration used for the last packet when no step to a next one is known (one frame's worth).
  let defaultDurationTicks: Int64
  /// True when two packets may not share a timestamp (ISO BMFF decode times increase strictly;
  /// Matroska allows equal ones).
  let requiresIncreasingTimestamps: Bool
  private var timeline = RecordingTimeline()
  private var pending: Packet?
  private var lastDurationTicks: Int64?

  init(clockRate: Int32, defaultDurationTicks: Int64, requiresIncreasingTimestamps: Bool = false) {
    self.clockRate = clockRate
    self.defaultDurationTicks = defaultDurationTicks
    self.requiresIncreasingTimestamps = requiresIncreasingTimestamps
  }

  /// Takes a packet with RTP timestamp `timestamp`; `knownDurationTicks` is its own duration when
  /// the payload says it (Opus TOC), used when it is the last packet.
  mutating func push(
    _ bytes: [UInt8], timestamp: UInt32, isKeyFrame: Bool, knownDurationTicks: Int64? = nil
  ) -> PushResult {
    let ticks = timeline.ticks(for: timestamp)
    var ready: Packet?
    if var previous = pending {
      if ticks < previous.ticks || (requiresIncreasingTimestamps && ticks == previous.ticks) {
        return .droppedOutOfOrder
      }
      previous.durationTicks = ticks - previous.ticks
      lastDurationTicks = previous.durationTicks
      ready = previous
    }
    pending = Packet(
      bytes: bytes, ticks: ticks,
      durationTicks: knownDurationTicks ?? lastDurationTicks ?? defaultDurationTicks,
      isKeyFrame: isKeyFrame)
    return .accepted(ready: ready)
  }

  /// The held-back packet, to be written at the end of the recording.
  mutating func flush() -> Packet? {
    defer { pending = nil }
    return pending
  }
}

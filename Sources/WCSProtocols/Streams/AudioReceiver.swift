import COpus
import WCSCodecs

/// The audio receive pipeline: Opus packets (RFC 7587) → playout every 20 ms, pulled by the audio
/// device at `now`.
///
/// The receiver schedules playout itself (`AudioReceiveStream` hands packets out on arrival):
/// the first packet is played `playoutDelay` after it arrived, each following 20 ms frame 20 ms
/// later. A frame whose packet is missing at its playout time is rebuilt from the in-band FEC of
/// the next packet if that has arrived (RFC 6716 §2.1.7, LBRR), else concealed by the decoder
/// (PLC). Packets arriving after their frame was played are late and dropped. Assumes 20 ms
/// packets, the size `OpusEncoder` produces.
///
/// Not thread-safe: owned by its audio receive track, on the connection's event loop.
public final class AudioReceiver {
  /// Playout statistics.
  public struct Statistics: Sendable, Equatable {
    /// All counters zero (the implicit initializer is internal).
    package init() {}

    /// Frames decoded from their own packet.
    public var decodedFrames = 0
    /// Frames rebuilt from the next packet's FEC data.
    public var fecRecoveredFrames = 0
    /// Frames concealed by PLC (packet and its successor both missing, or undecodable).
    public var concealedFrames = 0
    /// Packets that arrived after their frame was played.
    public var latePackets = 0
    /// Packets libopus could not decode.
    public var decodeErrors = 0
    /// Times playout started afresh because the numbering jumped: a packet more than
    /// `maxConcealedRun` frames ahead of playout or behind it, or behind it after playout
    /// stopped (a new sender after a pause).
    public var restarts = 0
    /// CPU seconds spent producing frames (libopus decoding, FEC and concealment), on the
    /// calling thread (`CLOCK_THREAD_CPUTIME_ID`).
    public var decodeCPUTime: Double = 0
  }

  /// Samples per channel of one frame: 20 ms at 48 kHz.
  public static let frameSamples = PCMAudioFrame.samplesPer20ms
  /// Playout stops after this many frames in a row with no packet (the sender paused); the next
  /// packet starts playout afresh.
  public static let maxConcealedRun = 50
  /// One frame: 20 ms.
  package static let frameDuration = MediaDuration(nanoseconds: 20_000_000)

  /// Counts since this receiver was made: frames decoded, rebuilt from FEC (RFC 7587 §3.2),
  /// concealed, late packets, decode errors, playout restarts, and the CPU seconds spent in
  /// libopus (see `Statistics`). A copy; reading it never changes playout.
  public var statistics: Statistics { state.statistics }
  /// Delay between the first packet's arrival and its playout.
  public let playoutDelay: Duration

  private let decoder: OpusDecoder
  /// Everything that changes, in one value changed in place: an `insert` or a `pull` is one
  /// access of the receiver (each stored property of a class read or written costs a dynamic
  /// exclusivity check).
  private var state = PlayoutState()

  /// Creates a receiver.
  ///
  /// - Parameters:
  ///   - channels: 1 or 2 (the Opus decoder output).
  ///   - playoutDelay: arrival-to-playout delay of the first packet; it must cover the network
  ///     jitter plus one packet so the next packet's FEC is there when a packet is missing
  ///     (default 100 ms).
  /// - Throws: `OpusError` when the decoder cannot be created.
  public init(channels: Int = 1, playoutDelay: Duration = .milliseconds(100)) throws(OpusError) {
    decoder = try OpusDecoder(channels: channels)
    self.playoutDelay = playoutDelay
  }

  /// Takes one packet released by the receive stream at `now`.
  public func insert(_ packet: RTPPacket, now: MediaInstant) {
    state.insert(
      sequenceNumber: packet.header.sequenceNumber, timestamp: packet.header.timestamp,
      payload: packet.payload, now: now, playoutDelay: MediaDuration(playoutDelay))
  }

  /// Takes one packet from `AudioReceiveStream.receive`'s packets, at its arrival time.
  public func insert(_ received: ReceivedRTPPacket) {
    insert(received.packet, now: received.arrival)
  }

  /// `insert(_:)` for each of `packets`, in order, in one access of the receiver (and no copy
  /// of each packet with its arrival: read in place by index).
  package func insert(contentsOf packets: [ReceivedRTPPacket]) {
    state.insert(contentsOf: packets, playoutDelay: MediaDuration(playoutDelay))
  }

  /// Plays every frame due at or before `now`, in order.
  public func pull(now: MediaInstant) -> [PCMAudioFrame] {
    var out: [PCMAudioFrame] = []
    pull(now: now, into: &out)
    return out
  }

  /// `pull(now:)` appending to `out`, so a caller that keeps its array between turns makes
  /// no new one per turn.
  package func pull(now: MediaInstant, into out: inout [PCMAudioFrame]) {
    state.pull(now: now, decoder: decoder, into: &out)
  }

  /// When the next frame is due, or nil when playout is stopped.
  public var nextDeadline: MediaInstant? { state.nextPlayoutAt }

  /// Whether an Opus packet carries LBRR (FEC) data for the frame before it: SILK or hybrid mode
  /// (TOC config < 16) and the LBRR flag of the first SILK frame set. The flag is the bit after the
  /// VAD flags of the frames in the packet (RFC 6716 §4.2.3, §4.2.4); the frame boundaries come
  /// from `opus_packet_parse`. Without this check libopus would run PLC and call it FEC.
  static func carriesFEC(_ packet: [UInt8]) -> Bool {
    guard let toc = packet.first, toc >> 3 < 16 else { return false }
    let parsed = packet.withUnsafeBufferPointer { bytes -> (samples: Int32, first: UInt8?) in
      guard let base = bytes.baseAddress else { return (0, nil) }
      let samples = opus_packet_get_samples_per_frame(base, Int32(PCMAudioFrame.sampleRate))
      var frames = [UnsafePointer<UInt8>?](repeating: nil, count: 48)
      var sizes = [Int16](repeating: 0, count: 48)
      var tocOut: UInt8 = 0
      let count = frames.withUnsafeMutableBufferPointer { framePointers in
        sizes.withUnsafeMutableBufferPointer { sizePointers -> Int32 in
          guard let frameBase = framePointers.baseAddress, let sizeBase = sizePointers.baseAddress
          else { return -1 }
          return opus_packet_parse(base, Int32(bytes.count), &tocOut, frameBase, sizeBase, nil)
        }
      }
      guard count > 0, sizes[0] > 0, let frame = frames[0] else { return (samples, nil) }
      return (samples, frame.pointee)
    }
    let silkFrames = max(1, Int(parsed.samples) / PCMAudioFrame.samplesPer20ms)
    let first = parsed.first
    guard let first, silkFrames <= 3 else { return false }
    return (first >> (6 - silkFrames)) & 1 == 1
  }
}

/// `AudioReceiver`'s playout: what is held, what plays next and when, and the statistics.
private struct PlayoutState {
  var statistics = AudioReceiver.Statistics()
  /// The packets held for playout, each at `sequence & 63`. Every held sequence number
  /// lies in `nextSequence ... nextSequence + maxConcealedRun`: `insert` restarts playout for
  /// a packet further ahead or behind, and `pull` drops `nextSequence` before moving past it;
  /// so 64 slots never hold two live packets at once. A ring rather than a dictionary keyed by
  /// sequence number: no hashing per packet inserted, looked up and dropped.
  var held = HeldPackets()
  var sequenceNumbers = RTPExtendedSequenceNumber()
  var nextSequence: Int64?
  var nextPlayoutAt: MediaInstant?
  var concealedRun = 0

  package mutating func insert(contentsOf packets: [ReceivedRTPPacket], playoutDelay: MediaDuration)
  {
    // The fields read in place: `packets[index].packet` would be a copy of the whole packet.
    for index in packets.indices {
      insert(
        sequenceNumber: packets[index].packet.header.sequenceNumber,
        timestamp: packets[index].packet.header.timestamp,
        payload: packets[index].packet.payload,
        now: packets[index].arrival, playoutDelay: playoutDelay)
    }
  }

  package mutating func insert(
    sequenceNumber: UInt16, timestamp: UInt32, payload: [UInt8], now: MediaInstant,
    playoutDelay: MediaDuration
  ) {
    let sequence = sequenceNumbers.extend(sequenceNumber)
    if let nextSequence, sequence < nextSequence {
      // Behind playout: late, unless playout stopped (a new sender after a pause, e.g. a
      // source taking over with numbering of its own) or it is further behind than any late
      // packet is (the sender restarted its numbering lower). Dropping those as late would
      // silence the stream for good.
      guard
        nextPlayoutAt == nil || nextSequence - sequence > Int64(AudioReceiver.maxConcealedRun)
      else {
        statistics.latePackets += 1
        return
      }
      restart(at: sequence)
    } else if let nextSequence, sequence - nextSequence > Int64(AudioReceiver.maxConcealedRun) {
      // Far ahead of playout: the sender restarted its numbering (or the packet is bogus). Start
      // over from it rather than hold it for seconds.
      restart(at: sequence)
    }
    if nextPlayoutAt == nil {
      nextPlayoutAt = now + playoutDelay
      nextSequence = sequence
    }
    held.hold(payload: payload, timestamp: timestamp, sequence: sequence)
  }

  /// Drops what is held and plays from `sequence` on, `playoutDelay` after its arrival.
  private mutating func restart(at sequence: Int64) {
    statistics.restarts += 1
    held.removeAll()
    nextPlayoutAt = nil
    nextSequence = nil
    concealedRun = 0
    sequenceNumbers.restart(at: sequence)
  }

  package mutating func pull(
    now: MediaInstant, decoder: OpusDecoder, into out: inout [PCMAudioFrame]
  ) {
    while let due = nextPlayoutAt, due <= now, let sequence = nextSequence {
      var cpu = 0.0
      out.append(CodecCPUTime.measure(into: &cpu) { play(sequence, decoder: decoder) })
      statistics.decodeCPUTime += cpu
      // `insert` keeps nothing below `nextSequence`, so this is the only packet to drop.
      held.drop(sequence)
      nextSequence = sequence + 1
      nextPlayoutAt = due + AudioReceiver.frameDuration
      if concealedRun >= AudioReceiver.maxConcealedRun && held.count == 0 {
        // The sender went quiet: stop until a packet restarts playout.
        nextPlayoutAt = nil
        concealedRun = 0
      }
    }
  }

  private mutating func play(_ sequence: Int64, decoder: OpusDecoder) -> PCMAudioFrame {
    let frameSamples = AudioReceiver.frameSamples
    if let packet = held.packet(sequence) {
      do {
        let frame = try decoder.decode(packet.payload, timestamp: packet.timestamp)
        statistics.decodedFrames += 1
        concealedRun = 0
        return frame
      } catch {
        statistics.decodeErrors += 1
      }
    } else if let next = held.packet(sequence + 1), AudioReceiver.carriesFEC(next.payload) {
      do {
        let frame = try decoder.decodeFEC(
          from: next.payload, frameSize: frameSamples,
          timestamp: next.timestamp &- UInt32(frameSamples))
        statistics.fecRecoveredFrames += 1
        concealedRun = 0
        return frame
      } catch {
        statistics.decodeErrors += 1
      }
    }
    statistics.concealedFrames += 1
    concealedRun += 1
    if let frame = try? decoder.decode(nil, lostSamples: frameSamples) { return frame }
    return PCMAudioFrame(
      samples: Array(repeating: 0, count: frameSamples * decoder.channels),
      channels: decoder.channels)
  }
}

/// `AudioReceiver`'s packets held for playout, each at `sequence & mask` (see `held`). A value
/// type kept in one stored property, so each operation is one access of the receiver (every
/// stored property of a class accessed costs a dynamic exclusivity check). Of each packet only
/// what playout reads, the payload and the RTP timestamp, each in an array of its own: checking
/// a slot reads an `Int64`, and holding, reading or dropping a packet retains or releases one
/// array instead of a whole `RTPPacket` (header, CSRC list, extension, payload).
private struct HeldPackets {
  /// What playout reads of a held packet.
  struct Packet {
    /// The Opus packet.
    var payload: [UInt8]
    /// Its 48 kHz RTP timestamp.
    var timestamp: UInt32
  }

  /// A power of two above `AudioReceiver.maxConcealedRun + 1`.
  static let size = 64
  static let mask = Int64(size - 1)
  /// The sequence number of an empty slot (extended sequence numbers are never negative).
  static let empty = Int64.min

  private var sequences = [Int64](repeating: empty, count: size)
  private var payloads = [[UInt8]](repeating: [], count: size)
  private var timestamps = [UInt32](repeating: 0, count: size)
  /// Packets held.
  private(set) var count = 0

  func packet(_ sequence: Int64) -> Packet? {
    let slot = Int(sequence & Self.mask)
    guard sequences[slot] == sequence else { return nil }
    return Packet(payload: payloads[slot], timestamp: timestamps[slot])
  }

  /// Holds `packet` (a duplicate replaces the one held, as a dictionary store did).
  mutating func hold(payload: [UInt8], timestamp: UInt32, sequence: Int64) {
    let slot = Int(sequence & Self.mask)
    if sequences[slot] == Self.empty { count += 1 }
    sequences[slot] = sequence
    payloads[slot] = payload
    timestamps[slot] = timestamp
  }

  mutating func drop(_ sequence: Int64) {
    let slot = Int(sequence & Self.mask)
    guard sequences[slot] == sequence else { return }
    sequences[slot] = Self.empty
    payloads[slot] = []
    count -= 1
  }

  mutating func removeAll() {
    guard count > 0 else { return }
    for slot in 0..<Self.size {
      sequences[slot] = Self.empty
      payloads[slot] = []
    }
    count = 0
  }
}

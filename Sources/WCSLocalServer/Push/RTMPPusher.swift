import Foundation
import WCSCodecs
import WCSProtocols
import WCSRecording

/// What a push thread reports, on its own thread.
enum RTMPPushEvent: Sendable, Equatable {
  /// Connected and published on the server; the header waits for a key frame.
  case connected
  /// The header went out: the RTMP stream is live.
  case publishing
  /// The stream needs a key frame (it starts on one; one was lost).
  case needsKeyFrame
  /// The queue was full: `total` packets dropped so far (reported at the first and at every
  /// thousandth).
  case dropped(total: Int)
  /// The connection failed or broke; `willRetry` says whether another attempt follows.
  case failed(detail: String, willRetry: Bool)
}

/// One `rtmpUrl` re-publication (issue 28) on a thread of its own: the relay loop hands RTP
/// packets to `queue` and never waits; the thread connects (`RTMPOutput`), assembles the H.264
/// access units (RFC 6184), transcodes Opus to AAC and writes FLV, retrying a failed or broken
/// connection up to `limits.maxAttempts` times in a row with a doubling delay.
///
/// Timing: the FLV timeline starts at the key frame the stream starts with; each track is
/// placed by the relay's receive time of its first packet (relative to that key frame's) and
/// advances by its own RTP timestamps from there (90 kHz video, 48 kHz Opus, RFC 3550 §5.1),
/// so the tracks keep the sender's relative timing up to the arrival jitter of those first
/// packets.
final class RTMPPusher: Sendable {
  let url: String
  let hasVideo: Bool
  let hasAudio: Bool
  let limits: RTMPPushLimits
  let queue: RTMPPushQueue

  init(url: String, hasVideo: Bool, hasAudio: Bool, limits: RTMPPushLimits) {
    self.url = url
    self.hasVideo = hasVideo
    self.hasAudio = hasAudio
    self.limits = limits
    queue = RTMPPushQueue(capacity: limits.maxQueuedPackets)
  }

  /// Starts the thread; `onEvent` is called on it.
  func start(onEvent: @escaping @Sendable (RTMPPushEvent) -> Void) {
    let thread = Thread { [self] in run(onEvent) }
    thread.name = "wcs-rtmp-push"
    thread.start()
  }

  /// Ends the push: what is queued is written, the connection closed (each step bounded by
  /// the write timeout); no event follows.
  func stop() { queue.stop() }

  private func run(_ onEvent: @Sendable (RTMPPushEvent) -> Void) {
    var failures = 0
    var dropped = 0
    var timeouts = RTMPOutput.Timeouts()
    timeouts.connect = limits.timeouts.connect
    timeouts.write = limits.timeouts.write
    while !queue.isStopped {
      let detail: String
      do {
        let output = try RTMPOutput(url: url, interrupt: OutputInterrupt(), timeouts: timeouts)
        guard !queue.isStopped else { return }
        onEvent(.connected)
        var session = try RTMPPushSession(
          output: output, hasVideo: hasVideo, hasAudio: hasAudio,
          keyFrameInterval: limits.keyFrameInterval)
        detail = stream(&session, failures: &failures, dropped: &dropped, onEvent)
        output.close()
      } catch {
        detail = "\(error)"
      }
      guard !queue.isStopped else { return }
      failures += 1
      let willRetry = failures < limits.maxAttempts
      onEvent(.failed(detail: detail, willRetry: willRetry))
      guard willRetry else { break }
      wait(limits.retryDelay * (1 << min(failures - 1, 10)))
    }
    // Given up: the queue is stopped so the relay stops queuing for nobody.
    queue.stop()
  }

  /// Writes queued packets until the queue stops (returns "") or a write fails (its reason).
  private func stream(
    _ session: inout RTMPPushSession, failures: inout Int, dropped total: inout Int,
    _ onEvent: @Sendable (RTMPPushEvent) -> Void
  ) -> String {
    while true {
      let (packets, dropped) = queue.take(timeout: .seconds(1))
      if dropped > 0 {
        session.lost()
        if total == 0 || total / 1000 != (total + dropped) / 1000 {
          onEvent(.dropped(total: total + dropped))
        }
        total += dropped
      }
      for packet in packets {
        do {
          let result = try session.add(packet)
          if result.started {
            failures = 0
            onEvent(.publishing)
          }
          if result.needsKeyFrame { onEvent(.needsKeyFrame) }
        } catch {
          return "\(error)"
        }
      }
      if dropped > 0 { onEvent(.needsKeyFrame) }
      if packets.isEmpty, queue.isStopped { return "" }
    }
  }

  /// Sleeps `delay` unless stopped first, discarding what the relay queues meanwhile.
  private func wait(_ delay: Duration) {
    let end = ContinuousClock.now + delay
    while !queue.isStopped, ContinuousClock.now < end {
      _ = queue.take(timeout: min(.milliseconds(200), end - ContinuousClock.now))
    }
  }
}

/// The state of one RTMP connection: the access unit assembler, the transcoder and the two
/// tracks' clocks. Confined to the push thread.
struct RTMPPushSession {
  private struct TrackClock {
    var timeline = RecordingTimeline()
    /// Ticks of the track's first packet on the FLV timeline.
    var offset: Int64
  }

  /// Key frames' receive times are looked up by RTP timestamp among this many recent frames.
  static let frameArrivalsKept = 32
  /// Audio packets held while waiting for the first key frame (1 s of 20 ms Opus).
  static let maxHeldAudioPackets = 50

  let output: RTMPOutput
  let hasVideo: Bool
  let hasAudio: Bool
  private var assembler = H264AccessUnitAssembler()
  private let transcoder: OpusToAACTranscoder?
  private var frameArrivals: [(timestamp: UInt32, arrival: Int64)] = []
  private var heldAudio: [RTMPPushPacket] = []
  /// Receive time (ns) of the first packet of the key frame the stream started with.
  private var start: Int64?
  private var video: TrackClock?
  private var audio: TrackClock?
  /// Receive times (ns) of the last key frame written and of the last periodic request.
  private var lastKeyFrame: Int64?
  private var lastKeyFrameRequest: Int64?
  /// Longest stretch without a key frame, ns: RTMP servers start a new viewer at a key frame
  /// (nginx-rtmp's `wait_key`), and a WebRTC sender sends one only when asked.
  let keyFrameInterval: Int64

  init(output: RTMPOutput, hasVideo: Bool, hasAudio: Bool, keyFrameInterval: Duration)
    throws(AudioTranscodeError)
  {
    self.keyFrameInterval =
      Int64(keyFrameInterval.components.seconds) * 1_000_000_000
      + keyFrameInterval.components.attoseconds / 1_000_000_000
    self.output = output
    self.hasVideo = hasVideo
    self.hasAudio = hasAudio
    transcoder = hasAudio ? try OpusToAACTranscoder() : nil
  }

  /// Packets were dropped before the thread saw them: the video waits for its next key frame.
  mutating func lost() {
    assembler = H264AccessUnitAssembler()
  }

  /// Takes one packet; says whether the header just went out and whether a key frame is
  /// needed. Throws when writing fails.
  mutating func add(_ packet: RTMPPushPacket) throws -> (started: Bool, needsKeyFrame: Bool) {
    switch packet.kind {
    case .video:
      guard hasVideo else { return (false, false) }
      return try addVideo(packet)
    case .audio:
      guard hasAudio, let transcoder else { return (false, false) }
      var started = false
      if !output.isStarted {
        // Audio alone starts at once; with video, the key frame starts the stream and the
        // audio held meanwhile joins it from the key frame's first packet on.
        guard !hasVideo else {
          heldAudio.append(packet)
          if heldAudio.count > Self.maxHeldAudioPackets { heldAudio.removeFirst() }
          return (false, false)
        }
        try startOutput(video: nil)
        start = packet.arrival
        started = true
      }
      try writeAudio(packet, transcoder)
      return (started, false)
    }
  }

  private mutating func writeAudio(_ packet: RTMPPushPacket, _ transcoder: OpusToAACTranscoder)
    throws
  {
    guard let start, packet.arrival >= start else { return }
    if audio == nil {
      audio = TrackClock(offset: Self.ticks(packet.arrival - start, clockRate: 48_000))
    }
    guard var clock = audio else { return }
    let ticks = clock.offset + clock.timeline.ticks(for: packet.timestamp)
    audio = clock
    for aac in try transcoder.add(packet.payload, ticks: ticks) {
      try output.writeAudio(aac)
    }
  }

  private mutating func addVideo(_ packet: RTMPPushPacket) throws -> (
    started: Bool, needsKeyFrame: Bool
  ) {
    if frameArrivals.last?.timestamp != packet.timestamp {
      frameArrivals.append((packet.timestamp, packet.arrival))
      if frameArrivals.count > Self.frameArrivalsKept { frameArrivals.removeFirst() }
    }
    let result = assembler.insert(
      H264AccessUnitAssembler.Packet(
        sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp,
        marker: packet.marker, payload: packet.payload))
    var needsKeyFrame = result.needsKeyFrame || keyFrameDue(at: packet.arrival)
    var started = false
    for accessUnit in result.accessUnits {
      let units = H264AnnexB.nalUnits(accessUnit.data)
      if !output.isStarted {
        guard accessUnit.isKeyFrame else { continue }
        guard let configuration = RelayRecording.h264Video(units) else {
          // An IDR leaning on parameter sets sent earlier: the next one should carry them.
          needsKeyFrame = true
          continue
        }
        try startOutput(video: configuration)
        start =
          frameArrivals.first { $0.timestamp == accessUnit.timestamp }?.arrival ?? packet.arrival
        started = true
        let held = heldAudio
        heldAudio = []
        if let transcoder {
          for audioPacket in held { try writeAudio(audioPacket, transcoder) }
        }
      }
      guard let start else { continue }
      if video == nil {
        let arrival =
          frameArrivals.first { $0.timestamp == accessUnit.timestamp }?.arrival ?? packet.arrival
        video = TrackClock(offset: Self.ticks(arrival - start, clockRate: 90_000))
      }
      guard var clock = video else { continue }
      let ticks = clock.offset + clock.timeline.ticks(for: accessUnit.timestamp)
      video = clock
      try output.writeVideo(
        nalUnits: units, isKeyFrame: accessUnit.isKeyFrame, ticks: ticks, durationTicks: 3000)
      if accessUnit.isKeyFrame { lastKeyFrame = packet.arrival }
    }
    return (started, needsKeyFrame)
  }

  /// Whether to ask for a key frame now: the stream is live, the last one is older than
  /// `keyFrameInterval`, and so is the last such request.
  private mutating func keyFrameDue(at now: Int64) -> Bool {
    guard let lastKeyFrame, now - lastKeyFrame >= keyFrameInterval,
      now - (lastKeyFrameRequest ?? lastKeyFrame) >= keyFrameInterval
    else { return false }
    lastKeyFrameRequest = now
    return true
  }

  private func startOutput(video: MP4Recorder.Video?) throws {
    try output.start(
      video: video,
      audio: transcoder.map {
        (
          $0.audioSpecificConfig, OpusToAACTranscoder.sampleRate, $0.channels, $0.frameSize
        )
      })
  }

  /// Nanoseconds as ticks of a `clockRate` Hz clock (never negative).
  static func ticks(_ nanoseconds: Int64, clockRate: Int64) -> Int64 {
    max(0, nanoseconds) * clockRate / 1_000_000_000
  }
}

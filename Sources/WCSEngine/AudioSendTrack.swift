import Dispatch
import Synchronization
import WCSCodecs
import WCSMediaSeam
import WCSProtocols

/// The encode side of one published audio track: 48 kHz PCM from a source, cut into 20 ms
/// frames → Opus → RFC 7587 payloads handed to `output`. Runs on its own serial queue. A
/// disabled (muted) track encodes silence, as the iOS SDK's disabled track does, so the RTP
/// timeline goes on.
final class AudioSendTrack: Sendable {

  /// Counters of the track.
  struct Statistics: Sendable, Equatable {
    var framesEncoded = 0
    var encodeErrors = 0
    /// CPU seconds spent inside libopus's encoder.
    var encodeCPUTime = 0.0
    /// CPU seconds the virtual microphone spent drawing what it delivered (it stands in for a device).
    var sourceCPUTime = 0.0
  }

  /// What encoding works on, used on `queue` only (checked).
  private struct EncodeState {
    let encoder: OpusEncoder
    /// Interleaved samples not yet making a whole 20 ms frame.
    var pending: [Int16] = []
    /// When `pending[0]` was captured.
    var pendingCapturedAt = MediaInstant.now()
    var nextTimestamp: UInt32 = 0

    /// Adds `samples` (`sourceChannels` interleaved, 1 or 2) as `channels` channels and takes
    /// out every whole 20 ms frame, each with when its first sample was captured.
    mutating func frames(
      adding samples: [Int16], sourceChannels: Int, channels: Int, capturedAt: MediaInstant
    ) -> [(samples: [Int16], capturedAt: MediaInstant)] {
      // The leftover samples came just before this chunk. Anchoring on every chunk, rather than
      // counting frames from the first, keeps a source's clock drift out of the capture times.
      let leftover = Double(pending.count / channels) / 48_000
      pendingCapturedAt = capturedAt - .seconds(leftover)
      if sourceChannels == channels {
        pending += samples
      } else if sourceChannels == 1 {
        pending.reserveCapacity(pending.count + samples.count * 2)
        for sample in samples { pending += [sample, sample] }
      } else {
        var index = 0
        while index + 1 < samples.count {
          pending.append(Int16((Int(samples[index]) + Int(samples[index + 1])) / 2))
          index += 2
        }
      }
      let frameLength = PCMAudioFrame.samplesPer20ms * channels
      var frames: [(samples: [Int16], capturedAt: MediaInstant)] = []
      while pending.count >= frameLength {
        frames.append((Array(pending[0..<frameLength]), pendingCapturedAt))
        pending.removeFirst(frameLength)
        pendingCapturedAt += .milliseconds(20)
      }
      return frames
    }
  }

  var queue: DispatchQueue { encoding.queue }
  let channels: Int
  private let encoding: QueueBoundBox<EncodeState>
  /// Gets each payload and when its first sample was captured.
  private let output: @Sendable (PacketizedPayload, MediaInstant) -> Void
  private let enabledState = Mutex(true)
  private let stats = Mutex(Statistics())

  /// Makes the Opus encoder (channels, bitrate and FEC from `parameters`).
  init(
    parameters: NativeEncodingParameters,
    output: @escaping @Sendable (PacketizedPayload, MediaInstant) -> Void
  )
    throws(OpusError)
  {
    channels = parameters.audioChannels
    self.output = output
    let encoder = try OpusEncoder(
      configuration: OpusEncoder.Configuration(
        channels: parameters.audioChannels, bitrate: parameters.audioBitrate,
        inbandFEC: parameters.audioFEC))
    encoding = QueueBoundBox(
      EncodeState(encoder: encoder),
      queue: DispatchQueue(label: "WCSMedia.AudioSendTrack", qos: .userInitiated))
  }

  /// Whether captured sound is sent (`false`: silence).
  var isEnabled: Bool {
    get { enabledState.withLock { $0 } }
    set { enabledState.withLock { $0 = newValue } }
  }

  /// A copy of the counters.
  var statistics: Statistics { stats.withLock { $0 } }

  /// Adds CPU seconds a virtual source spent making media for this track. Any thread.
  func countSourceCPUTime(_ seconds: Double) { stats.withLock { $0.sourceCPUTime += seconds } }

  /// Takes interleaved 48 kHz samples with `sourceChannels` channels (1 or 2), converts them to
  /// the track's channel count and encodes every complete 20 ms frame. `capturedAt`: when the
  /// chunk's first sample was captured (sources release a chunk when it is due). Call on `queue`
  /// (checked: it traps elsewhere).
  func append(
    _ samples: [Int16], sourceChannels: Int, capturedAt: MediaInstant = .now()
  ) {
    guard sourceChannels == 1 || sourceChannels == 2 else { return }
    let frames = encoding.value.frames(
      adding: samples, sourceChannels: sourceChannels, channels: channels, capturedAt: capturedAt)
    for frame in frames {
      let samples = isEnabled ? frame.samples : [Int16](repeating: 0, count: frame.samples.count)
      encode(samples, capturedAt: frame.capturedAt)
    }
  }

  private func encode(_ samples: [Int16], capturedAt: MediaInstant) {
    let timestamp = encoding.value.nextTimestamp
    encoding.value.nextTimestamp &+= UInt32(PCMAudioFrame.samplesPer20ms)
    let frame = PCMAudioFrame(samples: samples, channels: channels, timestamp: timestamp)
    let encoder = encoding.value.encoder
    var cpu = 0.0
    defer { stats.withLock { $0.encodeCPUTime += cpu } }
    do {
      let packet = try CodecCPUTime.measure(into: &cpu) { try encoder.encode(frame) }
      stats.withLock { $0.framesEncoded += 1 }
      output(OpusPayloadFormat.packetize(packet, timestamp: timestamp), capturedAt)
    } catch {
      stats.withLock { $0.encodeErrors += 1 }
    }
  }
}

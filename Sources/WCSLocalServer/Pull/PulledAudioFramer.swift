import WCSCodecs

/// Cuts a pulled source's decoded 48 kHz audio into the 20 ms frames Opus takes (RFC 7587 §4.1),
/// each stamped with the source's media time of its first sample, so that audio and video keep
/// the source's A/V alignment whatever the decoder's frame size (AAC 1024, MP3 1152, G.711 any).
///
/// Samples continue the previous frame while their presentation time stays within
/// `maxSkew` of where the previous samples end (decoder and resampler delays, rounding). A larger
/// jump (packets lost, a source that restarted its clock) drops the partial frame and starts
/// again at the new time, so timestamps never drift away from the video's.
struct PulledAudioFramer: Sendable {
  /// Interleaved channels, 1 or 2.
  let channels: Int
  /// Largest tolerated gap or overlap between consecutive blocks, in 48 kHz samples (50 ms).
  static let maxSkew: Int64 = 2400
  /// Most samples per channel one block may add (the decoder's frame bound after resampling).
  static let maxBlockSamples = 48_000
  /// Largest media time magnitude taken, 48 kHz ticks (about 3 million years): a pts that
  /// `av_rescale_q` could not represent comes back as `Int64.min`, and times near the ends of
  /// `Int64` would overflow the arithmetic here.
  static let maxTime: Int64 = 1 << 62

  /// Samples waiting for a full frame, interleaved.
  private var pending: [Int16] = []
  /// Media time of `pending`'s first sample, 48 kHz ticks of the source's timeline.
  private var pendingStart: Int64?
  /// Blocks that restarted the timeline.
  private(set) var discontinuities = 0

  init(channels: Int) {
    self.channels = max(1, min(2, channels))
  }

  /// The next end of the timeline: where the next block is expected to start.
  var expectedTime: Int64? {
    pendingStart.map { $0 + Int64(pending.count / channels) }
  }

  /// Adds `samples` (interleaved, `channels` channels) presented at `time` (48 kHz ticks; nil
  /// when the source gave none: they continue the timeline) and returns the complete frames:
  /// `PCMAudioFrame.samplesPer20ms` samples per channel each, with the 48 kHz media time of its
  /// first sample. A block over `maxBlockSamples` per channel, or at a time beyond `maxTime`
  /// either way, is refused (returns nothing).
  mutating func add(_ samples: [Int16], time: Int64?) -> [(time: Int64, frame: PCMAudioFrame)] {
    guard !samples.isEmpty, samples.count / channels <= Self.maxBlockSamples else { return [] }
    if let time {
      guard time.magnitude <= Self.maxTime.magnitude else { return [] }
      if let expected = expectedTime {
        if (time - expected).magnitude > Self.maxSkew.magnitude {
          discontinuities += 1
          pending.removeAll(keepingCapacity: true)
          pendingStart = time
        }
      } else {
        pendingStart = time
      }
    } else if pendingStart == nil {
      pendingStart = 0
    }
    pending += samples.prefix(samples.count - samples.count % channels)
    let frameLength = PCMAudioFrame.samplesPer20ms * channels
    var frames: [(time: Int64, frame: PCMAudioFrame)] = []
    var offset = 0
    while pending.count - offset >= frameLength, let start = pendingStart {
      let chunk = Array(pending[offset..<offset + frameLength])
      frames.append(
        (
          start,
          PCMAudioFrame(
            samples: chunk, channels: channels, timestamp: UInt32(truncatingIfNeeded: start))
        ))
      offset += frameLength
      pendingStart = start + Int64(PCMAudioFrame.samplesPer20ms)
    }
    pending.removeFirst(offset)
    return frames
  }
}

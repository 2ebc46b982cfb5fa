/// Cuts a stream of interleaved 48 kHz PCM into 20 ms chunks (960 samples per channel) whose
/// timestamps continue from the first sample's, so chunk n is at `start + n * 0.02` s.
struct AudioChunker {
  let channels: Int
  private var pending: [Int16] = []
  private var startSeconds: Double?
  private var chunksEmitted = 0

  init(channels: Int) {
    self.channels = channels
  }

  /// Adds samples whose first one is at `ptsSeconds`; returns the chunks now complete.
  mutating func append(_ samples: [Int16], ptsSeconds: Double) -> [DecodedAudioChunk] {
    if startSeconds == nil { startSeconds = ptsSeconds }
    pending.append(contentsOf: samples)
    let chunkLength = DecodedAudioChunk.samplesPerChannel * channels
    var chunks: [DecodedAudioChunk] = []
    var offset = 0
    while pending.count - offset >= chunkLength {
      chunks.append(makeChunk(Array(pending[offset..<offset + chunkLength])))
      offset += chunkLength
    }
    pending.removeFirst(offset)
    return chunks
  }

  /// The remaining samples padded with silence to a whole chunk, or nil when none remain.
  mutating func finish() -> DecodedAudioChunk? {
    guard !pending.isEmpty else { return nil }
    var samples = pending
    samples.append(
      contentsOf: repeatElement(
        0, count: DecodedAudioChunk.samplesPerChannel * channels - samples.count))
    pending = []
    return makeChunk(samples)
  }

  /// Forgets pending samples and the timeline (after a seek).
  mutating func reset() {
    pending = []
    startSeconds = nil
    chunksEmitted = 0
  }

  private mutating func makeChunk(_ samples: [Int16]) -> DecodedAudioChunk {
    let seconds =
      (startSeconds ?? 0) + Double(chunksEmitted * DecodedAudioChunk.samplesPerChannel)
      / Double(DecodedAudioChunk.sampleRate)
    chunksEmitted += 1
    return DecodedAudioChunk(samples: samples, channels: channels, ptsSeconds: seconds)
  }
}

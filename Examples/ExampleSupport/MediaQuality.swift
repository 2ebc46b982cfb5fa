import Foundation
import WCSMedia

/// The source of a published file, decoded again by the example at the played size: its
/// pictures with presentation times and its audio as 48 kHz mono.
public struct SourceMedia: Sendable {
  /// Pictures in presentation order; `pts` in seconds from the file's start.
  public var frames: [(pts: Double, picture: I420Image)]
  /// 48 kHz mono samples.
  public var audio: [Int16]
  /// Presentation time of the first audio sample, in seconds.
  public var audioStart: Double
  /// Video frame rate of the file (frames per second; 30 when unknown).
  public var frameRate: Double

  /// Decodes the first `seconds` of `path` with `MediaFileReader` (video scaled to
  /// `width`×`height`).
  /// - Throws: `ExampleError.failed` when the file cannot be read.
  public static func decode(path: String, width: Int, height: Int, seconds: Double)
    throws(ExampleError) -> SourceMedia
  {
    do {
      let reader = try MediaFileReader(
        path: path, videoSize: (width, height), audioChannels: 1, decodeVideo: true,
        decodeAudio: true)
      var media = SourceMedia(
        frames: [], audio: [], audioStart: 0,
        frameRate: reader.info.video.map { $0.framesPerSecond > 0 ? $0.framesPerSecond : 30 } ?? 30)
      var sawAudio = false
      while let sample = try reader.nextSample() {
        if sample.ptsSeconds > seconds { break }
        switch sample {
        case .video(let frame):
          if let picture = I420Image(
            width: frame.width, height: frame.height, y: frame.y, strideY: frame.yStride,
            u: frame.u, strideU: frame.uStride, v: frame.v, strideV: frame.vStride)
          {
            media.frames.append((frame.ptsSeconds, picture.packed()))
          }
        case .audio(let chunk):
          if !sawAudio {
            media.audioStart = chunk.ptsSeconds
            sawAudio = true
          }
          media.audio += chunk.samples
        }
      }
      return media
    } catch {
      throw .failed("decoding the source \(path): \(error)")
    }
  }
}

/// How the played video compares with what was published.
public struct VideoQualityReport: Sendable {
  /// How frames were paired.
  public var method: String
  /// Played frames compared.
  public var matchedFrames: Int
  /// Of those, paired exactly at the source frame their RTP timestamp predicts (file sources).
  public var matchedAtTimestamp: Int
  /// Mean PSNR over all three planes in dB (identical frames count as 99 dB).
  public var meanPSNR: Double
  /// Worst frame's PSNR in dB.
  public var minPSNR: Double
  /// Median of (arrival time − source time) of the played frames, seconds: the video's
  /// end-to-end offset, against which the audio is measured.
  public var videoOffset: Double?

  /// Pairs played frames of a file source with the source's frames: the first frames fix which
  /// source frame the stream started at (the best coarse match over the whole file); after that
  /// each frame's RTP timestamp (90 kHz) gives its source time, and the best PSNR of the nearest
  /// source frame and its two neighbours is taken.
  public static func compare(played: [VideoFileRenderer.Kept], source: SourceMedia)
    -> VideoQualityReport?
  {
    let frames = source.frames
    guard let first = played.first, !frames.isEmpty else { return nil }
    func relative(_ kept: VideoFileRenderer.Kept) -> Double {
      Double(Int32(bitPattern: kept.rtpTimestamp &- first.rtpTimestamp)) / 90_000
    }
    func nearest(_ pts: Double) -> Int {
      var low = 0
      var high = frames.count - 1
      while low < high {
        let mid = (low + high) / 2
        if frames[mid].pts < pts { low = mid + 1 } else { high = mid }
      }
      if low > 0, abs(frames[low - 1].pts - pts) < abs(frames[low].pts - pts) { return low - 1 }
      return low
    }
    // Which source frame the stream started at: the start whose predicted frames best match
    // frames spread over the whole run. A screencast is still for seconds but for a cursor or
    // a face inset, so the first frames alone match many starts equally, and a sparse luma
    // sample misses the few pixels that move.
    let step = max(1, played.count / 48)
    let probe = stride(from: 0, to: played.count, by: step).map { played[$0] }
    var bestStart = 0
    var bestCost = Double.infinity
    for start in frames.indices {
      var cost = 0.0
      for kept in probe {
        cost += fineDistance(
          kept.picture, frames[nearest(frames[start].pts + relative(kept))].picture)
        if cost >= bestCost { break }
      }
      if cost < bestCost {
        bestCost = cost
        bestStart = start
      }
    }
    // The start frame fixes the offset to within a frame; the median of the best matches
    // centres it, so rounding to the nearest frame follows the timestamps.
    var startPTS = frames[bestStart].pts
    var deltas: [Double] = []
    for kept in probe {
      let predicted = nearest(startPTS + relative(kept))
      let window = [predicted, predicted - 1, predicted + 1].filter { frames.indices.contains($0) }
      let best = window.min {
        fineDistance(kept.picture, frames[$0].picture)
          < fineDistance(kept.picture, frames[$1].picture)
      }
      if let best { deltas.append(frames[best].pts - relative(kept)) }
    }
    startPTS = median(deltas) ?? startPTS
    var values: [Double] = []
    var atTimestamp = 0
    var offsets: [Double] = []
    for kept in played {
      // The best of the predicted frame and its neighbours (±1 frame absorbs the sender's
      // capture-time jitter); it counts as found by its timestamp when the predicted frame is
      // within 0.5 dB of it (on still scenes neighbours differ by coding noise only).
      let predicted = nearest(startPTS + relative(kept))
      var best: (index: Int, psnr: Double)?
      var predictedPSNR = -Double.infinity
      for candidate in [predicted, predicted - 1, predicted + 1]
      where frames.indices.contains(candidate) {
        guard let psnr = kept.picture.psnr(to: frames[candidate].picture).map({ min($0, 99) })
        else { continue }
        if candidate == predicted { predictedPSNR = psnr }
        if psnr > best?.psnr ?? -Double.infinity { best = (candidate, psnr) }
      }
      guard let best else { continue }
      if predictedPSNR >= best.psnr - 0.5 { atTimestamp += 1 }
      values.append(best.psnr)
      offsets.append(kept.arrival - frames[best.index].pts)
    }
    guard !values.isEmpty else { return nil }
    return VideoQualityReport(
      method: "RTP timestamp vs source pts (MediaFileReader at the played size)",
      matchedFrames: values.count, matchedAtTimestamp: atTimestamp,
      meanPSNR: values.reduce(0, +) / Double(values.count), minPSNR: values.min() ?? 0,
      videoOffset: median(offsets))
  }

  /// Compares played frames of the virtual camera with the picture of the frame number each
  /// carries (`VirtualCamera.decodeFrameNumber`).
  public static func compareVirtual(played: [VideoFileRenderer.Kept], frameRate: Int)
    -> VideoQualityReport?
  {
    var values: [Double] = []
    for kept in played {
      guard let number = VirtualCamera.decodeFrameNumber(from: kept.picture) else { continue }
      let camera = VirtualCamera(
        width: kept.picture.width, height: kept.picture.height, frameRate: frameRate)
      guard let psnr = kept.picture.psnr(to: camera.frame(Int(number))) else { continue }
      values.append(min(psnr, 99))
    }
    guard !values.isEmpty else { return nil }
    return VideoQualityReport(
      method: "virtual camera frame number", matchedFrames: values.count,
      matchedAtTimestamp: values.count, meanPSNR: values.reduce(0, +) / Double(values.count),
      minPSNR: values.min() ?? 0, videoOffset: nil)
  }

  /// Mean squared luma difference over every 2nd pixel of every 2nd row: squares let the few
  /// pixels that differ a lot (a moved cursor) outweigh coding noise spread over the picture.
  static func fineDistance(_ a: I420Image, _ b: I420Image) -> Double {
    guard a.width == b.width, a.height == b.height else { return .infinity }
    var sum = 0
    var count = 0
    a.y.withUnsafeBufferPointer { ya in
      b.y.withUnsafeBufferPointer { yb in
        var row = 0
        while row < a.height {
          var column = 0
          while column < a.width {
            let difference = Int(ya[row * a.strideY + column]) - Int(yb[row * b.strideY + column])
            sum += difference * difference
            count += 1
            column += 2
          }
          row += 2
        }
      }
    }
    return count > 0 ? Double(sum) / Double(count) : .infinity
  }
}

/// The played audio's offset from the played video.
public struct AudioDelayReport: Sendable {
  /// Audio behind video in seconds (negative: audio ahead).
  public var delay: Double
  /// Normalised cross-correlation at the best lag (1 = identical shape).
  public var correlation: Double
  /// How much better the best lag matched than any lag 50 ms or more away from it: near 0 when
  /// the window is a steady tone or silence that matches anywhere (then `delay` means little).
  public var distinctness: Double
  /// Where the measured window started, seconds into the played audio.
  public var windowStart: Double
  /// The sound repeats within the search window (a steady tone): the source's autocorrelation
  /// at the matched place has a strong peak past its main lobe. Then no single lag is the
  /// delay and `delay` means nothing.
  public var periodic: Bool
  /// Another lag 50 ms or more away matches about as well as the best (several near-equal
  /// peaks): `delay` is one of them, not the delay.
  public var ambiguous: Bool { distinctness < Self.nearEqualPeaks }
  /// How it was measured.
  public var method: String

  /// Cross-correlates half a second of the played audio (from `windowStart` seconds in, at
  /// 4 kHz) with the source audio within ±1 s of where it would be if it were in step with the
  /// video; the lag found gives the source time the audio played at that instant, and the
  /// difference from the video's offset (`VideoQualityReport.videoOffset`) is the delay.
  public static func measure(
    played: [Int16], playedStart: Double, source: SourceMedia, videoOffset: Double,
    windowStart: Double = 1.0
  ) -> AudioDelayReport? {
    let decimation = 12
    let rate = 48_000.0 / Double(decimation)
    let playedLow = decimate(played, by: decimation)
    let sourceLow = decimate(source.audio, by: decimation)
    let firstSample = Int(max(0, windowStart) * rate)
    let windowLength = Int(0.5 * rate)
    guard playedLow.count >= firstSample + windowLength else { return nil }
    let window = Array(playedLow[firstSample..<firstSample + windowLength])
    let windowTime = playedStart + Double(firstSample) / rate
    let expected = Int(((windowTime - videoOffset) - source.audioStart) * rate)
    let range = Int(1.0 * rate)
    let windowEnergy = window.reduce(0.0) { $0 + $1 * $1 }
    guard windowEnergy > 0 else { return nil }
    var bestLag: Int?
    var bestScore = -Double.infinity
    var scores: [(lag: Int, score: Double)] = []
    window.withUnsafeBufferPointer { w in
      sourceLow.withUnsafeBufferPointer { s in
        for lag in max(0, expected - range)...max(0, expected + range) {
          guard lag + windowLength <= s.count else { break }
          var dot = 0.0
          var energy = 0.0
          for index in 0..<windowLength {
            let value = s[lag + index]
            dot += w[index] * value
            energy += value * value
          }
          guard energy > 0 else { continue }
          let score = dot / (windowEnergy * energy).squareRoot()
          scores.append((lag, score))
          if score > bestScore {
            bestScore = score
            bestLag = lag
          }
        }
      }
    }
    guard let bestLag else { return nil }
    let apart = Int(0.05 * rate)
    let runnerUp = scores.filter { abs($0.lag - bestLag) >= apart }.map(\.score).max() ?? 0
    let sourceTime = source.audioStart + Double(bestLag) / rate
    let audioOffset = windowTime - sourceTime
    let repeats = strongestRepeat(
      sourceLow, from: bestLag, length: windowLength, maximumLag: range)
    return AudioDelayReport(
      delay: audioOffset - videoOffset, correlation: bestScore,
      distinctness: bestScore - runnerUp, windowStart: Double(firstSample) / rate,
      periodic: repeats >= periodicCorrelation,
      method: "cross-correlation of played vs source audio, against the PSNR-matched video")
  }

  /// A repeat of the source's shape at least this well correlated makes the sound periodic.
  static let periodicCorrelation = 0.8
  /// A runner-up lag within this of the best correlation is a near-equal peak.
  static let nearEqualPeaks = 0.05

  /// The best normalised autocorrelation of `samples[start..<start + length]` at a lag past its
  /// main lobe (the lags before the correlation first drops to 0) and up to `maximumLag`
  /// samples: near 1 for a steady tone, small for noise, speech or music that changes; 0 when
  /// the samples run out.
  static func strongestRepeat(_ samples: [Double], from start: Int, length: Int, maximumLag: Int)
    -> Double
  {
    guard start >= 0, length > 0, start + length + 1 <= samples.count else { return 0 }
    return samples.withUnsafeBufferPointer { s in
      var baseEnergy = 0.0
      for index in start..<start + length { baseEnergy += s[index] * s[index] }
      guard baseEnergy > 0 else { return 0 }
      var pastMainLobe = false
      var strongest = 0.0
      for lag in 1...max(1, maximumLag) {
        guard start + lag + length <= s.count else { break }
        var dot = 0.0
        var energy = 0.0
        for index in start..<start + length {
          let value = s[index + lag]
          dot += s[index] * value
          energy += value * value
        }
        guard energy > 0 else { continue }
        let correlation = dot / (baseEnergy * energy).squareRoot()
        if !pastMainLobe {
          pastMainLobe = correlation <= 0
          continue
        }
        strongest = max(strongest, correlation)
        if strongest >= periodicCorrelation { break }
      }
      return strongest
    }
  }

  static func decimate(_ samples: [Int16], by factor: Int) -> [Double] {
    guard factor > 0 else { return [] }
    var result: [Double] = []
    result.reserveCapacity(samples.count / factor)
    var index = 0
    while index + factor <= samples.count {
      var sum = 0
      for offset in 0..<factor { sum += Int(samples[index + offset]) }
      result.append(Double(sum) / Double(factor))
      index += factor
    }
    return result
  }
}

func median(_ values: [Double]) -> Double? {
  guard !values.isEmpty else { return nil }
  let sorted = values.sorted()
  return sorted[sorted.count / 2]
}

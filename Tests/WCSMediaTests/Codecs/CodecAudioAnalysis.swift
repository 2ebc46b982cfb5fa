import Foundation
import WCSMedia

/// Signal measurements the audio tests share.
enum CodecAudioAnalysis {
  /// Power of `frequency` in the first channel of `samples` (Goertzel algorithm), normalised by length.
  static func power(at frequency: Double, in samples: [Int16], channels: Int = 1) -> Double {
    let mono = stride(from: 0, to: samples.count, by: channels).map { Double(samples[$0]) }
    let omega = 2 * Double.pi * frequency / Double(PCMAudioFrame.sampleRate)
    let coefficient = 2 * cos(omega)
    var s1 = 0.0
    var s2 = 0.0
    for x in mono {
      let s0 = x + coefficient * s1 - s2
      s2 = s1
      s1 = s0
    }
    let power = s1 * s1 + s2 * s2 - coefficient * s1 * s2
    return power / Double(max(mono.count, 1) * max(mono.count, 1))
  }

  /// The frequency among 100, 150, ... 4000 Hz with the most power.
  static func dominantFrequency(in samples: [Int16], channels: Int = 1) -> Double {
    var best = 0.0
    var bestPower = -1.0
    for f in stride(from: 100.0, through: 4000.0, by: 50.0) {
      let p = power(at: f, in: samples, channels: channels)
      if p > bestPower {
        bestPower = p
        best = f
      }
    }
    return best
  }

  /// Mean squared difference per sample between two equally long sample arrays.
  static func meanSquaredError(_ a: [Int16], _ b: [Int16]) -> Double {
    let n = min(a.count, b.count)
    guard n > 0 else { return .infinity }
    var sum = 0.0
    for i in 0..<n {
      let d = Double(a[i]) - Double(b[i])
      sum += d * d
    }
    return sum / Double(n)
  }
}

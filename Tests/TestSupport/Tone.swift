import Foundation

/// Tone analysis of received audio.
public enum Tone {
  /// The strongest frequency of `samples` between 100 and 3500 Hz, in 10 Hz steps (Goertzel).
  public static func dominantFrequency(_ samples: [Int16], rate: Double) -> Double {
    var best = (frequency: 0.0, power: 0.0)
    let values = samples.map(Double.init)
    for step in 10...350 {
      let frequency = Double(step) * 10
      let coefficient = 2 * cos(2 * Double.pi * frequency / rate)
      var s1 = 0.0
      var s2 = 0.0
      for x in values {
        let s = x + coefficient * s1 - s2
        s2 = s1
        s1 = s
      }
      let power = s1 * s1 + s2 * s2 - coefficient * s1 * s2
      if power > best.power { best = (frequency, power) }
    }
    return best.frequency
  }

  /// The power of `frequency` in `samples` relative to their total energy, 0...1 (Goertzel),
  /// to tell a tone from silence or noise.
  public static func share(of frequency: Double, in samples: [Int16], rate: Double) -> Double {
    guard !samples.isEmpty else { return 0 }
    let coefficient = 2 * cos(2 * Double.pi * frequency / rate)
    var s1 = 0.0
    var s2 = 0.0
    var energy = 0.0
    for sample in samples {
      let x = Double(sample)
      energy += x * x
      let s = x + coefficient * s1 - s2
      s2 = s1
      s1 = s
    }
    guard energy > 0 else { return 0 }
    let power = s1 * s1 + s2 * s2 - coefficient * s1 * s2
    return min(1, 2 * power / (Double(samples.count) * energy))
  }
}

import Foundation

/// Finds the dominant frequency of PCM (Goertzel on candidates, or a DFT scan), to check tones.
enum ToneAnalysis {
  /// Goertzel power of `frequency` (Hz) in 48 kHz `samples`.
  static func power(_ samples: [Double], _ frequency: Double) -> Double {
    let coefficient = 2 * cos(2 * Double.pi * frequency / 48_000)
    var previous = 0.0
    var beforePrevious = 0.0
    for sample in samples {
      let current = sample + coefficient * previous - beforePrevious
      beforePrevious = previous
      previous = current
    }
    return previous * previous + beforePrevious * beforePrevious
      - coefficient * previous * beforePrevious
  }

  /// The candidate frequency with the most power in `samples`.
  static func strongest<Candidates: Sequence<Double>>(
    of candidates: Candidates, in samples: [Double]
  ) -> Double? {
    candidates.max { power(samples, $0) < power(samples, $1) }
  }

  /// The frequency (Hz) from `from` to `to`, in steps of `stepHz`, with the largest DFT
  /// magnitude in `samples` at `sampleRate`.
  static func dominantFrequency(
    _ samples: [Double], from: Double, to: Double, stepHz: Double, sampleRate: Double = 48_000
  ) -> Double {
    var best = (frequency: 0.0, power: -1.0)
    var frequency = from
    while frequency <= to {
      let w = 2 * Double.pi * frequency / sampleRate
      var re = 0.0
      var im = 0.0
      for (n, s) in samples.enumerated() {
        re += s * cos(w * Double(n))
        im -= s * sin(w * Double(n))
      }
      let power = re * re + im * im
      if power > best.power { best = (frequency, power) }
      frequency += stepHz
    }
    return best.frequency
  }
}

import Foundation

/// Finds the dominant frequency of PCM with the Goertzel algorithm, to check decoded tones.
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
}

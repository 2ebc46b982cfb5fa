import Foundation

/// Small DSP helpers for checking decoded audio and video against their sources.
enum SignalAnalysis {
  /// |X(f)|² of `samples` at frequency `frequency` (Hz) by the Goertzel recurrence.
  static func goertzelPower(_ samples: [Double], frequency: Double, sampleRate: Double) -> Double {
    let coefficient = 2 * cos(2 * Double.pi * frequency / sampleRate)
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

  /// The frequency with the most power among `candidates`.
  static func dominantFrequency(
    _ samples: [Double], candidates: [Double], sampleRate: Double
  ) -> Double? {
    candidates.max {
      goertzelPower(samples, frequency: $0, sampleRate: sampleRate)
        < goertzelPower(samples, frequency: $1, sampleRate: sampleRate)
    }
  }

  /// Share of the signal's energy in the DFT bins between `low` and `high` Hz (Parseval: the bins
  /// of a real signal's positive half carry half of N·Σx²).
  static func bandEnergyFraction(
    _ samples: [Double], low: Double, high: Double, sampleRate: Double
  ) -> Double {
    let count = Double(samples.count)
    let binWidth = sampleRate / count
    let firstBin = Int((low / binWidth).rounded(.up))
    let lastBin = Int((high / binWidth).rounded(.down))
    guard firstBin <= lastBin else { return 0 }
    var bandPower = 0.0
    for bin in firstBin...lastBin {
      bandPower += goertzelPower(samples, frequency: Double(bin) * binWidth, sampleRate: sampleRate)
    }
    let energy = samples.reduce(0) { $0 + $1 * $1 }
    guard energy > 0 else { return 0 }
    return 2 * bandPower / (count * energy)
  }

  static func rms(_ samples: [Double]) -> Double {
    guard !samples.isEmpty else { return 0 }
    return (samples.reduce(0) { $0 + $1 * $1 } / Double(samples.count)).squareRoot()
  }

  /// PSNR in dB of an 8-bit plane against its source (infinity when identical).
  static func psnr(source: [UInt8], decoded: [UInt8]) -> Double {
    guard source.count == decoded.count, !source.isEmpty else { return 0 }
    var squaredError = 0.0
    for index in source.indices {
      let difference = Double(source[index]) - Double(decoded[index])
      squaredError += difference * difference
    }
    let meanSquaredError = squaredError / Double(source.count)
    guard meanSquaredError > 0 else { return .infinity }
    return 10 * log10(255 * 255 / meanSquaredError)
  }
}

import Foundation
import WCSCodecs

/// A deterministic synthetic microphone producing 20 ms frames of 48 kHz PCM: frame `n` depends only
/// on `n` and the settings, so a receiver can regenerate what was sent.
public struct VirtualMicrophone: Sendable {
  /// What the microphone plays.
  public enum Signal: Sendable, Equatable {
    /// A sine at `frequency` Hz.
    case tone(frequency: Double)
    /// A linear sweep from `from` to `to` Hz over `period` seconds, then again from `from`.
    case chirp(from: Double, to: Double, period: Double)
  }

  /// The signal played.
  public let signal: Signal
  /// Peak amplitude, 0 ... 32767.
  public let amplitude: Int16
  /// 1 (mono) or 2 (stereo, same signal in both channels).
  public let channels: Int

  /// A microphone playing `signal` (default: a 440 Hz tone at amplitude 8000, mono).
  public init(
    signal: Signal = .tone(frequency: 440), amplitude: Int16 = 8000, channels: Int = 1
  ) {
    self.signal = signal
    self.amplitude = max(0, amplitude)
    self.channels = channels == 2 ? 2 : 1
  }

  /// 20 ms frame number `index`: 960 samples per channel with RTP timestamp `index * 960`.
  public func frame(_ index: Int) -> PCMAudioFrame {
    let count = PCMAudioFrame.samplesPer20ms
    let rate = Double(PCMAudioFrame.sampleRate)
    var samples = [Int16](repeating: 0, count: count * channels)
    for i in 0..<count {
      let t = Double(index * count + i) / rate
      let phase: Double
      switch signal {
      case .tone(let frequency):
        phase = 2 * Double.pi * frequency * t
      case .chirp(let from, let to, let period):
        let p = max(period, 0.001)
        let local = t.truncatingRemainder(dividingBy: p)
        phase = 2 * Double.pi * (from * local + (to - from) * local * local / (2 * p))
      }
      let value = Int16(Double(amplitude) * sin(phase))
      for c in 0..<channels { samples[i * channels + c] = value }
    }
    return PCMAudioFrame(
      samples: samples, channels: channels, timestamp: UInt32(truncatingIfNeeded: index * count))
  }
}

import Foundation

/// Bridges `PCMAudioFrame` (48 kHz) and G.711 (8 kHz, mono): low-pass filters and decimates by 6 on
/// the way in, interpolates by 6 on the way out, companding with `G711`.
///
/// The filter is a 96-tap Hann-windowed sinc with its cutoff at 3.6 kHz (G.711's telephone band ends
/// at 3.4 kHz), so content above 4 kHz does not alias into the band. The filter delays the signal by
/// about 1 ms each way. Stereo input is mixed down to mono. The state carries over between frames:
/// use one converter per stream direction.
public struct G711AudioConverter: Sendable {
  /// Companding law of the G.711 side.
  public let law: G711.Law

  private static let factor = 6
  private static let taps: [Double] = {
    let count = 96
    let cutoff = 3600.0 / Double(PCMAudioFrame.sampleRate)
    let middle = Double(count - 1) / 2
    var taps = (0..<count).map { k -> Double in
      let t = Double(k) - middle
      let sinc = t == 0 ? 2 * cutoff : sin(2 * Double.pi * cutoff * t) / (Double.pi * t)
      let window = 0.5 - 0.5 * cos(2 * Double.pi * Double(k) / Double(count - 1))
      return sinc * window
    }
    let sum = taps.reduce(0, +)
    for k in taps.indices { taps[k] /= sum }
    return taps
  }()

  private var inputHistory: [Double]
  private var phase = 0
  private var outputHistory: [Double]

  /// A converter for `law`.
  public init(law: G711.Law) {
    self.law = law
    inputHistory = [Double](repeating: 0, count: Self.taps.count)
    outputHistory = [Double](repeating: 0, count: Self.taps.count / Self.factor)
  }

  /// Filters, decimates and compands one 48 kHz frame.
  /// - Returns: one G.711 byte per 6 input samples per channel (160 bytes for a 20 ms frame): an RTP
  ///   payload for PCMU/PCMA (RFC 3551 §4.5.14).
  public mutating func encode(_ frame: PCMAudioFrame) -> [UInt8] {
    var out: [Int16] = []
    out.reserveCapacity(frame.samplesPerChannel / Self.factor + 1)
    let taps = Self.taps
    for index in 0..<frame.samplesPerChannel {
      var mixed = 0.0
      for channel in 0..<frame.channels {
        mixed += Double(frame.samples[index * frame.channels + channel])
      }
      inputHistory.removeFirst()
      inputHistory.append(mixed / Double(frame.channels))
      phase += 1
      if phase == Self.factor {
        phase = 0
        var sum = 0.0
        for k in 0..<taps.count { sum += taps[k] * inputHistory[taps.count - 1 - k] }
        out.append(Int16(max(-32768, min(32767, sum.rounded()))))
      }
    }
    return G711.encode(out, law: law)
  }

  /// Expands and interpolates a G.711 payload to 48 kHz.
  /// - Parameters:
  ///   - payload: PCMU/PCMA bytes (any value is valid).
  ///   - timestamp: 48 kHz timestamp for the output frame (the 8 kHz RTP timestamp times 6).
  ///   - channels: 1, or 2 to duplicate the mono signal.
  /// - Returns: 6 output samples per channel per payload byte.
  public mutating func decode(_ payload: [UInt8], timestamp: UInt32 = 0, channels: Int = 1)
    -> PCMAudioFrame
  {
    let outChannels = channels == 2 ? 2 : 1
    let taps = Self.taps
    let perPhase = taps.count / Self.factor
    var samples: [Int16] = []
    samples.reserveCapacity(payload.count * Self.factor * outChannels)
    for sample in G711.decode(payload, law: law) {
      outputHistory.removeFirst()
      outputHistory.append(Double(sample))
      for p in 0..<Self.factor {
        var sum = 0.0
        for j in 0..<perPhase { sum += taps[p + Self.factor * j] * outputHistory[perPhase - 1 - j] }
        let value = Int16(max(-32768, min(32767, (sum * Double(Self.factor)).rounded())))
        for _ in 0..<outChannels { samples.append(value) }
      }
    }
    return PCMAudioFrame(samples: samples, channels: outChannels, timestamp: timestamp)
  }
}

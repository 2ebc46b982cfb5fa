/// ITU-T G.711 companding: 16-bit linear PCM <-> 8-bit µ-law (PCMU) or A-law (PCMA) at 8 kHz
/// (RFC 3551 §4.5.14). Pure arithmetic on the segment/mantissa layout of the standard; the RTP
/// payload is one byte per sample.
public enum G711: Sendable {
  /// Which companding law.
  public enum Law: Sendable, Equatable {
    /// µ-law (PCMU, static RTP payload type 0), used in North America and Japan.
    case muLaw
    /// A-law (PCMA, static RTP payload type 8), used elsewhere.
    case aLaw

    /// Static RTP payload type (RFC 3551 table 4): 0 for PCMU, 8 for PCMA.
    public var payloadType: UInt8 { self == .muLaw ? 0 : 8 }
  }

  /// G.711 sample rate: 8000 Hz, which is also the RTP clock rate (RFC 3551 §4.5.14).
  public static let sampleRate = 8000

  /// Samples in a 20 ms packet: 160.
  public static let samplesPer20ms = 160

  private static let muLawBias = 0x84
  private static let muLawClip = 32635

  /// One 16-bit sample to µ-law. 0 gives 0xFF, full scale +32767 gives 0x80, -32768 gives 0x00.
  public static func muLaw(_ sample: Int16) -> UInt8 {
    var magnitude = Int(sample)
    let sign = magnitude < 0 ? 0x80 : 0
    if magnitude < 0 { magnitude = -magnitude }
    magnitude = min(magnitude, muLawClip) + muLawBias
    // Segment = position of the leading one above bit 7 (magnitude >= 0x84 so it exists).
    var exponent = 7
    while exponent > 0, magnitude & (0x4000 >> (7 - exponent)) == 0 { exponent -= 1 }
    let mantissa = (magnitude >> (exponent + 3)) & 0x0F
    return ~UInt8(sign | exponent << 4 | mantissa)
  }

  /// One µ-law byte to a 16-bit sample (the segment midpoint): 0xFF and 0x7F give 0, 0x80 gives
  /// 32124, 0x00 gives -32124.
  public static func linear(muLaw byte: UInt8) -> Int16 {
    let value = Int(~byte)
    let exponent = (value >> 4) & 0x07
    let mantissa = value & 0x0F
    let magnitude = ((mantissa << 3) + muLawBias) << exponent - muLawBias
    return Int16(value & 0x80 != 0 ? -magnitude : magnitude)
  }

  /// One 16-bit sample to A-law (even bits inverted, XOR 0x55). 0 gives 0xD5, +32767 gives 0xAA,
  /// -32768 gives 0x2A.
  public static func aLaw(_ sample: Int16) -> UInt8 {
    var value = Int(sample) >> 3  // A-law works on 13 bits.
    let mask: Int
    if value >= 0 {
      mask = 0xD5
    } else {
      mask = 0x55
      value = -value - 1
    }
    var segment = 0
    while segment < 8 && value > ((0x20 << segment) - 1) { segment += 1 }
    if segment >= 8 { return UInt8(0x7F ^ mask) }
    var coded = segment << 4
    coded |= segment < 2 ? (value >> 1) & 0x0F : (value >> segment) & 0x0F
    return UInt8(coded ^ mask)
  }

  /// One A-law byte to a 16-bit sample (the segment midpoint): 0xD5 gives 8, 0x55 gives -8, 0xAA
  /// gives 32256, 0x2A gives -32256.
  public static func linear(aLaw byte: UInt8) -> Int16 {
    let value = Int(byte ^ 0x55)
    var magnitude = (value & 0x0F) << 4
    let segment = (value & 0x70) >> 4
    switch segment {
    case 0: magnitude += 8
    case 1: magnitude += 0x108
    default: magnitude = (magnitude + 0x108) << (segment - 1)
    }
    return Int16(value & 0x80 != 0 ? magnitude : -magnitude)
  }

  /// Encodes 8 kHz mono samples, one byte each: the RTP payload of PCMU/PCMA.
  public static func encode(_ samples: [Int16], law: Law) -> [UInt8] {
    switch law {
    case .muLaw: return samples.map(muLaw)
    case .aLaw: return samples.map(aLaw)
    }
  }

  /// Decodes a PCMU/PCMA payload to 8 kHz mono samples. Every byte value is valid.
  public static func decode(_ payload: [UInt8], law: Law) -> [Int16] {
    switch law {
    case .muLaw: return payload.map { linear(muLaw: $0) }
    case .aLaw: return payload.map { linear(aLaw: $0) }
    }
  }
}

/// H.264 NAL unit types this stack acts on (ITU-T H.264 Table 7-1; RFC 6184 §5.2 adds 24 ... 29
/// for RTP aggregation and fragmentation units).
public enum H264NALUnitType {
  /// Coded slice of a non-IDR picture.
  public static let nonIDRSlice: UInt8 = 1
  /// Coded slice of an IDR picture: decodable on its own.
  public static let idrSlice: UInt8 = 5
  /// Supplemental enhancement information.
  public static let sei: UInt8 = 6
  /// Sequence parameter set.
  public static let sps: UInt8 = 7
  /// Picture parameter set.
  public static let pps: UInt8 = 8
  /// Access unit delimiter.
  public static let accessUnitDelimiter: UInt8 = 9
  /// RFC 6184 §5.7.1 single-time aggregation packet.
  public static let stapA: UInt8 = 24
  /// RFC 6184 §5.8 fragmentation unit without DON.
  public static let fuA: UInt8 = 28

  /// The type in a NAL unit header byte (its low 5 bits).
  public static func of(_ header: UInt8) -> UInt8 { header & 0x1F }
}

/// The H.264 byte stream format (ITU-T H.264 Annex B): NAL units each preceded by a start code
/// `00 00 01` or `00 00 00 01`. Encoders write it, libavcodec reads it, RTP carries the NAL units
/// without the start codes (RFC 6184 §1.3).
public enum H264AnnexB {
  /// The NAL units of a byte stream, without their start codes, in order; empty units (two start
  /// codes in a row) are left out. Bytes before the first start code are ignored; a trailing zero
  /// byte of a unit (the first byte of a 4-byte start code) is not part of it (H.264 §B.2).
  public static func nalUnits(_ stream: [UInt8]) -> [ArraySlice<UInt8>] {
    var units: [ArraySlice<UInt8>] = []
    var start: Int?
    var index = 0
    let count = stream.count
    while index + 2 < count {
      if stream[index] == 0, stream[index + 1] == 0, stream[index + 2] == 1 {
        if let start {
          let unit = withoutTrailingZeros(stream[start..<index])
          if !unit.isEmpty { units.append(unit) }
        }
        index += 3
        start = index
      } else {
        index += 1
      }
    }
    if let start, start < count {
      units.append(stream[start..<count])
    }
    return units
  }

  /// `unit` without the zero bytes it ends in: in a byte stream, where a start code follows,
  /// a reader takes them for trailing_zero_8bits (H.264 §B.2), so a unit checked before it is
  /// written must be checked as this.
  public static func withoutTrailingZeros(_ unit: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    var end = unit.endIndex
    while end > unit.startIndex, unit[end - 1] == 0 { end -= 1 }
    return unit[unit.startIndex..<end]
  }

  /// A byte stream of `units`, each after a 4-byte start code.
  public static func stream<Units: Sequence>(_ units: Units) -> [UInt8]
  where Units.Element: Collection, Units.Element.Element == UInt8 {
    var out: [UInt8] = []
    for unit in units {
      out += [0, 0, 0, 1]
      out += unit
    }
    return out
  }
}

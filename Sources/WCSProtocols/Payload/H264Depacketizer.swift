import WCSCodecs

/// One received H.264 RTP payload (RFC 6184 §5.2), read.
public enum H264PayloadPacket: Sendable, Equatable {
  /// Whole NAL units: a single NAL unit packet (§5.6) or the units of a STAP-A (§5.7.1).
  case nalUnits([ArraySlice<UInt8>])
  /// One FU-A fragment (§5.8): `header` is the NAL header it rebuilds (F and NRI of the FU
  /// indicator, type of the FU header); `data` the fragment's bytes after the FU header.
  case fragment(header: UInt8, isStart: Bool, isEnd: Bool, data: ArraySlice<UInt8>)
}

/// Why an H.264 RTP payload or access unit was refused.
public enum H264PayloadError: Error, Sendable, Equatable, CustomStringConvertible {
  /// No bytes.
  case emptyPayload
  /// The forbidden_zero_bit of a NAL header is set (§5.3).
  case forbiddenBit
  /// A NAL unit type this receiver does not take: 0 and 30 ... 31 (undefined), STAP-B,
  /// MTAP16/24 and FU-B (25 ... 27, 29: interleaved mode only, which is not negotiated).
  case unsupportedNALType(UInt8)
  /// A STAP-A size runs past the end of the packet, or a STAP-A holds no unit, or a unit of
  /// size 0.
  case badAggregationLength
  /// A FU-A shorter than its 2 header bytes or with both S and E set (§5.8 forbids it), or a
  /// fragment inside an FU-A with a different type.
  case badFragment
  /// A FU-A continuation without the start of its NAL unit (the start was lost).
  case fragmentWithoutStart
  /// A sequence number is missing inside an access unit.
  case lostPacket
  /// A slice refers to a PPS (or a PPS to an SPS) never received.
  case missingParameterSet
  /// An SPS announces a picture over the limit, or cannot be read.
  case pictureTooLarge
  /// An access unit over the size or NAL unit count bound.
  case accessUnitTooLarge
  /// A NAL unit holds 0x000000, 0x000001 or 0x000002, or ends in 0x00 (H.264 §7.4.1 forbids
  /// them): in the Annex B stream handed to the decoder it would read as other NAL units,
  /// ones never checked (an SPS over the picture limit among them).
  case startCodeInNALUnit

  /// A sentence for logs.
  public var description: String {
    switch self {
    case .emptyPayload: "empty payload"
    case .forbiddenBit: "forbidden_zero_bit set"
    case .unsupportedNALType(let type): "NAL unit type \(type) not supported"
    case .badAggregationLength: "STAP-A size past the end of the packet"
    case .badFragment: "malformed FU-A"
    case .fragmentWithoutStart: "FU-A without its start"
    case .lostPacket: "packet lost inside an access unit"
    case .missingParameterSet: "slice or PPS refers to a parameter set never received"
    case .pictureTooLarge: "SPS over the picture limit"
    case .accessUnitTooLarge: "access unit over the size bound"
    case .startCodeInNALUnit: "start code inside a NAL unit"
    }
  }
}

/// Reads H.264 RTP payloads (RFC 6184 §5) with bounds checks on every byte.
public enum H264Depacketizer: Sendable {
  /// Splits a payload into NAL units or a fragment.
  /// - Throws: `H264PayloadError` — `.emptyPayload`, `.forbiddenBit`, `.unsupportedNALType`
  ///   for types 0, 25 ... 27, 29 ... 31 (also inside a STAP-A or FU-A), `.badAggregationLength`,
  ///   `.badFragment`.
  public static func parse(_ payload: ArraySlice<UInt8>) throws(H264PayloadError)
    -> H264PayloadPacket
  {
    guard let header = payload.first else { throw .emptyPayload }
    guard header & 0x80 == 0 else { throw .forbiddenBit }
    let type = H264NALUnitType.of(header)
    switch type {
    case 1...23:
      return .nalUnits([payload])
    case H264NALUnitType.stapA:
      var units: [ArraySlice<UInt8>] = []
      var offset = payload.startIndex + 1
      while offset < payload.endIndex {
        guard offset + 2 <= payload.endIndex else { throw .badAggregationLength }
        let size = Int(payload[offset]) << 8 | Int(payload[offset + 1])
        offset += 2
        guard size > 0, offset + size <= payload.endIndex else { throw .badAggregationLength }
        let unit = payload[offset..<offset + size]
        let unitType = H264NALUnitType.of(unit[unit.startIndex])
        guard unit[unit.startIndex] & 0x80 == 0 else { throw .forbiddenBit }
        guard (1...23).contains(unitType) else { throw .unsupportedNALType(unitType) }
        units.append(unit)
        offset += size
      }
      guard !units.isEmpty else { throw .badAggregationLength }
      return .nalUnits(units)
    case H264NALUnitType.fuA:
      guard payload.count >= 3 else { throw .badFragment }
      let fuHeader = payload[payload.startIndex + 1]
      let isStart = fuHeader & 0x80 != 0
      let isEnd = fuHeader & 0x40 != 0
      let unitType = H264NALUnitType.of(fuHeader)
      guard !(isStart && isEnd) else { throw .badFragment }
      guard (1...23).contains(unitType) else { throw .unsupportedNALType(unitType) }
      return .fragment(
        header: header & 0xE0 | unitType, isStart: isStart, isEnd: isEnd,
        data: payload[(payload.startIndex + 2)...])
    default:
      throw .unsupportedNALType(type)
    }
  }
}

import WCSCodecs

/// Splits H.264 access units (Annex B byte streams, as `H264Encoder` makes them) into RTP
/// payloads (RFC 6184).
///
/// packetization-mode 1 (§6.3): a NAL unit that fits travels alone (§5.6), small neighbours
/// share a STAP-A (§5.7.1: SPS and PPS go together this way), a larger one is cut into FU-A
/// fragments of balanced sizes (§5.8). packetization-mode 0 (§6.2): single NAL unit packets
/// only; a NAL unit over `maxPayloadSize` cannot be sent and is counted in
/// `oversizedNALUnits` (the encoder's `maxNALUnitSize` keeps slices under it).
///
/// Every IDR goes out after an SPS and a PPS: the last ones seen are repeated when an access
/// unit with an IDR does not carry its own, so a receiver that joins or lost packets can start
/// at any IDR. Access unit delimiters are not sent (§5.3 leaves them optional). The marker bit
/// is set on the last packet of an access unit (§5.1).
public struct H264Packetizer: Sendable {
  /// Largest RTP payload produced, in bytes (1160 as VP8: room for RTP, extensions, SRTP and
  /// IP/UDP headers under a 1280-byte MTU).
  public let maxPayloadSize: Int
  /// 0 or 1 (RFC 6184 §8.1 `packetization-mode`).
  public let packetizationMode: Int
  /// NAL units dropped in mode 0 for being larger than `maxPayloadSize`.
  public private(set) var oversizedNALUnits = 0
  private var sps: [UInt8]?
  private var pps: [UInt8]?

  /// A packetizer.
  /// - Parameters:
  ///   - maxPayloadSize: bytes per payload, at least 64 (smaller values are raised to 64).
  ///   - packetizationMode: 0 or 1; other values are taken as 1.
  public init(maxPayloadSize: Int = 1160, packetizationMode: Int = 1) {
    self.maxPayloadSize = max(64, maxPayloadSize)
    self.packetizationMode = packetizationMode == 0 ? 0 : 1
  }

  /// The RTP payloads for one access unit, in sending order.
  /// - Returns: an empty array when the frame holds no NAL unit.
  public mutating func packetize(_ frame: EncodedVideoFrame) -> [PacketizedPayload] {
    var units: [ArraySlice<UInt8>] = []
    var hasSPS = false
    var hasPPS = false
    for unit in H264AnnexB.nalUnits(frame.data) {
      guard let header = unit.first else { continue }
      switch H264NALUnitType.of(header) {
      case H264NALUnitType.accessUnitDelimiter:
        continue
      case H264NALUnitType.sps:
        sps = Array(unit)
        hasSPS = true
      case H264NALUnitType.pps:
        pps = Array(unit)
        hasPPS = true
      case H264NALUnitType.idrSlice where !(hasSPS && hasPPS):
        if !hasSPS, let sps { units.append(sps[...]) }
        if !hasPPS, let pps { units.append(pps[...]) }
        hasSPS = true
        hasPPS = true
      default: break
      }
      units.append(unit)
    }
    var payloads: [[UInt8]] = []
    var index = 0
    while index < units.count {
      let unit = units[index]
      if unit.count > maxPayloadSize {
        if packetizationMode == 0 {
          oversizedNALUnits += 1
        } else {
          payloads += fragments(of: unit)
        }
        index += 1
        continue
      }
      // As many following units as fit in one STAP-A (mode 1): 1 byte of STAP-A header,
      // then a 16-bit size before each unit.
      var end = index + 1
      var size = 1 + 2 + unit.count
      if packetizationMode == 1 {
        while end < units.count, size + 2 + units[end].count <= maxPayloadSize {
          size += 2 + units[end].count
          end += 1
        }
      }
      if end - index == 1 {
        payloads.append(Array(unit))
      } else {
        payloads.append(aggregate(units[index..<end]))
      }
      index = end
    }
    return payloads.enumerated().map { offset, payload in
      PacketizedPayload(
        payload: payload, marker: offset == payloads.count - 1, timestamp: frame.timestamp)
    }
  }

  /// A STAP-A (RFC 6184 §5.7.1): its NAL header takes the highest NRI of the units and F if
  /// any has it.
  private func aggregate(_ units: ArraySlice<ArraySlice<UInt8>>) -> [UInt8] {
    var forbidden: UInt8 = 0
    var nri: UInt8 = 0
    var out: [UInt8] = [0]
    for unit in units {
      let header = unit[unit.startIndex]
      forbidden |= header & 0x80
      nri = max(nri, header & 0x60)
      out.append(UInt8(unit.count >> 8))
      out.append(UInt8(unit.count & 0xFF))
      out += unit
    }
    out[0] = forbidden | nri | H264NALUnitType.stapA
    return out
  }

  /// FU-A fragments (RFC 6184 §5.8): the NAL header is not sent; its F and NRI go in the FU
  /// indicator, its type in each FU header (S on the first, E on the last).
  private func fragments(of unit: ArraySlice<UInt8>) -> [[UInt8]] {
    let header = unit[unit.startIndex]
    let body = unit.dropFirst()
    let room = maxPayloadSize - 2
    let count = (body.count + room - 1) / room
    let base = body.count / count
    let extra = body.count % count
    var out: [[UInt8]] = []
    out.reserveCapacity(count)
    var offset = body.startIndex
    for index in 0..<count {
      let size = base + (index < extra ? 1 : 0)
      var fuHeader = H264NALUnitType.of(header)
      if index == 0 { fuHeader |= 0x80 }
      if index == count - 1 { fuHeader |= 0x40 }
      var payload: [UInt8] = [header & 0xE0 | H264NALUnitType.fuA, fuHeader]
      payload.reserveCapacity(2 + size)
      payload += body[offset..<offset + size]
      offset += size
      out.append(payload)
    }
    return out
  }
}

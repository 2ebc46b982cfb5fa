import WCSCodecs

extension H264Depacketizer {
  /// Whether an RTP payload (RFC 6184 §5.6–5.8) starts an IDR picture: a single NAL unit, a
  /// STAP-A aggregate, or the start fragment of an FU-A holding an IDR slice (type 5) whose
  /// `first_mb_in_slice` is 0 (H.264 §7.3.3), so a picture of several slices counts once.
  /// Only headers are read; a payload too short or malformed for that is not a key frame.
  public static func startsKeyFrame(_ payload: ArraySlice<UInt8>) -> Bool {
    guard let first = payload.first else { return false }
    switch H264NALUnitType.of(first) {
    case H264NALUnitType.idrSlice:
      return startsPicture(payload.dropFirst())
    case H264NALUnitType.stapA:
      // 16-bit size, then the unit (§5.7.1); every size is checked against what is left.
      var rest = payload.dropFirst()
      while rest.count >= 2 {
        let size = Int(rest[rest.startIndex]) << 8 | Int(rest[rest.startIndex + 1])
        rest = rest.dropFirst(2)
        guard size > 0, size <= rest.count else { return false }
        if H264NALUnitType.of(rest[rest.startIndex]) == H264NALUnitType.idrSlice,
          startsPicture(rest.prefix(size).dropFirst())
        {
          return true
        }
        rest = rest.dropFirst(size)
      }
      return false
    case H264NALUnitType.fuA:
      // FU header (§5.8): S bit, then the fragmented unit's type.
      guard payload.count >= 3 else { return false }
      let header = payload[payload.startIndex + 1]
      return header & 0x80 != 0 && H264NALUnitType.of(header) == H264NALUnitType.idrSlice
        && startsPicture(payload.dropFirst(2))
    default:
      return false
    }
  }

  /// Whether a slice's header (after its NAL header byte) has `first_mb_in_slice` 0: its
  /// ue(v) code is then the single bit 1.
  private static func startsPicture(_ sliceHeader: ArraySlice<UInt8>) -> Bool {
    guard let byte = sliceHeader.first else { return false }
    return byte & 0x80 != 0
  }
}

/// The fields of an H.264 sequence parameter set (ITU-T H.264 §7.3.2.1.1) that a receiver checks
/// before a decoder allocates for it: profile, level and the coded picture size.
public struct H264SequenceParameterSet: Sendable, Equatable {
  /// `profile_idc` (66 baseline, 77 main, 100 high, ...).
  public var profileIDC: UInt8
  /// The byte of `constraint_set0_flag ... constraint_set5_flag` and the two reserved bits.
  public var constraintFlags: UInt8
  /// `level_idc` (ten times the level number: 31 is level 3.1).
  public var levelIDC: UInt8
  /// `seq_parameter_set_id`, 0 ... 31.
  public var id: Int
  /// Picture width in luma samples after the frame cropping.
  public var width: Int
  /// Picture height in luma samples after the frame cropping.
  public var height: Int
  /// Width in macroblocks before cropping (`pic_width_in_mbs_minus1 + 1`).
  public var widthInMacroblocks: Int
  /// Height of a frame in macroblocks before cropping.
  public var heightInMacroblocks: Int

  /// Reads an SPS NAL unit (header byte included, emulation prevention bytes not yet removed).
  /// - Throws: `H264BitstreamError` when the unit is not an SPS, ends early, or has a field out
  ///   of its range (an id over 31, a chroma format over 3, more than 255 POC cycle offsets, a
  ///   size over 2^16 macroblocks per side).
  public init(nalUnit: some Collection<UInt8>) throws(H264BitstreamError) {
    var reader = H264BitReader(rbsp: H264BitReader.removingEmulationPrevention(nalUnit))
    let header = try reader.bits(8)
    guard header & 0x80 == 0, UInt8(header & 0x1F) == H264NALUnitType.sps else {
      throw .notParameterSet
    }
    profileIDC = UInt8(try reader.bits(8))
    constraintFlags = UInt8(try reader.bits(8))
    levelIDC = UInt8(try reader.bits(8))
    id = try reader.unsignedExpGolomb(max: 31)
    var chromaFormat = 1
    var separateColourPlanes = false
    if [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].contains(profileIDC) {
      chromaFormat = try reader.unsignedExpGolomb(max: 3)
      if chromaFormat == 3 { separateColourPlanes = try reader.flag() }
      _ = try reader.unsignedExpGolomb(max: 6)  // bit_depth_luma_minus8
      _ = try reader.unsignedExpGolomb(max: 6)  // bit_depth_chroma_minus8
      _ = try reader.flag()  // qpprime_y_zero_transform_bypass_flag
      if try reader.flag() {  // seq_scaling_matrix_present_flag
        for list in 0..<(chromaFormat == 3 ? 12 : 8) where try reader.flag() {
          try reader.skipScalingList(size: list < 6 ? 16 : 64)
        }
      }
    }
    _ = try reader.unsignedExpGolomb(max: 12)  // log2_max_frame_num_minus4
    let pictureOrderCountType = try reader.unsignedExpGolomb(max: 2)
    if pictureOrderCountType == 0 {
      _ = try reader.unsignedExpGolomb(max: 12)  // log2_max_pic_order_cnt_lsb_minus4
    } else if pictureOrderCountType == 1 {
      _ = try reader.flag()  // delta_pic_order_always_zero_flag
      _ = try reader.signedExpGolomb()  // offset_for_non_ref_pic
      _ = try reader.signedExpGolomb()  // offset_for_top_to_bottom_field
      let cycle = try reader.unsignedExpGolomb(max: 255)
      for _ in 0..<cycle { _ = try reader.signedExpGolomb() }
    }
    _ = try reader.unsignedExpGolomb(max: 32)  // max_num_ref_frames
    _ = try reader.flag()  // gaps_in_frame_num_value_allowed_flag
    let widthInMBs = try reader.unsignedExpGolomb(max: 65535) + 1
    let heightInMapUnits = try reader.unsignedExpGolomb(max: 65535) + 1
    let frameMBsOnly = try reader.flag()
    if !frameMBsOnly { _ = try reader.flag() }  // mb_adaptive_frame_field_flag
    _ = try reader.flag()  // direct_8x8_inference_flag
    widthInMacroblocks = widthInMBs
    heightInMacroblocks = heightInMapUnits * (frameMBsOnly ? 1 : 2)
    var width = widthInMBs * 16
    var height = heightInMacroblocks * 16
    if try reader.flag() {  // frame_cropping_flag
      // §7.4.2.1.1: crop offsets count in chroma samples (CropUnitX/Y).
      let chromaArrayType = separateColourPlanes ? 0 : chromaFormat
      let unitX = chromaArrayType == 1 || chromaArrayType == 2 ? 2 : 1
      let unitY = (chromaArrayType == 1 ? 2 : 1) * (frameMBsOnly ? 1 : 2)
      let left = try reader.unsignedExpGolomb(max: 65535)
      let right = try reader.unsignedExpGolomb(max: 65535)
      let top = try reader.unsignedExpGolomb(max: 65535)
      let bottom = try reader.unsignedExpGolomb(max: 65535)
      width -= unitX * (left + right)
      height -= unitY * (top + bottom)
      guard width > 0, height > 0 else { throw .outOfRange("frame cropping") }
    }
    self.width = width
    self.height = height
  }
}

/// Why an H.264 NAL unit could not be read.
public enum H264BitstreamError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The unit ended inside a field.
  case truncated
  /// The unit is not the parameter set asked for (or its forbidden bit is set).
  case notParameterSet
  /// A field is outside the range H.264 allows; the field's name.
  case outOfRange(String)

  /// A sentence for logs.
  public var description: String {
    switch self {
    case .truncated: "the NAL unit ends inside a field"
    case .notParameterSet: "not a sequence parameter set"
    case .outOfRange(let field): "\(field) out of range"
    }
  }
}

/// Reads bits, unsigned and signed Exp-Golomb codes (ITU-T H.264 §9.1) from an RBSP.
package struct H264BitReader {
  private let bytes: [UInt8]
  private var position = 0

  package init(rbsp: [UInt8]) { bytes = rbsp }

  /// The RBSP of a NAL unit: every `00 00 03` becomes `00 00` (§7.4.1).
  package static func removingEmulationPrevention(_ unit: some Collection<UInt8>) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(unit.count)
    var zeros = 0
    for byte in unit {
      if zeros >= 2, byte == 3 {
        zeros = 0
        continue
      }
      zeros = byte == 0 ? zeros + 1 : 0
      out.append(byte)
    }
    return out
  }

  package mutating func bits(_ count: Int) throws(H264BitstreamError) -> Int {
    guard position + count <= bytes.count * 8 else { throw .truncated }
    var value = 0
    for _ in 0..<count {
      let bit = (bytes[position >> 3] >> (7 - UInt8(position & 7))) & 1
      value = value << 1 | Int(bit)
      position += 1
    }
    return value
  }

  package mutating func flag() throws(H264BitstreamError) -> Bool { try bits(1) == 1 }

  /// `ue(v)`, refused over `max` (and over 2^32 − 2, its largest 32-bit value).
  package mutating func unsignedExpGolomb(max: Int) throws(H264BitstreamError) -> Int {
    var zeros = 0
    while try bits(1) == 0 {
      zeros += 1
      guard zeros < 32 else { throw .outOfRange("Exp-Golomb code") }
    }
    let value = (1 << zeros) - 1 + (try bits(zeros))
    guard value <= max else { throw .outOfRange("Exp-Golomb value \(value)") }
    return value
  }

  /// `se(v)`.
  package mutating func signedExpGolomb() throws(H264BitstreamError) -> Int {
    let code = try unsignedExpGolomb(max: Int(UInt32.max))
    return code & 1 == 1 ? (code + 1) / 2 : -(code / 2)
  }

  /// `scaling_list()` of §7.3.2.1.1.1, read and dropped.
  package mutating func skipScalingList(size: Int) throws(H264BitstreamError) {
    var last = 8
    var next = 8
    for _ in 0..<size {
      if next != 0 {
        let delta = try signedExpGolomb()
        guard (-128...127).contains(delta) else { throw .outOfRange("delta_scale") }
        next = (last + delta + 256) % 256
      }
      last = next == 0 ? last : next
    }
  }
}

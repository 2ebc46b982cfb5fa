/// MSB-first bits and unsigned Exp-Golomb codes (H.264 §9.1), for hand-made parameter sets.
public struct ExpGolombBitWriter {
  /// The bytes written so far; the last one padded with zero bits.
  public private(set) var bytes: [UInt8] = []
  private var used = 8

  public init() {}

  /// Appends the low `count` bits of `value`, most significant first.
  public mutating func bits(_ value: Int, _ count: Int) {
    for shift in stride(from: count - 1, through: 0, by: -1) {
      if used == 8 {
        bytes.append(0)
        used = 0
      }
      if (value >> shift) & 1 == 1 { bytes[bytes.count - 1] |= 0x80 >> UInt8(used) }
      used += 1
    }
  }

  /// Appends `value` as ue(v).
  public mutating func ue(_ value: Int) {
    let code = value + 1
    let length = Int.bitWidth - code.leadingZeroBitCount
    bits(0, length - 1)
    bits(code, length)
  }
}

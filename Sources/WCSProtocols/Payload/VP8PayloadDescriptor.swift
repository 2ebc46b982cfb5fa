/// Why a VP8 RTP payload was rejected.
public enum VP8PayloadError: Error, Sendable, Equatable {
  /// The payload ended inside the payload descriptor; `field` names what was missing
  /// ("required", "X", "PictureID", "PictureID low byte", "TL0PICIDX", "TID/KEYIDX").
  case truncatedDescriptor(field: String)
  /// The descriptor is complete but no VP8 data follows it (RFC 7741 §4.2 requires some).
  case emptyPayload
  /// The first packet of a frame is too short for the 3-byte VP8 payload header (RFC 7741 §4.3),
  /// or a key frame lacks its start code (RFC 6386 §9.1).
  case badPayloadHeader
}

/// The VP8 payload descriptor that starts every VP8 RTP payload (RFC 7741 §4.2).
///
/// ```
///       0 1 2 3 4 5 6 7
///      |X|R|N|S|R| PID |
///   X: |I|L|T|K| RSV   |
///   I: |M| PictureID   |
///   M: | PictureID     |
///   L: |   TL0PICIDX   |
/// T/K: |TID|Y| KEYIDX  |
/// ```
public struct VP8PayloadDescriptor: Sendable, Equatable {
  /// N: the frame can be discarded without affecting other frames.
  public var isNonReference: Bool
  /// S: this packet starts a VP8 partition.
  public var startOfPartition: Bool
  /// PID: partition index, 0 ... 7.
  public var partitionIndex: UInt8
  /// PictureID (I bit): 7 bits, or 15 bits when `pictureIDIs15Bit`; nil when absent.
  public var pictureID: UInt16?
  /// M: the PictureID field is 15 bits (2 bytes) rather than 7.
  public var pictureIDIs15Bit: Bool
  /// TL0PICIDX (L bit): running index of the base temporal layer frames; nil when absent.
  public var tl0PictureIndex: UInt8?
  /// TID (T bit): temporal layer index 0 ... 3; nil when absent.
  public var temporalLayerIndex: UInt8?
  /// Y: layer sync, meaningful with `temporalLayerIndex`.
  public var layerSync: Bool
  /// KEYIDX (K bit): 5-bit running index of key frames; nil when absent.
  public var keyIndex: UInt8?

  /// A descriptor; defaults describe the first packet of a frame with no extensions.
  public init(
    isNonReference: Bool = false, startOfPartition: Bool = true, partitionIndex: UInt8 = 0,
    pictureID: UInt16? = nil, pictureIDIs15Bit: Bool = true, tl0PictureIndex: UInt8? = nil,
    temporalLayerIndex: UInt8? = nil, layerSync: Bool = false, keyIndex: UInt8? = nil
  ) {
    self.isNonReference = isNonReference
    self.startOfPartition = startOfPartition
    self.partitionIndex = partitionIndex & 0x07
    self.pictureID = pictureID
    self.pictureIDIs15Bit = pictureIDIs15Bit
    self.tl0PictureIndex = tl0PictureIndex
    self.temporalLayerIndex = temporalLayerIndex
    self.layerSync = layerSync
    self.keyIndex = keyIndex
  }

  /// True on the packet that starts a frame: S = 1 and PID = 0 (RFC 7741 §4.2).
  public var startsFrame: Bool { startOfPartition && partitionIndex == 0 }

  /// The PictureID modulus: 2^15 or 2^7.
  public var pictureIDModulus: UInt16 { pictureIDIs15Bit ? 0x8000 : 0x80 }

  /// Encoded length in bytes: 1 ... 6.
  public var encodedLength: Int {
    var length = 1
    if hasExtension {
      length += 1
      if pictureID != nil { length += pictureIDIs15Bit ? 2 : 1 }
      if tl0PictureIndex != nil { length += 1 }
      if temporalLayerIndex != nil || keyIndex != nil { length += 1 }
    }
    return length
  }

  private var hasExtension: Bool {
    pictureID != nil || tl0PictureIndex != nil || temporalLayerIndex != nil || keyIndex != nil
  }

  /// The descriptor bytes.
  public func serialized() -> [UInt8] {
    var first = partitionIndex & 0x07
    if hasExtension { first |= 0x80 }
    if isNonReference { first |= 0x20 }
    if startOfPartition { first |= 0x10 }
    var out = [first]
    guard hasExtension else { return out }
    var extensionByte: UInt8 = 0
    if pictureID != nil { extensionByte |= 0x80 }
    if tl0PictureIndex != nil { extensionByte |= 0x40 }
    if temporalLayerIndex != nil { extensionByte |= 0x20 }
    if keyIndex != nil { extensionByte |= 0x10 }
    out.append(extensionByte)
    if let pictureID {
      if pictureIDIs15Bit {
        out.append(0x80 | UInt8((pictureID >> 8) & 0x7F))
        out.append(UInt8(pictureID & 0xFF))
      } else {
        out.append(UInt8(pictureID & 0x7F))
      }
    }
    if let tl0PictureIndex { out.append(tl0PictureIndex) }
    if temporalLayerIndex != nil || keyIndex != nil {
      var byte = ((temporalLayerIndex ?? 0) & 0x03) << 6
      if layerSync { byte |= 0x20 }
      byte |= (keyIndex ?? 0) & 0x1F
      out.append(byte)
    }
    return out
  }

  /// Parses the descriptor at the start of an RTP payload, reading byte by byte with bounds checks.
  /// - Returns: the descriptor and its length in bytes (where the VP8 data starts).
  /// - Throws: `VP8PayloadError.truncatedDescriptor` when the payload ends inside it.
  public static func parse(_ payload: [UInt8]) throws(VP8PayloadError) -> (
    descriptor: VP8PayloadDescriptor, length: Int
  ) {
    var index = payload.startIndex
    func next(_ field: String) throws(VP8PayloadError) -> UInt8 {
      guard index < payload.endIndex else { throw .truncatedDescriptor(field: field) }
      let byte = payload[index]
      index += 1
      return byte
    }
    let first = try next("required")
    var descriptor = VP8PayloadDescriptor(
      isNonReference: first & 0x20 != 0, startOfPartition: first & 0x10 != 0,
      partitionIndex: first & 0x07)
    if first & 0x80 != 0 {
      let extensionByte = try next("X")
      if extensionByte & 0x80 != 0 {
        let high = try next("PictureID")
        if high & 0x80 != 0 {
          let low = try next("PictureID low byte")
          descriptor.pictureID = UInt16(high & 0x7F) << 8 | UInt16(low)
          descriptor.pictureIDIs15Bit = true
        } else {
          descriptor.pictureID = UInt16(high)
          descriptor.pictureIDIs15Bit = false
        }
      }
      if extensionByte & 0x40 != 0 { descriptor.tl0PictureIndex = try next("TL0PICIDX") }
      if extensionByte & 0x30 != 0 {
        let byte = try next("TID/KEYIDX")
        if extensionByte & 0x20 != 0 {
          descriptor.temporalLayerIndex = byte >> 6
          descriptor.layerSync = byte & 0x20 != 0
        }
        if extensionByte & 0x10 != 0 { descriptor.keyIndex = byte & 0x1F }
      }
    }
    return (descriptor, index - payload.startIndex)
  }
}

/// The RTP fixed header, CSRC list and header extension (RFC 3550 §5.1, §5.3.1; RFC 8285).
public struct RTPHeader: Equatable, Sendable {
  /// How a header holds its extension: as given to it, or (parsed from a packet) as the wire
  /// octets when they fit inline, decoded on demand.
  package enum ExtensionStorage: Sendable {
    case none
    case decoded(RTPHeaderExtension)
    case wire(RTPWireHeaderExtension)
  }

  /// The only RTP version in use (RFC 3550 §5.1).
  public static let version: UInt8 = 2
  /// Octets of the fixed header (RFC 3550 §5.1).
  public static let fixedHeaderLength = 12

  /// M bit: meaning set by the profile (end of a video frame, start of a talkspurt).
  public var marker: Bool
  /// Payload type, 0...127, mapped to a codec by `a=rtpmap` (RFC 3550 §5.1).
  public var payloadType: UInt8
  /// Sequence number, +1 per packet, wraps at 2^16 (RFC 3550 §5.1).
  public var sequenceNumber: UInt16
  /// Sampling instant in the payload's RTP clock (90 kHz video, 48 kHz Opus; RFC 3550 §5.1).
  public var timestamp: UInt32
  /// Synchronization source identifier.
  public var ssrc: UInt32
  /// Contributing sources, at most 15.
  public var csrcs: [UInt32]
  /// The header extension, when the X bit is set (RFC 3550 §5.3.1; one- or two-byte elements,
  /// RFC 8285). A parsed extension of up to 16 bytes is kept as its wire bytes (validated at
  /// parse time) and decoded on each read: code that reads it per packet pays that each time.
  public var headerExtension: RTPHeaderExtension? {
    get {
      switch extensionStorage {
      case .none: return nil
      case .decoded(let headerExtension): return headerExtension
      case .wire(let wire): return wire.decoded
      }
    }
    set { extensionStorage = newValue.map { .decoded($0) } ?? .none }
  }
  /// The storage behind `headerExtension`.
  package var extensionStorage: ExtensionStorage

  /// Creates a header; `csrcs` and `headerExtension` default to none.
  public init(
    marker: Bool = false, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32,
    ssrc: UInt32, csrcs: [UInt32] = [], headerExtension: RTPHeaderExtension? = nil
  ) {
    self.marker = marker
    self.payloadType = payloadType
    self.sequenceNumber = sequenceNumber
    self.timestamp = timestamp
    self.ssrc = ssrc
    self.csrcs = csrcs
    self.extensionStorage = headerExtension.map { .decoded($0) } ?? .none
  }

  /// A parsed header: `extensionStorage` as the parser found it.
  init(
    marker: Bool, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32, ssrc: UInt32,
    csrcs: consuming [UInt32], extensionStorage: consuming ExtensionStorage
  ) {
    self.marker = marker
    self.payloadType = payloadType
    self.sequenceNumber = sequenceNumber
    self.timestamp = timestamp
    self.ssrc = ssrc
    self.csrcs = csrcs
    self.extensionStorage = extensionStorage
  }

  /// Equal when every field is, the extension compared decoded (one held as wire octets equals
  /// the same extension given decoded).
  public static func == (lhs: RTPHeader, rhs: RTPHeader) -> Bool {
    lhs.marker == rhs.marker && lhs.payloadType == rhs.payloadType
      && lhs.sequenceNumber == rhs.sequenceNumber && lhs.timestamp == rhs.timestamp
      && lhs.ssrc == rhs.ssrc && lhs.csrcs == rhs.csrcs
      && lhs.headerExtension == rhs.headerExtension
  }

  /// Octets this header takes on the wire: 12 + 4 per CSRC + the padded extension.
  public var serializedLength: Int {
    Self.fixedHeaderLength + 4 * csrcs.count + (headerExtension?.serializedLength ?? 0)
  }
}

/// Where the parts of a parsed RTP packet lie in the buffer it was parsed from.
public struct RTPParsedPacket: Equatable, Sendable {
  /// The decoded header.
  public var header: RTPHeader
  /// Octets of header, CSRCs and extension: the payload starts here.
  public var headerLength: Int
  /// Offsets of the payload in the parsed buffer (padding excluded).
  public var payloadRange: Range<Int>
  /// Octets of padding at the end (0 when P=0), including the count octet (RFC 3550 §5.1).
  public var paddingSize: Int
}

extension RTPHeader {
  /// Parses the RTP packet in `bytes` without copying the payload.
  ///
  /// Checks the version, the CSRC list, the extension length and the padding count against the
  /// buffer length. Throws `RTPParseError` for anything that does not fit.
  public static func parse(_ bytes: UnsafeRawBufferPointer) throws -> RTPParsedPacket {
    var reader = ByteReader(bytes)
    guard let first = reader.readUInt8(), let second = reader.readUInt8(),
      let sequenceNumber = reader.readUInt16(), let timestamp = reader.readUInt32(),
      let ssrc = reader.readUInt32()
    else { throw RTPParseError.truncatedFixedHeader(available: bytes.count) }
    let version = first >> 6
    guard version == Self.version else { throw RTPParseError.invalidVersion(version) }
    let hasPadding = first & 0x20 != 0
    let hasExtension = first & 0x10 != 0
    let csrcCount = Int(first & 0x0F)

    var csrcs: [UInt32] = []
    if csrcCount > 0 {
      guard reader.remaining >= 4 * csrcCount else {
        throw RTPParseError.truncatedCSRCList(csrcCount: csrcCount, available: reader.remaining)
      }
      csrcs.reserveCapacity(csrcCount)
      for _ in 0..<csrcCount { csrcs.append(reader.readUInt32() ?? 0) }
    }

    var extensionStorage = ExtensionStorage.none
    if hasExtension {
      let available = reader.remaining
      guard let profile = reader.readUInt16(), let words = reader.readUInt16() else {
        throw RTPParseError.truncatedExtensionHeader(available: available)
      }
      let length = Int(words) * 4
      guard reader.remaining >= length else {
        throw RTPParseError.truncatedExtensionData(declared: length, available: reader.remaining)
      }
      let data = UnsafeRawBufferPointer(rebasing: bytes[reader.offset..<reader.offset + length])
      var extensionReader = ByteReader(data)
      if let wire = RTPWireHeaderExtension(profile: profile, data: data) {
        // Checked now (same errors as decoding), decoded only if someone asks.
        try RTPHeaderExtension.walkElements(profile: profile, reader: &extensionReader) { _, _, _ in
          false
        }
        extensionStorage = .wire(wire)
      } else {
        extensionStorage = .decoded(
          try RTPHeaderExtension.parse(profile: profile, reader: &extensionReader))
      }
      _ = reader.skip(length)
    }

    let headerLength = reader.offset
    var paddingSize = 0
    if hasPadding {
      let count = Int(bytes[bytes.count - 1])
      let available = bytes.count - headerLength
      guard count >= 1, count <= available else {
        throw RTPParseError.invalidPadding(count: count, available: available)
      }
      paddingSize = count
    }
    // The lists move into the header (no copy of them per packet).
    let header = RTPHeader(
      marker: second & 0x80 != 0, payloadType: second & 0x7F, sequenceNumber: sequenceNumber,
      timestamp: timestamp, ssrc: ssrc, csrcs: consume csrcs,
      extensionStorage: consume extensionStorage)
    return RTPParsedPacket(
      header: header, headerLength: headerLength,
      payloadRange: headerLength..<(bytes.count - paddingSize), paddingSize: paddingSize)
  }

  /// Writes this header at the start of `buffer` and returns the octets written.
  ///
  /// Allocates nothing: the caller owns the buffer, so a sender can reuse one buffer per packet.
  /// `padding` sets the P bit (the caller appends the padding after the payload).
  /// Throws `RTPWriteError.bufferTooSmall` when `buffer` is shorter than `serializedLength`,
  /// or another `RTPWriteError` for a CSRC list or extension that cannot be encoded.
  public func write(to buffer: UnsafeMutableRawBufferPointer, padding: Bool = false)
    throws(RTPWriteError) -> Int
  {
    guard csrcs.count <= 15 else { throw .tooManyCSRCs(csrcs.count) }
    // Read once: a parsed header decodes its extension on each read.
    let headerExtension = self.headerExtension
    try headerExtension?.validate()
    let needed =
      Self.fixedHeaderLength + 4 * csrcs.count + (headerExtension?.serializedLength ?? 0)
    guard buffer.count >= needed else {
      throw .bufferTooSmall(needed: needed, available: buffer.count)
    }
    var first = Self.version << 6 | UInt8(csrcs.count)
    if padding { first |= 0x20 }
    if headerExtension != nil { first |= 0x10 }
    buffer[0] = first
    buffer[1] = (marker ? 0x80 : 0) | (payloadType & 0x7F)
    buffer.storeBytes(of: sequenceNumber.bigEndian, toByteOffset: 2, as: UInt16.self)
    buffer.storeBytes(of: timestamp.bigEndian, toByteOffset: 4, as: UInt32.self)
    buffer.storeBytes(of: ssrc.bigEndian, toByteOffset: 8, as: UInt32.self)
    var offset = Self.fixedHeaderLength
    for csrc in csrcs {
      buffer.storeBytes(of: csrc.bigEndian, toByteOffset: offset, as: UInt32.self)
      offset += 4
    }
    if let headerExtension {
      offset += headerExtension.write(to: buffer, at: offset)
    }
    return offset
  }
}

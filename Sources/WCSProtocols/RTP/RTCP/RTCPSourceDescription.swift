/// One SDES item: type and value (RFC 3550 §6.5).
public struct RTCPSourceDescriptionItem: Equatable, Sendable {
  /// CNAME: canonical end-point identifier.
  public static let cname: UInt8 = 1
  /// NAME: user name.
  public static let name: UInt8 = 2
  /// EMAIL.
  public static let email: UInt8 = 3
  /// PHONE.
  public static let phone: UInt8 = 4
  /// LOC: geographic location.
  public static let location: UInt8 = 5
  /// TOOL: application or tool name.
  public static let tool: UInt8 = 6
  /// NOTE: notice or status.
  public static let note: UInt8 = 7
  /// PRIV: private extension (prefix length, prefix, value inside `value`).
  public static let privateExtension: UInt8 = 8

  /// Item type, 1...255 (0 ends the item list and is never an item).
  public var type: UInt8
  /// The item text, 0...255 octets (UTF-8 for the text items).
  public var value: [UInt8]

  /// Creates an item of `type` with raw octets.
  public init(type: UInt8, value: [UInt8]) {
    self.type = type
    self.value = value
  }

  /// Creates an item of `type` whose value is the UTF-8 of `text`.
  public init(type: UInt8, text: String) {
    self.init(type: type, value: Array(text.utf8))
  }

  /// The value decoded as UTF-8 (invalid sequences repaired).
  public var text: String { String(decoding: value, as: UTF8.self) }
}

/// One SDES chunk: an SSRC/CSRC and its items (RFC 3550 §6.5).
public struct RTCPSourceDescriptionChunk: Equatable, Sendable {
  /// The source described.
  public var ssrc: UInt32
  /// Its items, in packet order.
  public var items: [RTCPSourceDescriptionItem]

  /// Creates a chunk.
  public init(ssrc: UInt32, items: [RTCPSourceDescriptionItem]) {
    self.ssrc = ssrc
    self.items = items
  }

  /// The CNAME item's text, if present.
  public var cname: String? {
    items.first { $0.type == RTCPSourceDescriptionItem.cname }?.text
  }
}

/// Source description, packet type 202 (RFC 3550 §6.5).
public struct RTCPSourceDescription: Equatable, Sendable {
  /// Chunks, at most 31.
  public var chunks: [RTCPSourceDescriptionChunk]

  /// Creates an SDES packet.
  public init(chunks: [RTCPSourceDescriptionChunk]) {
    self.chunks = chunks
  }

  static func parse(count: UInt8, body: inout ByteReader) throws -> RTCPSourceDescription {
    var chunks: [RTCPSourceDescriptionChunk] = []
    let bodyStart = body.offset
    for _ in 0..<count {
      guard let ssrc = body.readUInt32() else { throw RTCPParseError.sdesSourceTruncated }
      var items: [RTCPSourceDescriptionItem] = []
      while true {
        guard let type = body.readUInt8() else { throw RTCPParseError.sdesItemTruncated }
        if type == 0 {
          // The null item is followed by zero octets up to the next 32-bit boundary.
          let misalignment = (body.offset - bodyStart) % 4
          if misalignment != 0 { _ = body.skip(min(4 - misalignment, body.remaining)) }
          break
        }
        guard let length = body.readUInt8(), let value = body.readBytes(Int(length)) else {
          throw RTCPParseError.sdesItemTruncated
        }
        items.append(RTCPSourceDescriptionItem(type: type, value: value))
      }
      chunks.append(RTCPSourceDescriptionChunk(ssrc: ssrc, items: items))
    }
    return RTCPSourceDescription(chunks: chunks)
  }

  func append(to bytes: inout [UInt8]) throws(RTCPWriteError) {
    guard chunks.count <= 31 else {
      throw .tooManyItems(packetType: RTCPPacketType.sourceDescription, count: chunks.count)
    }
    for chunk in chunks {
      for item in chunk.items where item.type == 0 || item.value.count > 255 {
        throw .invalidField("SDES item type \(item.type) with \(item.value.count) octets")
      }
    }
    try bytes.appendRTCPPacket(
      packetType: RTCPPacketType.sourceDescription, count: UInt8(chunks.count)
    ) { bytes throws(RTCPWriteError) in
      for chunk in chunks {
        let chunkStart = bytes.count
        bytes.appendUInt32(chunk.ssrc)
        for item in chunk.items {
          bytes.append(item.type)
          bytes.append(UInt8(item.value.count))
          bytes.append(contentsOf: item.value)
        }
        // At least one null octet ends the list, then pad the chunk to 32 bits.
        bytes.append(0)
        while (bytes.count - chunkStart) % 4 != 0 { bytes.append(0) }
      }
    }
  }
}

import TestSupport
import XCTest

@testable import WCSEngine
@testable import WCSMedia
@testable import WCSProtocols

/// A parsed header keeps an extension of up to 16 data octets as its wire octets
/// (`RTPWireHeaderExtension`) instead of decoding it: these tests hold it to the decoder it
/// replaced on the receive path (kept here as the reference), on seeded random extensions.
final class RTPWireHeaderExtensionTests: XCTestCase {
  /// The decoder before the wire form, element by element (RFC 8285 §4.2, §4.3).
  private static func referenceDecode(profile: UInt16, data: [UInt8]) throws -> RTPHeaderExtension {
    var offset = 0
    func byte() -> UInt8? {
      guard offset < data.count else { return nil }
      defer { offset += 1 }
      return data[offset]
    }
    func bytes(_ count: Int) -> [UInt8]? {
      guard count >= 0, data.count - offset >= count else { return nil }
      defer { offset += count }
      return Array(data[offset..<offset + count])
    }
    if profile == 0xBEDE {
      var elements: [RTPHeaderExtensionElement] = []
      while let first = byte() {
        if first == 0 { continue }
        let id = first >> 4
        if id == 15 { break }
        let length = Int(first & 0x0F) + 1
        guard let value = bytes(length) else {
          throw RTPParseError.truncatedExtensionElement(
            id: id, declared: length, available: data.count - offset)
        }
        elements.append(RTPHeaderExtensionElement(id: id, value: value))
      }
      return .oneByte(elements)
    }
    if profile & 0xFFF0 == 0x1000 {
      var elements: [RTPHeaderExtensionElement] = []
      while let id = byte() {
        if id == 0 { continue }
        guard let length = byte() else {
          throw RTPParseError.truncatedExtensionElement(id: id, declared: 1, available: 0)
        }
        guard let value = bytes(Int(length)) else {
          throw RTPParseError.truncatedExtensionElement(
            id: id, declared: Int(length), available: data.count - offset)
        }
        elements.append(RTPHeaderExtensionElement(id: id, value: value))
      }
      return .twoByte(appBits: UInt8(profile & 0x0F), elements)
    }
    return .generic(profile: profile, data: data)
  }

  /// The transport-wide sequence number lookup before the wire form.
  private static func referenceSequenceNumber(in headerExtension: RTPHeaderExtension?, id: UInt8)
    -> UInt16?
  {
    guard let element = headerExtension?.elements.first(where: { $0.id == id }),
      element.value.count == 2
    else { return nil }
    return UInt16(element.value[0]) << 8 | UInt16(element.value[1])
  }

  /// Extension data of `words` 32-bit words: well-formed elements mostly (with padding octets
  /// and an id-15 stop now and then), random octets sometimes.
  private static func randomData(
    profile: UInt16, words: Int, using generator: inout SplitMix64
  ) -> [UInt8] {
    let length = words * 4
    if Int.random(in: 0..<5, using: &generator) == 0 {
      return (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }
    var data: [UInt8] = []
    while data.count < length {
      switch Int.random(in: 0..<10, using: &generator) {
      case 0: data.append(0)
      case 1 where profile == 0xBEDE:
        data.append(0xF0 | UInt8.random(in: 0...15, using: &generator))
      default:
        let valueLength = Int.random(in: 0...(profile == 0xBEDE ? 15 : 4), using: &generator)
        let id = UInt8.random(in: 1...14, using: &generator)
        if profile == 0xBEDE {
          data.append(id << 4 | UInt8(valueLength))
          data += (0...valueLength).map { _ in UInt8.random(in: 0...255, using: &generator) }
        } else {
          data += [id, UInt8(valueLength)]
          data += (0..<valueLength).map { _ in UInt8.random(in: 0...255, using: &generator) }
        }
      }
    }
    return Array(data.prefix(length))
  }

  private static func packet(profile: UInt16, data: [UInt8], sequenceNumber: UInt16) -> [UInt8] {
    var bytes: [UInt8] = [0x90, 96]
    bytes.appendUInt16(sequenceNumber)
    bytes.appendUInt32(0x1234_5678)
    bytes.appendUInt32(0xCAFE_BABE)
    bytes.appendUInt16(profile)
    bytes.appendUInt16(UInt16(data.count / 4))
    return bytes + data + [1, 2, 3]
  }

  private static func serialized(_ header: RTPHeader) -> Result<[UInt8], RTPWriteError> {
    do { return .success(try RTPPacket(header: header, payload: [1]).serialized()) } catch {
      return .failure(error)
    }
  }

  func testParsedExtensionsMatchTheReferenceDecoder() throws {
    var generator = SplitMix64(seed: 0x5EED_7E57)
    var wire = 0
    var failures = 0
    for round in 0..<20_000 {
      let profile: UInt16 =
        [0xBEDE, 0x1000, 0x100A, 0xABCD][Int.random(in: 0..<4, using: &generator)]
      let words = Int.random(in: 0...6, using: &generator)
      let data = Self.randomData(profile: profile, words: words, using: &generator)
      let bytes = Self.packet(profile: profile, data: data, sequenceNumber: UInt16(round & 0xFFFF))
      let expected = Result { try Self.referenceDecode(profile: profile, data: data) }
      let parsed = Result { try RTPPacket.parse(bytes) }
      switch (expected, parsed) {
      case (.failure(let expectedError), .failure(let error)):
        XCTAssertEqual(error as? RTPParseError, expectedError as? RTPParseError, "\(bytes)")
        failures += 1
      case (.success(let headerExtension), .success(let packet)):
        if case .wire = packet.header.extensionStorage { wire += 1 }
        XCTAssertEqual(packet.header.headerExtension, headerExtension, "\(bytes)")
        XCTAssertEqual(packet.payload, [1, 2, 3])
        let decoded = RTPHeader(
          payloadType: 96, sequenceNumber: UInt16(round & 0xFFFF), timestamp: 0x1234_5678,
          ssrc: 0xCAFE_BABE, headerExtension: headerExtension)
        XCTAssertEqual(packet.header, decoded)
        XCTAssertEqual(decoded, packet.header)
        for id in UInt8(0)...15 {
          XCTAssertEqual(
            TransportWideCC.sequenceNumber(in: packet.header, id: id),
            Self.referenceSequenceNumber(in: headerExtension, id: id), "id \(id) in \(bytes)")
        }
        // Written back the same as the decoded header would be (or refused the same way).
        XCTAssertEqual(packet.header.serializedLength, decoded.serializedLength)
        XCTAssertEqual(Self.serialized(packet.header), Self.serialized(decoded))
      default:
        XCTFail("reference \(expected), parsed \(parsed) for \(bytes)")
      }
    }
    // Both forms and the errors were exercised.
    XCTAssertGreaterThan(wire, 5_000)
    XCTAssertGreaterThan(failures, 500)
  }

  func testTransportSequenceNumberReadInPlace() throws {
    // One-byte form: padding, an element 5 (3 octets), element 3 = 0xABCD.
    let bytes = Self.packet(
      profile: 0xBEDE, data: [0x00, 0x52, 1, 2, 3, 0x31, 0xAB, 0xCD], sequenceNumber: 7)
    let header = try RTPPacket.parse(bytes).header
    guard case .wire = header.extensionStorage else { return XCTFail("not held as wire octets") }
    XCTAssertEqual(TransportWideCC.sequenceNumber(in: header, id: 3), 0xABCD)
    XCTAssertNil(TransportWideCC.sequenceNumber(in: header, id: 5))  // 3 octets, not 2
    XCTAssertNil(TransportWideCC.sequenceNumber(in: header, id: 4))
    XCTAssertEqual(
      header.headerExtension,
      .oneByte([
        RTPHeaderExtensionElement(id: 5, value: [1, 2, 3]),
        RTPHeaderExtensionElement(id: 3, value: [0xAB, 0xCD]),
      ]))
    // A header given a new extension holds that one.
    var changed = header
    changed.headerExtension = .generic(profile: 0x1234, data: [9, 9, 9, 9])
    XCTAssertEqual(changed.headerExtension, .generic(profile: 0x1234, data: [9, 9, 9, 9]))
    XCTAssertNil(TransportWideCC.sequenceNumber(in: changed, id: 3))
    changed.headerExtension = nil
    XCTAssertNil(changed.headerExtension)
  }

  func testLongExtensionIsDecodedAtOnce() throws {
    // 20 data octets: beyond the inline capacity, decoded when parsed.
    let data: [UInt8] = [0x33, 1, 2, 3, 4] + [UInt8](repeating: 0, count: 15)
    let header = try RTPPacket.parse(Self.packet(profile: 0xBEDE, data: data, sequenceNumber: 1))
      .header
    guard case .decoded = header.extensionStorage else { return XCTFail("held as wire octets") }
    XCTAssertEqual(
      header.headerExtension, .oneByte([RTPHeaderExtensionElement(id: 3, value: [1, 2, 3, 4])]))
  }
}

import XCTest

@testable import WCSMedia
@testable import WCSProtocols

final class VP8PayloadDescriptorTests: XCTestCase {
  func testSerializesFifteenBitPictureIDAsRFC7741Describes() {
    let descriptor = VP8PayloadDescriptor(
      startOfPartition: true, partitionIndex: 0, pictureID: 0x1234, pictureIDIs15Bit: true)
    // X=1 S=1 | I=1 | M=1 + high 7 bits | low 8 bits.
    XCTAssertEqual(descriptor.serialized(), [0x90, 0x80, 0x92, 0x34])
    XCTAssertEqual(descriptor.encodedLength, 4)
    let plain = VP8PayloadDescriptor(startOfPartition: false, partitionIndex: 3)
    XCTAssertEqual(plain.serialized(), [0x03])
  }

  func testParsesEveryField() throws {
    // X N S PID=1 | I L T K | M=0 PictureID 0x55 | TL0PICIDX 0xAB | TID=2 Y=1 KEYIDX=0x11
    let bytes: [UInt8] = [0xB1, 0xF0, 0x55, 0xAB, 0xB1, 0xEE]
    let (descriptor, length) = try VP8PayloadDescriptor.parse(bytes)
    XCTAssertEqual(length, 5)
    XCTAssertTrue(descriptor.isNonReference)
    XCTAssertTrue(descriptor.startOfPartition)
    XCTAssertEqual(descriptor.partitionIndex, 1)
    XCTAssertEqual(descriptor.pictureID, 0x55)
    XCTAssertFalse(descriptor.pictureIDIs15Bit)
    XCTAssertEqual(descriptor.pictureIDModulus, 128)
    XCTAssertEqual(descriptor.tl0PictureIndex, 0xAB)
    XCTAssertEqual(descriptor.temporalLayerIndex, 2)
    XCTAssertTrue(descriptor.layerSync)
    XCTAssertEqual(descriptor.keyIndex, 0x11)
    XCTAssertEqual(descriptor.serialized(), Array(bytes.prefix(5)))
  }

  func testEveryTruncationIsATypedError() {
    let full: [UInt8] = [0x90, 0xF0, 0x81, 0x02, 0x07, 0x40]
    for length in 0..<full.count {
      XCTAssertThrowsError(try VP8PayloadDescriptor.parse(Array(full.prefix(length)))) { error in
        guard case .truncatedDescriptor = error as? VP8PayloadError else {
          return XCTFail("\(error)")
        }
      }
    }
    XCTAssertEqual(try VP8PayloadDescriptor.parse(full).length, 6)
  }

  func testNamedTruncations() {
    func reason(_ bytes: [UInt8]) -> VP8PayloadError? {
      do {
        _ = try VP8PayloadDescriptor.parse(bytes)
        return nil
      } catch { return error }
    }
    XCTAssertEqual(reason([0x90]), .truncatedDescriptor(field: "X"))
    XCTAssertEqual(reason([0x90, 0x80]), .truncatedDescriptor(field: "PictureID"))
    XCTAssertEqual(reason([0x90, 0x80, 0x81]), .truncatedDescriptor(field: "PictureID low byte"))
    XCTAssertEqual(reason([0x90, 0x40]), .truncatedDescriptor(field: "TL0PICIDX"))
    XCTAssertEqual(reason([0x90, 0x10]), .truncatedDescriptor(field: "TID/KEYIDX"))
    XCTAssertEqual(reason([]), .truncatedDescriptor(field: "required"))
  }

  func testDepacketizerChecksPayloadHeader() {
    XCTAssertThrowsError(try VP8Depacketizer.parse([0x90, 0x80, 0x80, 0x01])) {
      XCTAssertEqual($0 as? VP8PayloadError, .emptyPayload)
    }
    // First packet of a frame with only 2 bytes of VP8 data.
    XCTAssertThrowsError(try VP8Depacketizer.parse([0x10, 0x01, 0x02])) {
      XCTAssertEqual($0 as? VP8PayloadError, .badPayloadHeader)
    }
    // Key frame (P=0) without the start code.
    XCTAssertThrowsError(try VP8Depacketizer.parse([0x10, 0x00, 0, 0, 1, 2, 3, 0, 0, 0, 0])) {
      XCTAssertEqual($0 as? VP8PayloadError, .badPayloadHeader)
    }
    // A continuation packet may carry any bytes.
    XCTAssertEqual(try VP8Depacketizer.parse([0x00, 0x42]).data, [0x42])
    let key: [UInt8] = [0x10, 0x50, 0x42, 0x00, 0x9D, 0x01, 0x2A, 0x80, 0x02, 0xE0, 0x01]
    XCTAssertTrue(try VP8Depacketizer.parse(key).startsKeyFrame)
  }
}

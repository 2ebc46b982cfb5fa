import XCTest

@testable import WCSCodecs
@testable import WCSProtocols

/// A NAL unit holding a start code would split in the Annex B stream the decoder reads, into
/// units the assembler never checked (found by `scripts/fuzz.sh h264`: an SPS whose picture
/// size was never held against the limit).
final class H264StartCodeTests: XCTestCase {
  private func deliver(
    extra: [UInt8]?, sps: ((inout [UInt8]) -> Void)? = nil
  ) throws -> H264AccessUnitAssembler.Output {
    let encoder = try H264Encoder(configuration: .init(width: 160, height: 120, bitrateKbps: 200))
    let frame = try XCTUnwrap(
      try encoder.encode(I420Image(width: 160, height: 120, y: 90), timestamp: 0).first)
    var units = H264AnnexB.nalUnits(frame.data).map { Array($0) }
    XCTAssertEqual(units.last.map { H264NALUnitType.of($0[0]) }, H264NALUnitType.idrSlice)
    if let extra { units.insert(extra, at: units.count - 1) }
    if let sps, let index = units.firstIndex(where: { H264NALUnitType.of($0[0]) == 7 }) {
      sps(&units[index])
    }
    var assembler = H264AccessUnitAssembler()
    var output = H264AccessUnitAssembler.Output()
    for (index, unit) in units.enumerated() {
      output = assembler.insert(
        .init(
          sequenceNumber: UInt16(index), timestamp: 0, marker: index == units.count - 1,
          payload: unit))
    }
    return output
  }

  func testAnSEIHidingAnSPSAfterAStartCodeDropsTheAccessUnit() throws {
    let output = try deliver(extra: [0x06, 0x05, 0x00, 0x00, 0x01, 0x67, 0x42, 0x80, 0x1F, 0x80])
    XCTAssertEqual(output.dropped, .startCodeInNALUnit)
    XCTAssertTrue(output.accessUnits.isEmpty)
  }

  func testAnEscapedSEIIsKept() throws {
    let output = try deliver(
      extra: [0x06, 0x05, 0x00, 0x00, 0x03, 0x01, 0x67, 0x42, 0x80, 0x1F, 0x80])
    XCTAssertNil(output.dropped)
    XCTAssertEqual(output.accessUnits.count, 1)
  }

  func testOnlyAStartCodeInsideAUnitSplitsIt() {
    XCTAssertTrue(H264AccessUnitAssembler.holdsStartCode([0x06, 0, 0, 1, 5]))
    XCTAssertTrue(H264AccessUnitAssembler.holdsStartCode([0x06, 0, 0, 0, 1, 0x67]))
    XCTAssertFalse(H264AccessUnitAssembler.holdsStartCode([0x06, 0, 0, 2, 5]))
    XCTAssertFalse(H264AccessUnitAssembler.holdsStartCode([0x65, 5, 0, 0]), "cabac_zero_words")
    XCTAssertFalse(H264AccessUnitAssembler.holdsStartCode([0x06, 0, 0, 3, 1, 5]))
  }

  /// Found by `scripts/fuzz.sh h264` (`crash-sps-unreadable-in-access-unit`): an SPS whose
  /// last fields were read from its trailing zero bytes was checked that way, while the decoder
  /// reads the unit without them (H.264 §B.2) and finds it cut short.
  func testAnSPSThatParsesOnlyWithItsTrailingZerosDropsTheAccessUnit() throws {
    let output = try deliver(extra: nil) {
      $0 = [0x67, 0x42, 0xC0, 0x0B, 0x8C, 0x8D, 0x41, 0xAD, 0, 0, 0, 0, 0, 0, 0]
    }
    XCTAssertEqual(output.dropped, .pictureTooLarge)
    XCTAssertTrue(output.accessUnits.isEmpty)
  }

  func testTrailingZerosOfAUnitAreNotWrittenIntoTheStream() throws {
    let plain = try XCTUnwrap(try deliver(extra: nil).accessUnits.first)
    let padded = try XCTUnwrap(try deliver(extra: nil) { $0 += [0, 0, 0] }.accessUnits.first)
    XCTAssertEqual(padded.data, plain.data)
  }
}

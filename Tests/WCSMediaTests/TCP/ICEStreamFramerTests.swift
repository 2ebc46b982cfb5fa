import XCTest

@testable import WCSProtocols

final class ICEStreamFramerTests: XCTestCase {
  /// A STUN Binding request as the ICE agent sends it, fingerprinted.
  private var bindingRequest: [UInt8] {
    get throws {
      try STUNMessage(
        type: STUNMessageType(method: .binding, messageClass: .request),
        transactionID: STUNTransactionID(high: 0x0102_0304, low: 0x0506_0708_090A_0B0C),
        attributes: [.username("evtj:h6vY"), .priority(0x6E00_01FF)]
      ).encode(fingerprint: true)
    }
  }

  /// `stream` given to `framer` in pieces of `split` bytes; the frames it returned.
  private static func feed(_ stream: [UInt8], in split: Int, to framer: inout ICEStreamFramer)
    throws -> [[UInt8]]
  {
    var output: [[UInt8]] = []
    var index = 0
    while index < stream.count {
      let end = min(index + split, stream.count)
      output += try framer.receive(stream[index..<end])
      index = end
    }
    return output
  }

  func testRFC4571FramesComeOutWholeWhateverTheSplit() throws {
    let datagrams: [[UInt8]] = [[1], [UInt8](repeating: 0xAB, count: 1200), [0x80, 0x60, 1, 2]]
    let stream = try datagrams.flatMap { try ICEStreamFramer.frame($0, framing: .rfc4571) }
    XCTAssertEqual(Array(stream[0..<3]), [0x00, 0x01, 0x01])
    XCTAssertEqual(Array(stream[3..<5]), [0x04, 0xB0])
    for split in [1, 2, 3, 7, 500, stream.count] {
      var framer = ICEStreamFramer(framing: .rfc4571)
      XCTAssertEqual(try Self.feed(stream, in: split, to: &framer), datagrams, "split \(split)")
      XCTAssertEqual(framer.bufferedBytes, 0)
      XCTAssertNoThrow(try framer.finish())
    }
  }

  func testRFC4571RejectsZeroAndOversizeLengthsAndFailsForGood() {
    var framer = ICEStreamFramer(framing: .rfc4571)
    XCTAssertThrowsError(try framer.receive([0x00, 0x00, 0x01])) {
      XCTAssertEqual($0 as? ICEStreamFramingError, .emptyFrame)
    }
    XCTAssertTrue(framer.hasFailed)
    XCTAssertThrowsError(try framer.receive([0x00, 0x01, 0x01])) {
      XCTAssertEqual($0 as? ICEStreamFramingError, .failed)
    }
    var large = ICEStreamFramer(framing: .rfc4571)
    // 65535 announced: refused from the header alone, nothing buffered for it.
    XCTAssertThrowsError(try large.receive([0xFF, 0xFF, 0x00])) {
      XCTAssertEqual($0 as? ICEStreamFramingError, .frameTooLarge(length: 65535, limit: 4096))
    }
    XCTAssertEqual(large.bufferedBytes, 0)
    XCTAssertThrowsError(try ICEStreamFramer.frame([], framing: .rfc4571))
  }

  func testHalfAFrameThenCloseIsTruncatedAndLosesTheFramesBefore() throws {
    var framer = ICEStreamFramer(framing: .rfc4571)
    let whole = try framer.receive([0x00, 0x02, 0xAA, 0xBB, 0x00, 0x10, 0x01, 0x02])
    XCTAssertEqual(whole, [[0xAA, 0xBB]])
    XCTAssertEqual(framer.bufferedBytes, 4)
    XCTAssertThrowsError(try framer.finish()) {
      XCTAssertEqual($0 as? ICEStreamFramingError, .truncated(buffered: 4))
    }
    XCTAssertEqual(framer.bufferedBytes, 0)
    XCTAssertEqual(framer.frames, 1)
  }

  func testTURNStreamSplitsSTUNAndPaddedChannelData() throws {
    let stun = try bindingRequest
    XCTAssertEqual(stun.count % 4, 0)
    // Channel 0x4001 carrying 5 bytes: 4 header + 5 data + 3 padding on the stream.
    let channelData: [UInt8] = [0x40, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5]
    let framed = try ICEStreamFramer.frame(channelData, framing: .turn)
    XCTAssertEqual(framed, channelData + [0, 0, 0])
    XCTAssertEqual(try ICEStreamFramer.frame(stun, framing: .turn), stun)
    let stream = stun + framed + stun + [0x40, 0x02, 0x00, 0x04, 9, 8, 7, 6]
    for split in [1, 3, 20, 21, stream.count] {
      var framer = ICEStreamFramer(framing: .turn)
      XCTAssertEqual(
        try Self.feed(stream, in: split, to: &framer),
        [stun, channelData, stun, [0x40, 0x02, 0x00, 0x04, 9, 8, 7, 6]], "split \(split)")
      XCTAssertNoThrow(try framer.finish())
    }
  }

  func testTURNStreamRejectsBadHeaders() {
    let cases: [([UInt8], ICEStreamFramingError)] = [
      ([0x80, 0x00, 0x00, 0x04], .unknownMessage(firstByte: 0x80)),
      ([0x50, 0x00, 0x00, 0x04], .unknownMessage(firstByte: 0x50)),
      ([0x40, 0x00, 0x00, 0x00], .emptyFrame),
      ([0x40, 0x00, 0xFF, 0xFF], .frameTooLarge(length: 65539, limit: 4096)),
      ([0x00, 0x01, 0x00, 0x06], .misalignedSTUNLength(6)),
      ([0x00, 0x01, 0xFF, 0xFC], .frameTooLarge(length: 65552, limit: 4096)),
    ]
    for (bytes, expected) in cases {
      var framer = ICEStreamFramer(framing: .turn)
      XCTAssertThrowsError(try framer.receive(bytes), "\(bytes)") {
        XCTAssertEqual($0 as? ICEStreamFramingError, expected)
      }
    }
  }
}

import XCTest

@testable import WCSMedia
@testable import WCSProtocols

final class RFC7983DemultiplexerTests: XCTestCase {
  private func protocolName(_ value: DemultiplexedProtocol) -> String {
    switch value {
    case .stun: return "STUN"
    case .zrtp: return "ZRTP"
    case .dtls: return "DTLS"
    case .turnChannel: return "TURN ChannelData"
    case .rtp: return "RTP/RTCP"
    case .rtcp: return "RTCP"
    case .drop: return "drop"
    }
  }

  func testFirstByteRangesFromVectorFile() throws {
    let vector = try Corpus.json("vectors/demux-rfc7983.json")
    let ranges = try XCTUnwrap(vector["first_byte_ranges"]?.array)
    var covered = Set<Int>()
    for range in ranges {
      let bounds = try XCTUnwrap(range["range"]?.array?.compactMap(\.int))
      let expected = try XCTUnwrap(range["protocol"]?.string)
      for byte in bounds[0]...bounds[1] {
        covered.insert(byte)
        let name = protocolName(RFC7983Demultiplexer.protocolRange(firstByte: UInt8(byte)))
        XCTAssertTrue(expected.hasPrefix(name), "byte \(byte): \(name) vs \(expected)")
      }
    }
    XCTAssertEqual(covered.count, 256)
  }

  func testSamplesFromVectorFile() throws {
    let vector = try Corpus.json("vectors/demux-rfc7983.json")
    let samples = try XCTUnwrap(vector["samples"]?.array)
    XCTAssertEqual(samples.count, 12)
    for sample in samples {
      let bytes = Hex.bytes(try XCTUnwrap(sample["first_byte_hex"]?.string))
      let expected = try XCTUnwrap(sample["expect"]?.string)
      if bytes.count == 1 {
        let name = protocolName(RFC7983Demultiplexer.protocolRange(firstByte: bytes[0]))
        XCTAssertTrue(expected.hasPrefix(name), "\(bytes): \(name) vs \(expected)")
      } else {
        let kind = RFC7983Demultiplexer.classify(bytes)
        XCTAssertTrue(
          expected.hasPrefix(kind == .rtcp ? "RTCP" : "RTP,"), "\(bytes): \(kind) vs \(expected)")
      }
    }
  }

  func testRTPVersusRTCPBySecondByte() {
    XCTAssertEqual(RFC7983Demultiplexer.classify([0x81, 0xC8, 0, 6]), .rtcp)  // SR
    XCTAssertEqual(RFC7983Demultiplexer.classify([0x81, 0xCD]), .rtcp)  // RTPFB
    XCTAssertEqual(RFC7983Demultiplexer.classify([0x80, 0xC0]), .rtcp)  // 192
    XCTAssertEqual(RFC7983Demultiplexer.classify([0x80, 0xDF]), .rtcp)  // 223
    XCTAssertEqual(RFC7983Demultiplexer.classify([0x80, 0xE0]), .rtp)  // M=1 PT=96
    XCTAssertEqual(RFC7983Demultiplexer.classify([0x90, 0x6F]), .rtp)  // PT=111
    XCTAssertEqual(RFC7983Demultiplexer.classify([0x80, 0xBF]), .rtp)  // M=1 PT=63
    XCTAssertEqual(RFC7983Demultiplexer.classify([0x80]), .drop)
    XCTAssertEqual(RFC7983Demultiplexer.classify([]), .drop)
    XCTAssertEqual(
      RFC7983Demultiplexer.classify([0x00, 0x01, 0, 0, 0x21, 0x12, 0xA4, 0x42]), .stun)
    XCTAssertEqual(RFC7983Demultiplexer.classify([0x16, 0xFE, 0xFD]), .dtls)
    XCTAssertEqual(RFC7983Demultiplexer.classify([0x40, 0x00, 0, 4]), .turnChannel)
    XCTAssertEqual(RFC7983Demultiplexer.classify([0x10]), .zrtp)
    XCTAssertEqual(RFC7983Demultiplexer.classify([0xC0, 0x00]), .drop)
  }
}

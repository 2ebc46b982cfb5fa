import XCTest

@testable import WCSMedia
@testable import WCSProtocols

final class SDPWriterFormatParameterTests: XCTestCase {
  func testFmtpWithoutParametersIsNeverWritten() throws {
    let text =
      "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"
      + "m=video 9 UDP/TLS/RTP/SAVPF 96 97\r\nc=IN IP4 0.0.0.0\r\n"
      + "a=rtpmap:96 VP8/90000\r\na=fmtp:96 \r\n"
      + "a=rtpmap:97 rtx/90000\r\na=fmtp:97 apt=96\r\n"
    var sdp = try SDPParser.parse(text).description
    // An offer builder or munging may also leave an fmtp with nothing in it.
    sdp.media[0].attributes.append(.fmtp(FormatParameters(payloadType: 96, parameters: [])))
    let written = SDPWriter.write(sdp)
    XCTAssertFalse(written.contains("a=fmtp:96"), written)
    XCTAssertTrue(written.contains("a=rtpmap:96 VP8/90000\r\na=rtpmap:97 rtx/90000\r\n"), written)
    XCTAssertTrue(written.contains("a=fmtp:97 apt=96\r\n"), written)
    XCTAssertEqual(
      SDPWriter.line(for: .fmtp(FormatParameters(payloadType: 96, parameters: []))), "a=fmtp:96")
  }
}

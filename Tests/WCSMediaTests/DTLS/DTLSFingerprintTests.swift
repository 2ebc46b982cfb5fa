import Foundation
import TestSupport
import XCTest

@testable import WCSMedia
@testable import WCSProtocols

final class DTLSFingerprintTests: XCTestCase {
  /// A real Chrome offer's attribute (aiortc test corpus, `aiortc-chrome-audio-offer.sdp` style).
  let chromeValue =
    "sha-256 19:E2:1C:3B:4B:9F:81:E6:B8:5C:F4:A5:A8:D8:73:04:BB:05:2F:70:9F:04:A9:0E:05:E9:26:33:E8:70:88:A2"

  func testParsesSHA256AndWritesItBackUnchanged() throws {
    let fingerprint = try DTLSFingerprint(parsing: chromeValue)
    XCTAssertEqual(fingerprint.algorithm, .sha256)
    XCTAssertEqual(fingerprint.bytes.count, 32)
    XCTAssertEqual(Array(fingerprint.bytes.prefix(3)), [0x19, 0xE2, 0x1C])
    XCTAssertEqual(fingerprint.bytes.last, 0xA2)
    XCTAssertEqual(fingerprint.sdpValue, chromeValue)
  }

  func testParsingIsCaseInsensitiveAndAcceptsTheAttributePrefix() throws {
    let expected = try DTLSFingerprint(parsing: chromeValue)
    XCTAssertEqual(try DTLSFingerprint(parsing: chromeValue.lowercased()), expected)
    XCTAssertEqual(try DTLSFingerprint(parsing: "SHA-256" + chromeValue.dropFirst(7)), expected)
    XCTAssertEqual(try DTLSFingerprint(parsing: "a=fingerprint:" + chromeValue + "\r\n"), expected)
    XCTAssertEqual(try DTLSFingerprint(parsing: "  " + chromeValue + " "), expected)
  }

  func testDigestsMatchFIPS180Vectors() throws {
    // FIPS 180-2 appendix vectors for the message "abc".
    let abc = Array("abc".utf8)
    XCTAssertEqual(
      try DTLSFingerprint(algorithm: .sha1, derCertificate: abc).sdpValue,
      "sha-1 A9:99:3E:36:47:06:81:6A:BA:3E:25:71:78:50:C2:6C:9C:D0:D8:9D")
    XCTAssertEqual(
      try DTLSFingerprint(algorithm: .sha256, derCertificate: abc).hexString,
      "BA:78:16:BF:8F:01:CF:EA:41:41:40:DE:5D:AE:22:23:B0:03:61:A3:96:17:7A:9C:B4:10:FF:61:F2:00:15:AD"
    )
    XCTAssertEqual(
      try DTLSFingerprint(algorithm: .sha384, derCertificate: abc).bytes.prefix(4),
      [0xCB, 0x00, 0x75, 0x3F])
    XCTAssertEqual(
      try DTLSFingerprint(algorithm: .sha512, derCertificate: abc).bytes.prefix(4),
      [0xDD, 0xAF, 0x35, 0xA1])
  }

  func testParsesEveryAlgorithmAtItsLength() throws {
    for algorithm in DTLSFingerprint.Algorithm.allCases {
      let bytes = (0..<algorithm.digestLength).map { UInt8($0 * 7 & 0xFF) }
      let fingerprint = try DTLSFingerprint(algorithm: algorithm, bytes: bytes)
      XCTAssertEqual(try DTLSFingerprint(parsing: fingerprint.sdpValue), fingerprint)
      XCTAssertEqual(fingerprint.hexString.count, algorithm.digestLength * 3 - 1)
    }
  }

  func testRejectsMalformedValuesWithAReason() {
    let bad = [
      "",
      "sha-256",
      "md5 AB:CD",
      "sha-256 AB:CD",
      String(chromeValue.dropLast(3)),
      chromeValue + ":00",
      chromeValue.replacingOccurrences(of: "19:E2", with: "19::E2"),
      chromeValue.replacingOccurrences(of: "19:E2", with: "1G:E2"),
      chromeValue.replacingOccurrences(of: "19:E2", with: "9:E2"),
      chromeValue.replacingOccurrences(of: "19:E2", with: "+9:E2"),
      chromeValue + " extra",
    ]
    for text in bad {
      XCTAssertThrowsError(try DTLSFingerprint(parsing: text), text) { error in
        guard case .invalidFingerprint(let reason) = error as? DTLSError else {
          return XCTFail("\(error)")
        }
        XCTAssertFalse(reason.isEmpty)
      }
    }
    XCTAssertThrowsError(try DTLSFingerprint(algorithm: .sha1, bytes: [1, 2, 3]))
  }

  func testEveryFingerprintInTheSDPCorpusParses() throws {
    guard let corpus = SharedCorpus.url("sdp"),
      let files = try? FileManager.default.contentsOfDirectory(atPath: corpus.path)
    else {
      throw XCTSkip("no ../shared/corpus/sdp")
    }
    var parsed = 0
    for file in files where file.hasSuffix(".sdp") {
      let text = try String(contentsOf: corpus.appendingPathComponent(file), encoding: .utf8)
      for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("a=fingerprint:") {
        let fingerprint = try DTLSFingerprint(parsing: String(line))
        XCTAssertEqual(fingerprint.algorithm, .sha256, file)
        XCTAssertEqual(
          fingerprint.sdpValue.uppercased(),
          line.dropFirst(14).uppercased().trimmingCharacters(in: .whitespaces))
        parsed += 1
      }
    }
    XCTAssertGreaterThan(parsed, 10)
  }
}

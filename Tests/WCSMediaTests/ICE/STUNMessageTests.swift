import Foundation
import TestSupport
import XCTest

@testable import WCSMedia
@testable import WCSProtocols

final class STUNMessageTests: XCTestCase {
  /// RFC 5769 §2.1 sample request, written in so the test stands without the corpus.
  static let sampleRequestHex =
    "000100582112a442b7e7a701bc34d686fa87dfae802200105354554e207465737420636c69656e74"
    + "002400046e0001ff80290008932ff9b151263b36000600096576746a3a68367659202020"
    + "000800149aeaa70cbfd8cb56781ef2b5b2d3f249c1b571a280280004e57a3bcf"
  static let samplePassword = "VOkJxbRl1RmTxUk/WvJxBt"

  func testMessageTypeBitsFollowRFC8489Figure3() {
    XCTAssertEqual(STUNMessageType.bindingRequest.rawValue, 0x0001)
    XCTAssertEqual(STUNMessageType.bindingSuccess.rawValue, 0x0101)
    XCTAssertEqual(STUNMessageType.bindingError.rawValue, 0x0111)
    XCTAssertEqual(STUNMessageType.bindingIndication.rawValue, 0x0011)
    XCTAssertEqual(
      STUNMessageType(method: .allocate, messageClass: .errorResponse).rawValue, 0x0113)
    XCTAssertEqual(STUNMessageType(method: .data, messageClass: .indication).rawValue, 0x0017)
    XCTAssertEqual(
      STUNMessageType(method: .channelBind, messageClass: .successResponse).rawValue, 0x0109)
    for raw in UInt16(0)...0x3FFF {
      XCTAssertEqual(STUNMessageType(rawValue: raw).rawValue, raw)
    }
  }

  func testSampleRequestDecodesAndVerifies() throws {
    let bytes = STUNTestSupport.bytes(hex: Self.sampleRequestHex)
    XCTAssertEqual(bytes.count, 108)
    let message = try STUNMessage.decode(bytes)
    XCTAssertEqual(message.type, .bindingRequest)
    XCTAssertEqual(message.transactionID.description, "b7e7a701bc34d686fa87dfae")
    XCTAssertEqual(message.software, "STUN test client")
    XCTAssertEqual(message.priority, 0x6E00_01FF)
    XCTAssertEqual(message.iceControlled, 0x932F_F9B1_5126_3B36)
    XCTAssertEqual(message.username, "evtj:h6vY")
    XCTAssertTrue(message.hasFingerprint)
    XCTAssertEqual(
      message.messageIntegrity.map(STUNTestSupport.hex), "9aeaa70cbfd8cb56781ef2b5b2d3f249c1b571a2")
    let key = STUNIntegrityKey(shortTermPassword: Self.samplePassword)
    XCTAssertNoThrow(try message.verifyIntegrity(key: key))
    // The context is re-initialised per message: a second check must give the same answer.
    XCTAssertNoThrow(try message.verifyIntegrity(key: key))
    XCTAssertThrowsError(
      try message.verifyIntegrity(key: STUNIntegrityKey(shortTermPassword: "wrong"))
    ) { XCTAssertEqual($0 as? STUNError, .integrityMismatch) }
  }

  func testSampleRequestReencodesWithSameIntegrityOverZeroPadding() throws {
    let original = STUNTestSupport.bytes(hex: Self.sampleRequestHex)
    let message = try STUNMessage.decode(original)
    let key = STUNIntegrityKey(shortTermPassword: Self.samplePassword)
    let encoded = try message.encode(key: key, fingerprint: true)
    XCTAssertEqual(encoded.count, original.count)
    // The vector pads with spaces; we pad with zeros. Everything up to the MAC is otherwise equal.
    var zeroPadded = original
    for index in [73, 74, 75] { XCTAssertEqual(zeroPadded[index], 0x20); zeroPadded[index] = 0 }
    XCTAssertEqual(Array(encoded[0..<80]), Array(zeroPadded[0..<80]))
    let again = try STUNMessage.decode(encoded)
    XCTAssertEqual(again.attributes, message.attributes)
    XCTAssertNoThrow(try again.verifyIntegrity(key: key))
  }

  func testRFC5769CorpusVectors() throws {
    guard let corpus = STUNTestSupport.corpusDirectory else {
      throw XCTSkip("../shared/corpus not present")
    }
    let data = try Data(contentsOf: corpus.appendingPathComponent("vectors/rfc5769-stun.json"))
    let root = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    let vectors = try XCTUnwrap(root["vectors"] as? [[String: Any]])
    XCTAssertEqual(vectors.count, 4)
    for vector in vectors {
      let name = vector["name"] as? String ?? "?"
      let bytes = STUNTestSupport.bytes(hex: try XCTUnwrap(vector["hex"] as? String))
      XCTAssertEqual(bytes.count, vector["length_bytes"] as? Int, name)
      let expected = try XCTUnwrap(vector["expected"] as? [String: Any])
      let message = try STUNMessage.decode(bytes)
      if let type = expected["type"] as? String {
        XCTAssertTrue(type.hasPrefix(String(format: "0x%04x", message.type.rawValue)), name)
      }
      if let transaction = expected["transaction_id"] as? String {
        XCTAssertEqual(message.transactionID.description, transaction, name)
      }
      if let mapped = expected["XOR-MAPPED-ADDRESS"] as? String {
        XCTAssertEqual(message.xorMappedAddress?.description, mapped, name)
      }
      if let integrity = expected["MESSAGE-INTEGRITY"] as? String {
        XCTAssertEqual(message.messageIntegrity.map(STUNTestSupport.hex), integrity, name)
      }
      XCTAssertEqual(message.hasFingerprint, expected["fingerprint_valid"] as? Bool == true, name)
      let key: STUNIntegrityKey
      if let password = vector["password"] as? String {
        key = STUNIntegrityKey(shortTermPassword: password)
      } else {
        // §2.4: long-term credentials; the password after SASLprep is "TheMatrIX".
        XCTAssertEqual(message.realm, vector["realm"] as? String, name)
        XCTAssertEqual(message.nonce, vector["nonce"] as? String, name)
        key = try STUNIntegrityKey.longTerm(
          username: try XCTUnwrap(message.username), realm: try XCTUnwrap(message.realm),
          password: "TheMatrIX")
        XCTAssertEqual(
          STUNTestSupport.hex(key.bytes), vector["long_term_key_md5_hex"] as? String, name)
        // Its padding is zeros, so our encoder reproduces it byte for byte.
        XCTAssertEqual(try message.encode(key: key), bytes, name)
      }
      XCTAssertNoThrow(try message.verifyIntegrity(key: key), name)
    }
  }

  func testEveryAttributeRoundTripsWithSHA256IntegrityAndFingerprint() throws {
    let transaction = STUNTransactionID(high: 0x0102_0304, low: 0x0506_0708_090A_0B0C)
    let v6 = try XCTUnwrap(ICETransportAddress("2001:db8:1234:5678:11:2233:4455:6677", port: 32853))
    let v4 = try XCTUnwrap(ICETransportAddress("192.0.2.1", port: 32853))
    let attributes: [STUNAttribute] = [
      .mappedAddress(v4), .xorMappedAddress(v6), .xorMappedAddress(v4), .username("a:b"),
      .errorCode(code: 487, reason: "Role Conflict"), .unknownAttributes([0x0031, 0x7FFF]),
      .realm("example.org"), .nonce("n0nce"), .software("WCSApi2"), .priority(0x6E00_01FF),
      .useCandidate, .iceControlling(0xFFFF_0000_1234_5678), .iceControlled(1),
      .channelNumber(0x4001), .lifetime(600), .xorPeerAddress(v6), .data([1, 2, 3, 4, 5]),
      .xorRelayedAddress(v4), .requestedTransport(17), .unknown(type: 0xC001, value: [9]),
    ]
    let message = STUNMessage(
      type: STUNMessageType(method: .allocate, messageClass: .errorResponse),
      transactionID: transaction, attributes: attributes)
    let key = STUNIntegrityKey(shortTermPassword: "secret")
    let encoded = try message.encode(key: key, algorithms: [.sha1, .sha256], fingerprint: true)
    XCTAssertEqual(encoded.count % 4, 0)
    let decoded = try STUNMessage.decode(encoded)
    XCTAssertEqual(decoded.type.rawValue, 0x0113)
    XCTAssertEqual(decoded.transactionID, transaction)
    XCTAssertEqual(decoded.attributes, attributes)
    XCTAssertEqual(decoded.unknownComprehensionRequired, [])
    XCTAssertEqual(decoded.messageIntegritySHA256?.count, 32)
    XCTAssertEqual(decoded.messageIntegrity?.count, 20)
    XCTAssertTrue(decoded.hasFingerprint)
    XCTAssertNoThrow(try decoded.verifyIntegrity(key: key))
    XCTAssertEqual(decoded.errorCode?.code, 487)
    XCTAssertEqual(decoded.xorMappedAddress, v6)
    // XOR-MAPPED-ADDRESS for IPv6 on the wire is XORed with cookie and transaction ID.
    XCTAssertFalse(STUNTestSupport.hex(encoded).contains("20010db8"))
  }

  func testUnknownAttributesAreSkippedAndComprehensionRequiredReported() throws {
    let message = STUNMessage(
      type: .bindingRequest,
      attributes: [.unknown(type: 0x0031, value: [1, 2]), .unknown(type: 0x8031, value: [])])
    let decoded = try STUNMessage.decode(try message.encode(fingerprint: true))
    XCTAssertEqual(decoded.unknownComprehensionRequired, [0x0031])
    XCTAssertEqual(decoded.attributes.count, 2)
  }

  func testAttributesAfterIntegrityAreIgnored() throws {
    let key = STUNIntegrityKey(shortTermPassword: "pw")
    var encoded = try STUNMessage(type: .bindingRequest, attributes: [.priority(5)]).encode(
      key: key)
    // Append a PRIORITY after MESSAGE-INTEGRITY and fix the length: it must not be reported.
    encoded += [0x00, 0x24, 0x00, 0x04, 0, 0, 0, 9]
    encoded.setLength(encoded.count - 20)
    let decoded = try STUNMessage.decode(encoded)
    XCTAssertEqual(decoded.attributes, [.priority(5)])
    XCTAssertNoThrow(try decoded.verifyIntegrity(key: key))
  }

  func testEveryTruncationIsRejected() throws {
    let bytes = STUNTestSupport.bytes(hex: Self.sampleRequestHex)
    for length in 0..<bytes.count {
      XCTAssertThrowsError(try STUNMessage.decode(Array(bytes[0..<length])), "length \(length)")
    }
  }

  func testLyingLengthsAndBadHeadersAreRejected() throws {
    let bytes = STUNTestSupport.bytes(hex: Self.sampleRequestHex)
    for declared in [0, 4, 84, 87, 92, 0x5C, 0xFFFC, 0xFFFF] {
      var lying = bytes
      lying.setLength(declared)
      XCTAssertThrowsError(try STUNMessage.decode(lying), "declared \(declared)")
    }
    var cookie = bytes
    cookie[4] = 0x21
    cookie[7] = 0x43
    XCTAssertThrowsError(try STUNMessage.decode(cookie)) {
      XCTAssertEqual($0 as? STUNError, .badMagicCookie(0x2112_A443))
    }
    var topBits = bytes
    topBits[0] = 0x80
    XCTAssertThrowsError(try STUNMessage.decode(topBits)) {
      XCTAssertEqual($0 as? STUNError, .notSTUN)
    }
    // SOFTWARE's length (offset 22) claims more than the message holds.
    var overrun = bytes
    overrun[22] = 0x01
    overrun[23] = 0x00
    XCTAssertThrowsError(try STUNMessage.decode(overrun)) {
      XCTAssertEqual($0 as? STUNError, .attributeOverrun(type: 0x8022, offset: 20, length: 256))
    }
    // USERNAME at offset 48 with a length that runs one byte past the end.
    var last = bytes
    last[50] = 0x00
    last[51] = 0x49
    XCTAssertThrowsError(try STUNMessage.decode(last))
    var fingerprint = bytes
    fingerprint[107] ^= 0x01
    XCTAssertThrowsError(try STUNMessage.decode(fingerprint)) {
      XCTAssertEqual(
        $0 as? STUNError, .fingerprintMismatch(expected: 0xE57A_3BCF, found: 0xE57A_3BCE))
    }
    XCTAssertThrowsError(try STUNMessage.decode(bytes + [0, 0, 0, 0]))
  }

  func testMalformedAttributeValuesAreTypedErrors() throws {
    let cases: [(UInt16, [UInt8])] = [
      (0x0020, [0, 1, 0, 0]), (0x0020, [0, 3, 0, 0, 1, 2, 3, 4]), (0x0024, [1, 2]),
      (0x0009, [0, 0, 7, 1]), (0x8029, [1, 2, 3, 4]), (0x0025, [1, 0, 0, 0]),
      (0x0008, [1, 2, 3, 4]),
    ]
    for (type, value) in cases {
      let message = STUNMessage(
        type: .bindingRequest, attributes: [.unknown(type: type, value: value)])
      XCTAssertThrowsError(try STUNMessage.decode(try message.encode()), "type \(type)") {
        guard case .malformedAttribute(let found, _) = $0 as? STUNError else {
          return XCTFail("unexpected \($0)")
        }
        XCTAssertEqual(found, type)
      }
    }
  }

  func testRandomCorruptionNeverCrashes() throws {
    let bytes = STUNTestSupport.bytes(hex: Self.sampleRequestHex)
    var generator = SplitMix64(state: 42)
    var rejected = 0
    for _ in 0..<5000 {
      var mutated = bytes
      for _ in 0..<Int.random(in: 1...4, using: &generator) {
        let index = Int.random(in: 0..<mutated.count, using: &generator)
        mutated[index] = UInt8.random(in: 0...255, using: &generator)
      }
      guard let decoded = try? STUNMessage.decode(mutated) else {
        rejected += 1
        continue
      }
      // Only a corrupted FINGERPRINT type (so no fingerprint is left) or a no-op mutation passes.
      XCTAssertTrue(!decoded.hasFingerprint || mutated == bytes)
    }
    XCTAssertGreaterThan(rejected, 4500)
  }
}

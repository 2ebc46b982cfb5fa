import TestSupport
import XCTest

@testable import WCSEngine
@testable import WCSMedia
@testable import WCSPeerConnection
@testable import WCSProtocols

/// `InOrderRTPPacket` (the flat receive path's header read) on hostile bytes: whatever it
/// takes, `RTPPacket.parse` takes too and gives the same packet and transport-wide number;
/// whatever `RTPPacket.parse` takes of the common shape, it takes too. Packets built around
/// the edges of its checks (extension lengths that lie, elements running past the extension,
/// id 15 and id 0, padding octets, two-byte and other profiles, CSRCs beside the X bit, other
/// versions and the P bit), each also cut at every length.
final class InOrderRTPPacketHostileBytesTests: XCTestCase {
  /// Checks one datagram, as `receiveRTP` hands it over.
  private static func check(
    _ bytes: [UInt8], transportWideCCID: UInt8?, _ message: String,
    took: inout Int
  ) {
    bytes.withUnsafeBytes { raw in
      let ssrc = raw.count >= 12 ? PeerConnection.ssrc(ofRTP: raw) : 0
      let flat = InOrderRTPPacket(raw, ssrc: ssrc, transportWideCCID: transportWideCCID)
      let parsed = try? RTPPacket.parse(raw)
      guard let flat else {
        // Left to the layered path: it must not be of the common shape (a missed packet
        // costs only time, but the flat path claims every one of them).
        if let parsed, raw[0] & 0xEF == 0x80 {
          switch parsed.header.extensionStorage {
          case .none:
            XCTFail("common packet without extension refused: \(message) \(bytes)")
          case .wire(let wire) where wire.profile == RTPHeaderExtension.oneByteProfile:
            XCTFail("common one-byte packet refused: \(message) \(bytes)")
          default: break
          }
        }
        return
      }
      took += 1
      guard let parsed else {
        XCTFail("taken but malformed: \(message) \(bytes)")
        return
      }
      XCTAssertEqual(flat.packet(), parsed, "\(message) \(bytes)")
      XCTAssertEqual(flat.sequenceNumber, parsed.header.sequenceNumber, message)
      XCTAssertEqual(flat.timestamp, parsed.header.timestamp, message)
      XCTAssertEqual(flat.payloadType, parsed.header.payloadType, message)
      XCTAssertEqual(flat.marker, parsed.header.marker, message)
      XCTAssertEqual(flat.ssrc, parsed.header.ssrc, message)
      XCTAssertEqual(
        flat.transportSequenceNumber,
        transportWideCCID.flatMap { TransportWideCC.sequenceNumber(in: parsed.header, id: $0) },
        "\(message) \(bytes)")
    }
  }

  /// The fixed header: `first` octet, then marker/PT, sequence number, timestamp, SSRC.
  private static func fixedHeader(first: UInt8, second: UInt8, sequence: UInt16) -> [UInt8] {
    [
      first, second, UInt8(sequence >> 8), UInt8(sequence & 0xFF), 0xFF, 0xFF, 0xFF, 0xF0,
      0xDE, 0xAD, 0xBE, 0xEF,
    ]
  }

  func testHandWrittenEdgesAndEveryTruncation() {
    let base = Self.fixedHeader(first: 0x90, second: 0xE0, sequence: 0xFFFF)
    let extensions: [(String, [UInt8])] = [
      ("transport-wide only", [0xBE, 0xDE, 0, 1, 0x51, 0x12, 0x34, 0]),
      ("length 0", [0xBE, 0xDE, 0, 0]),
      ("length lies: one word more than sent", [0xBE, 0xDE, 0, 2, 0x51, 0x12, 0x34, 0]),
      ("length 0xFFFF", [0xBE, 0xDE, 0xFF, 0xFF, 0x51, 0x12, 0x34, 0]),
      ("element runs past the extension", [0xBE, 0xDE, 0, 1, 0x53, 0x12, 0x34, 0]),
      ("element ends exactly at the end", [0xBE, 0xDE, 0, 1, 0x52, 0x12, 0x34, 0x56]),
      ("header of an element is the last octet", [0xBE, 0xDE, 0, 1, 0, 0, 0, 0x51]),
      ("id 15 first", [0xBE, 0xDE, 0, 1, 0xF1, 0x12, 0x34, 0]),
      ("id 15 after the number", [0xBE, 0xDE, 0, 1, 0x51, 0x12, 0x34, 0xFF]),
      ("id 0 with a length", [0xBE, 0xDE, 0, 1, 0x01, 0x12, 0x34, 0]),
      ("padding then the number", [0xBE, 0xDE, 0, 2, 0, 0, 0, 0x51, 0x12, 0x34, 0, 0]),
      ("number of one octet", [0xBE, 0xDE, 0, 1, 0x50, 0x12, 0, 0]),
      ("number of three octets", [0xBE, 0xDE, 0, 1, 0x52, 0x12, 0x34, 0x56]),
      ("number twice", [0xBE, 0xDE, 0, 2, 0x51, 0x12, 0x34, 0x51, 0x56, 0x78, 0, 0]),
      (
        "16 data octets",
        [0xBE, 0xDE, 0, 4] + [0x51, 0x12, 0x34] + [UInt8](repeating: 0, count: 13)
      ),
      (
        "20 data octets",
        [0xBE, 0xDE, 0, 5] + [0x51, 0x12, 0x34] + [UInt8](repeating: 0, count: 17)
      ),
      (
        "16-octet element",
        [0xBE, 0xDE, 0, 5, 0x2F] + [UInt8](repeating: 7, count: 16) + [0x51, 0x12, 0x34]
      ),
      ("two-byte profile", [0x10, 0x00, 0, 1, 5, 2, 0x12, 0x34]),
      ("two-byte profile, appbits 1", [0x10, 0x01, 0, 1, 5, 2, 0x12, 0x34]),
      ("two-byte profile 0x100F", [0x10, 0x0F, 0, 1, 5, 2, 0x12, 0x34]),
      ("other profile", [0xAB, 0xCD, 0, 1, 0x51, 0x12, 0x34, 0]),
      ("BEDF", [0xBE, 0xDF, 0, 1, 0x51, 0x12, 0x34, 0]),
    ]
    var took = 0
    for (name, headerExtension) in extensions {
      for payloadCount in [0, 1, 5] {
        let payload = [UInt8](repeating: 0xAA, count: payloadCount)
        for first: UInt8 in [0x90, 0x91, 0xB0, 0xD0, 0x50, 0x10, 0x80, 0xA0, 0x9F] {
          var bytes = base + headerExtension + payload
          bytes[0] = first
          if first & 0x20 != 0, !bytes.isEmpty { bytes[bytes.count - 1] = 1 }
          for length in 0...bytes.count {
            for id: UInt8? in [nil, 1, 5, 15] {
              Self.check(
                Array(bytes.prefix(length)), transportWideCCID: id,
                "\(name), first \(first), payload \(payloadCount), cut to \(length)", took: &took)
            }
          }
        }
      }
    }
    XCTAssertGreaterThan(took, 1_000)
  }

  func testRandomHeadersAndEveryTruncation() {
    var generator = SplitMix64(seed: 0xBEDE)
    var took = 0
    for round in 0..<3_000 {
      let firstRoll = Int.random(in: 0..<10, using: &generator)
      let first: UInt8 =
        firstRoll < 6
        ? 0x90 : firstRoll < 8 ? 0x80 : UInt8.random(in: 0...255, using: &generator)
      var bytes = Self.fixedHeader(
        first: first, second: UInt8.random(in: 0...255, using: &generator),
        sequence: UInt16.random(in: 0...UInt16.max, using: &generator))
      for _ in 0..<Int(first & 0x0F) where Bool.random(using: &generator) {
        bytes += [1, 2, 3, 4]
      }
      if first & 0x10 != 0 {
        let profiles: [UInt16] = [0xBEDE, 0xBEDE, 0xBEDE, 0x1000, 0x1003, 0xBEDF, 0]
        let profile = profiles[Int.random(in: 0..<profiles.count, using: &generator)]
        let sent = Int.random(in: 0...24, using: &generator)
        // The declared length: mostly what was sent (rounded up), sometimes a lie.
        let words =
          Int.random(in: 0..<4, using: &generator) == 0
          ? Int.random(in: 0...7, using: &generator) : (sent + 3) / 4
        bytes += [
          UInt8(profile >> 8), UInt8(profile & 0xFF), UInt8(words >> 8), UInt8(words & 0xFF),
        ]
        for _ in 0..<sent {
          let kind = Int.random(in: 0..<6, using: &generator)
          bytes.append(
            kind == 0
              ? 0
              : kind == 1
                ? 0x51
                : kind == 2
                  ? UInt8.random(in: 0...15, using: &generator) << 4
                    | UInt8.random(in: 0...3, using: &generator)
                  : UInt8.random(in: 0...255, using: &generator))
        }
      }
      bytes += (0..<Int.random(in: 0...6, using: &generator)).map { _ in
        UInt8.random(in: 0...255, using: &generator)
      }
      let ids: [UInt8?] = [nil, 5, 1, 14, 15, 0]
      let id = ids[Int.random(in: 0..<ids.count, using: &generator)]
      for length in 0...bytes.count {
        Self.check(
          Array(bytes.prefix(length)), transportWideCCID: id, "round \(round), cut to \(length)",
          took: &took)
      }
    }
    XCTAssertGreaterThan(took, 2_000)
  }
}

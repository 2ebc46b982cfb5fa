import TestSupport
import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// `SRTPSession.unprotectRTP(_:length:)` (the buffer form, which `PeerConnection` uses for every
/// received media packet) has its own body rather than the shared `run`; these runs hold it to
/// the array form, which still goes through `run`: same results, errors and counters.
final class SRTPSessionBufferUnprotectTests: XCTestCase {
  private func key(_ profile: SRTPProtectionProfile) -> SRTPMasterKey {
    SRTPMasterKey(
      key: (0..<profile.keyLength).map { UInt8(truncatingIfNeeded: $0 * 11 + 3) },
      salt: (0..<profile.saltLength).map { UInt8(truncatingIfNeeded: $0 * 5 + 9) })
  }

  func testBufferFormMatchesArrayFormOnSeededHostileStreams() throws {
    var random = SplitMix64(seed: 0x5_4C7B)
    var outcomes = (ok: 0, auth: 0, replay: 0, short: 0)
    for profile in SRTPProtectionProfile.allCases {
      let outbound = try SRTPSession(
        profile: profile, masterKey: key(profile), direction: .outbound)
      let viaArray = try SRTPSession(profile: profile, masterKey: key(profile), direction: .inbound)
      let viaBuffer = try SRTPSession(
        profile: profile, masterKey: key(profile), direction: .inbound)
      var sent: [[UInt8]] = []
      var sequence = UInt16.random(in: 0...UInt16.max, using: &random)
      for _ in 0..<1_500 {
        let choice = sent.isEmpty ? 0 : Int.random(in: 0..<10, using: &random)
        var packet: [UInt8]
        if choice < 5 || choice == 7 {
          sequence &+= UInt16.random(in: 1...3, using: &random)  // loss, 16-bit wrap
          let header = RTPHeader(
            payloadType: 96, sequenceNumber: sequence, timestamp: UInt32(sequence) * 90,
            ssrc: 0xFEED_0001)
          let payload = (0..<Int.random(in: 0...300, using: &random)).map {
            UInt8(truncatingIfNeeded: $0)
          }
          packet = try RTPPacket(header: header, payload: payload).serialized()
          try outbound.protectRTP(&packet)
        } else {
          packet = []
        }
        switch choice {
        case 0..<5:
          sent.append(packet)
        case 7:
          // A fresh index (a replayed one is refused before its tag is checked).
          packet[Int.random(in: 0..<packet.count, using: &random)] ^= 0x40
        case 5, 6:
          packet = sent[Int.random(in: max(0, sent.count - 200)..<sent.count, using: &random)]
        case 8:
          packet = Array(sent[sent.count - 1].prefix(Int.random(in: 0...40, using: &random)))
        default:
          packet = (0..<Int.random(in: 0...60, using: &random)).map { _ in
            UInt8.random(in: 0...255, using: &random)
          }
        }
        var arrayResult = packet
        let expected: Result<[UInt8], SRTPError>
        do {
          try viaArray.unprotectRTP(&arrayResult)
          expected = .success(arrayResult)
        } catch {
          expected = .failure(error)
        }
        var buffer = packet + [UInt8](repeating: 0xEE, count: Int.random(in: 0...8, using: &random))
        let got: Result<[UInt8], SRTPError> = buffer.withUnsafeMutableBytes { raw in
          do throws(SRTPError) {
            let length = try viaBuffer.unprotectRTP(raw, length: packet.count)
            return .success(Array(raw.prefix(length)))
          } catch {
            return .failure(error)
          }
        }
        XCTAssertEqual(got, expected, "\(profile) packet \(packet.prefix(4))")
        switch expected {
        case .success: outcomes.ok += 1
        case .failure(.authenticationFailed): outcomes.auth += 1
        case .failure(.replayed): outcomes.replay += 1
        case .failure(.packetTooShort): outcomes.short += 1
        case .failure: break
        }
      }
      XCTAssertEqual(viaBuffer.counters, viaArray.counters, "\(profile)")
    }
    XCTAssertGreaterThan(outcomes.ok, 2_000)
    XCTAssertGreaterThan(outcomes.auth, 200)
    XCTAssertGreaterThan(outcomes.replay, 300)
    XCTAssertGreaterThan(outcomes.short, 300)
  }

  func testBufferFormRefusesWhatItCannotHold() throws {
    let profile = SRTPProtectionProfile.aes128CMHMACSHA1_80
    let outbound = try SRTPSession(profile: profile, masterKey: key(profile), direction: .outbound)
    let inbound = try SRTPSession(profile: profile, masterKey: key(profile), direction: .inbound)
    var bytes = [UInt8](repeating: 0x80, count: 40)
    try bytes.withUnsafeMutableBytes { raw in
      XCTAssertThrowsError(try inbound.unprotectRTP(raw, length: 41)) {
        XCTAssertEqual($0 as? SRTPError, .bufferTooSmall(needed: 41, available: 40))
      }
      XCTAssertThrowsError(try inbound.unprotectRTP(raw, length: 21)) {
        XCTAssertEqual($0 as? SRTPError, .packetTooShort(length: 21))
      }
      XCTAssertThrowsError(try outbound.unprotectRTP(raw, length: 40)) {
        XCTAssertEqual($0 as? SRTPError, .wrongDirection)
      }
    }
    XCTAssertEqual(bytes, [UInt8](repeating: 0x80, count: 40), "refused without touching it")
    XCTAssertEqual(inbound.counters, SRTPCounters())
  }
}

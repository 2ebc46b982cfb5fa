import Foundation
import Synchronization
import WCSProtocols
import XCTest

@testable import WCSLocalServer

/// DTMF from the SIP side: RFC 4733 events decoded once per key press, SIP INFO bodies, and
/// the `notifyDtmf` the gateway's core sends the client.
final class TelephoneEventDecoderTests: XCTestCase {
  private func parsed(_ packets: [TelephoneEventEncoder.Packet]) throws -> [RTPPacket] {
    try packets.map { try RTPPacket.parse($0.bytes) }
  }

  func testEncodedDigitsDecodeOncePerKeyPressInOrder() throws {
    let packets = TelephoneEventEncoder(payloadType: 101).packets(
      for: "19#*A0", ssrc: 7, sequence: 65530, timestamp: UInt32.max - 500
    ).packets
    var decoder = TelephoneEventDecoder(payloadType: 101)
    var digits: [TelephoneEventDecoder.Digit] = []
    for packet in try parsed(packets) { digits += decoder.receive(packet) }
    XCTAssertEqual(String(digits.map(\.digit)), "19#*A0")
    XCTAssertEqual(digits.map(\.duration), Array(repeating: 800, count: 6), "100 ms at 8 kHz")
    XCTAssertFalse(digits.contains(where: \.endLost))
    XCTAssertEqual(decoder.statistics.duplicates, 2 * 6, "two end retransmissions a digit")
    XCTAssertEqual(decoder.statistics.packets, packets.count)
    XCTAssertNil(decoder.flush(), "nothing is left under way")
  }

  func testTheSameDigitTwiceIsTwoPressesAndALateEndIsNotAThird() throws {
    let packets = try parsed(
      TelephoneEventEncoder(payloadType: 96).packets(
        for: "55", ssrc: 1, sequence: 0, timestamp: 1000
      ).packets)
    var decoder = TelephoneEventDecoder(payloadType: 96)
    var digits = ""
    for packet in packets { digits += String(decoder.receive(packet).map(\.digit)) }
    // An end packet of the first press arriving after the second one (reordered).
    let late = try XCTUnwrap(packets.first { $0.payload[1] & 0x80 != 0 })
    digits += String(decoder.receive(late).map(\.digit))
    XCTAssertEqual(digits, "55")
  }

  func testAPressWhoseEndPacketsWereLostIsReportedByTheNextOrByFlush() throws {
    let packets = try parsed(
      TelephoneEventEncoder(payloadType: 101).packets(
        for: "78", ssrc: 1, sequence: 0, timestamp: 0
      ).packets)
    let withoutEnds = packets.filter { $0.payload[1] & 0x80 == 0 }
    var decoder = TelephoneEventDecoder(payloadType: 101)
    var digits: [TelephoneEventDecoder.Digit] = []
    for packet in withoutEnds { digits += decoder.receive(packet) }
    XCTAssertEqual(digits.map(\.digit), ["7"], "the second press ends the first")
    XCTAssertEqual(digits.first?.endLost, true)
    XCTAssertEqual(digits.first?.duration, 640, "the longest duration seen (80 ms)")
    let last = try XCTUnwrap(decoder.flush())
    XCTAssertEqual(last.digit, "8")
    XCTAssertTrue(last.endLost)
    XCTAssertNil(decoder.flush(), "flushed once")
  }

  func testOtherPayloadTypesShortPayloadsAndNonDigitEventsGiveNoDigit() throws {
    var decoder = TelephoneEventDecoder(payloadType: 101)
    func packet(_ type: UInt8, _ payload: [UInt8]) -> RTPPacket {
      RTPPacket(
        header: RTPHeader(
          marker: false, payloadType: type, sequenceNumber: 1, timestamp: 9, ssrc: 3),
        payload: payload)
    }
    XCTAssertEqual(decoder.receive(packet(0, [1, 0x80, 0, 160])), [])
    XCTAssertEqual(decoder.receive(packet(101, [1, 0x80])), [])
    // Event 16 is flash (RFC 4733 §3.2), not a DTMF digit.
    XCTAssertEqual(decoder.receive(packet(101, [16, 0x80, 0, 160])), [])
    XCTAssertEqual(decoder.statistics.ignored, 2)
    XCTAssertEqual(decoder.receive(packet(101, [14, 0x8a, 0, 160])).map(\.digit), ["C"])
  }

  func testSIPInfoBodiesGiveTheirDigit() {
    XCTAssertEqual(SIPInfoDTMF.digit(inBody: "Signal=5\r\nDuration=160\r\n"), "5")
    XCTAssertEqual(SIPInfoDTMF.digit(inBody: "signal = #\nDuration=250"), "#")
    XCTAssertEqual(SIPInfoDTMF.digit(inBody: "Signal=b\r\n"), "B")
    XCTAssertEqual(SIPInfoDTMF.digit(inBody: "*"), "*", "application/dtmf: the digit alone")
    XCTAssertNil(SIPInfoDTMF.digit(inBody: "Signal=12\r\n"))
    XCTAssertNil(SIPInfoDTMF.digit(inBody: "Signal=x\r\n"))
    XCTAssertNil(SIPInfoDTMF.digit(inBody: "<xml>hello</xml>\r\nsecond line"))
    XCTAssertNil(SIPInfoDTMF.digit(inBody: String(repeating: "1", count: 2000)))
  }

  func testTheCoreSendsNotifyDtmfForAnEstablishedCallOnly() throws {
    var configuration = WCSServerConfiguration()
    configuration.sipGatewayEnabled = true
    let h = ServerHarness(configuration: configuration)
    h.open(1)
    h.receive(
      1, "connection", ["appKey": "defaultApp", "sipLogin": "1001", "sipDomain": "127.0.0.1"])
    _ = h.take(1)
    h.receive(
      1, "call",
      [
        "callId": "c1", "callee": "1002",
        "sdp": "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=sendrecv\r\n",
      ])
    guard case .invite(let sip, _, _, _, _, _, false)? = h.sipCommands.last else {
      return XCTFail("no INVITE: \(h.sipCommands)")
    }
    h.run(h.core.sipEvent(.dtmf(call: sip, digit: "1", info: false), now: h.now))
    h.run(h.core.sipEvent(.established(call: sip), now: h.now))
    h.run(h.core.sipEvent(.dtmf(call: sip, digit: "2", info: false), now: h.now))
    h.run(h.core.sipEvent(.dtmf(call: sip, digit: "#", info: true), now: h.now))
    h.run(h.core.sipEvent(.dtmf(call: sip + 1, digit: "3", info: false), now: h.now))
    let events = h.take(1).filter { $0.name == "notifyDtmf" }.compactMap(\.argument)
    XCTAssertEqual(events.map { $0["dtmf"]?.stringValue }, ["2", "#"], "none before ESTABLISHED")
    XCTAssertEqual(events.map { $0["type"]?.stringValue }, ["RFC2833", "INFO"])
    XCTAssertEqual(events.map { $0["callId"]?.stringValue }, ["c1", "c1"])
    h.receive(
      1, "call",
      [
        "callId": "c2", "callee": "1002",
        "sdp": "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n",
      ])
    guard case .invite(_, _, _, _, _, _, let video)? = h.sipCommands.last else {
      return XCTFail("no second INVITE")
    }
    XCTAssertTrue(video, "a WebRTC offer with video makes a video INVITE")
  }
}

/// The SIP leg's socket: telephone-events in, digits out, audio ending a press whose end
/// packets were lost.
final class SIPRTPLegDTMFTests: XCTestCase {
  func testAudioAfterAPressWithoutEndPacketsReportsItOnce() throws {
    let leg = try SIPRTPLeg(address: "127.0.0.1", queue: DispatchQueue(label: "leg-test"))
    defer { leg.close() }
    leg.setRemote(
      SIPMediaDescription(
        address: "127.0.0.1", port: 9, codec: .pcmu, payloadType: 0, telephoneEvent: 101,
        holding: false))
    let heard = Mutex<[TelephoneEventDecoder.Digit]>([])
    leg.reception.digits.withLock { $0 = { digit in heard.withLock { $0.append(digit) } } }
    let events = TelephoneEventEncoder(payloadType: 101).packets(
      for: "69", ssrc: 4, sequence: 100, timestamp: 8000
    ).packets
    // "6" whole, "9" without its end packets, then audio.
    let ninth = events.suffix(events.count / 2).filter { $0.bytes[13] & 0x80 == 0 }
    var datagrams = events.prefix(events.count / 2).map(\.bytes) + ninth.map(\.bytes)
    datagrams.append(
      try RTPPacket(
        header: RTPHeader(
          marker: false, payloadType: 0, sequenceNumber: 200, timestamp: 20000, ssrc: 4),
        payload: [UInt8](repeating: 0xff, count: 160)
      ).serialized())
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    defer { close(fd) }
    var to = sockaddr_in()
    to.sin_family = sa_family_t(AF_INET)
    to.sin_port = leg.port.bigEndian
    to.sin_addr.s_addr = inet_addr("127.0.0.1")
    for datagram in datagrams {
      _ = datagram.withUnsafeBytes { buffer in
        withUnsafePointer(to: &to) {
          $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            sendto(
              fd, buffer.baseAddress, buffer.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)
            )
          }
        }
      }
      usleep(2000)
    }
    let deadline = Date().addingTimeInterval(3)
    while heard.withLock({ $0.count }) < 2, Date() < deadline { usleep(10_000) }
    usleep(100_000)
    let digits = heard.withLock { $0 }
    XCTAssertEqual(String(digits.map(\.digit)), "69")
    XCTAssertEqual(digits.map(\.endLost), [false, true])
  }
}

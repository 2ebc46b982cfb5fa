import Foundation
import TestSupport
import WCSCodecs
import WCSProtocols
import XCTest

@testable import WCSLocalServer

/// The gateway's Sans-I/O audio bridge: Opus (WebRTC leg) ↔ G.711 (SIP leg), pass-through of
/// Opus, hold, and what it refuses.
final class CallMediaBridgeTests: XCTestCase {
  private static let opus: UInt8 = 111

  private func tone(_ frequency: Double, frames: Int, rate: Double = 48_000) -> [[Int16]] {
    let size = Int(rate) / 50
    return (0..<frames).map { frame in
      (0..<size).map { index in
        let t = Double(frame * size + index) / rate
        return Int16(10_000 * sin(2 * Double.pi * frequency * t))
      }
    }
  }

  private func rtp(_ payload: [UInt8], pt: UInt8, sequence: UInt16, timestamp: UInt32) -> [UInt8] {
    let header = RTPHeader(
      payloadType: pt, sequenceNumber: sequence, timestamp: timestamp, ssrc: 0x1234)
    return (try? RTPPacket(header: header, payload: payload).serialized()) ?? []
  }

  func testOpusFromTheClientReachesTheSIPLegAsPCMUWithItsToneAndScaledTimestamps() throws {
    var bridge = try CallMediaBridge(webRTCPayloadType: Self.opus, webRTCSSRC: 1, sipSSRC: 2)
    XCTAssertNil(
      bridge.receiveFromWebRTC(rtp([1, 2, 3], pt: Self.opus, sequence: 1, timestamp: 0)),
      "nothing goes out before the SIP codec is known")
    bridge.setSIPCodec(.g711(.muLaw))
    let encoder = try OpusEncoder()
    var samples: [Int16] = []
    var packets: [RTPPacket] = []
    for (index, frame) in tone(440, frames: 50).enumerated() {
      let payload = try encoder.encode(PCMAudioFrame(samples: frame, channels: 1))
      let out = try XCTUnwrap(
        bridge.receiveFromWebRTC(
          rtp(
            payload, pt: Self.opus, sequence: UInt16(100 + index),
            timestamp: UInt32(5000 + 960 * index))))
      let packet = try RTPPacket.parse(out)
      XCTAssertEqual(packet.header.payloadType, 0)
      XCTAssertEqual(packet.header.ssrc, 2)
      XCTAssertEqual(packet.payload.count, 160)
      packets.append(packet)
      samples += G711.decode(packet.payload, law: .muLaw)
    }
    XCTAssertEqual(packets[1].header.timestamp &- packets[0].header.timestamp, 160)
    XCTAssertEqual(packets[1].header.sequenceNumber &- packets[0].header.sequenceNumber, 1)
    XCTAssertEqual(
      Tone.dominantFrequency(Array(samples.suffix(4000)), rate: 8000), 440, accuracy: 10)
    XCTAssertEqual(bridge.statistics.packetsToSIP, 50)
  }

  func testPCMAFromTheSIPLegReachesTheClientAsTwentyMillisecondOpusFrames() throws {
    var bridge = try CallMediaBridge(webRTCPayloadType: Self.opus, webRTCSSRC: 7, sipSSRC: 2)
    bridge.setSIPCodec(.g711(.aLaw))
    let decoder = try OpusDecoder(channels: 1)
    var samples: [Int16] = []
    var timestamps: [UInt32] = []
    // 30 ms packets (240 samples): regrouped into 20 ms Opus frames.
    let tone8k = tone(880, frames: 60, rate: 8000).flatMap { $0 }
    var index = 0
    var sequence: UInt16 = 9
    while index + 240 <= tone8k.count {
      let payload = G711.encode(Array(tone8k[index..<index + 240]), law: .aLaw)
      for out in bridge.receiveFromSIP(
        rtp(payload, pt: 8, sequence: sequence, timestamp: UInt32(index)))
      {
        let packet = try RTPPacket.parse(out)
        XCTAssertEqual(packet.header.payloadType, Self.opus)
        XCTAssertEqual(packet.header.ssrc, 7)
        timestamps.append(packet.header.timestamp)
        samples += try decoder.decode(packet.payload).samples
      }
      index += 240
      sequence &+= 1
    }
    XCTAssertEqual(timestamps.count, tone8k.count / 160)
    XCTAssertEqual(Set(zip(timestamps.dropFirst(), timestamps).map { $0 &- $1 }), [960])
    XCTAssertEqual(
      Tone.dominantFrequency(Array(samples.suffix(24_000)), rate: 48_000), 880, accuracy: 10)
    XCTAssertEqual(bridge.receiveFromSIP(rtp([0xd5], pt: 0, sequence: 1, timestamp: 0)), [])
    XCTAssertEqual(bridge.statistics.packetsDropped, 1, "PCMU on a PCMA leg is dropped")
  }

  func testOpusOnBothLegsPassesThroughAndHoldStopsBothDirections() throws {
    var bridge = try CallMediaBridge(webRTCPayloadType: Self.opus, webRTCSSRC: 7, sipSSRC: 2)
    bridge.setSIPCodec(.opus(109))
    let out = try RTPPacket.parse(
      try XCTUnwrap(
        bridge.receiveFromWebRTC(rtp([9, 8, 7], pt: Self.opus, sequence: 5, timestamp: 960))))
    XCTAssertEqual(out.header.payloadType, 109)
    XCTAssertEqual(out.payload, [9, 8, 7])
    let back = bridge.receiveFromSIP(rtp([4, 5], pt: 109, sequence: 1, timestamp: 1))
    XCTAssertEqual(try back.map { try RTPPacket.parse($0).payload }, [[4, 5]])
    bridge.holding = true
    XCTAssertNil(bridge.receiveFromWebRTC(rtp([1], pt: Self.opus, sequence: 6, timestamp: 1920)))
    XCTAssertEqual(bridge.receiveFromSIP(rtp([4, 5], pt: 109, sequence: 2, timestamp: 961)), [])
    XCTAssertEqual(bridge.statistics.packetsHeld, 2)
    XCTAssertNil(bridge.receiveFromWebRTC([0x80, 1, 2]), "not RTP")
    XCTAssertEqual(bridge.statistics.packetsDropped, 1)
  }

  func testEventsTowardSIPShareTheAudioSequenceAndPauseTheAudio() throws {
    var bridge = try CallMediaBridge(webRTCPayloadType: Self.opus, webRTCSSRC: 7, sipSSRC: 2)
    bridge.setSIPCodec(.opus(109))
    let first = try RTPPacket.parse(
      try XCTUnwrap(bridge.receiveFromWebRTC(rtp([1], pt: Self.opus, sequence: 1, timestamp: 0))))
    let eventTimestamp = bridge.pauseAudioToSIP()
    XCTAssertEqual(eventTimestamp, first.header.timestamp &+ 160)
    XCTAssertNil(
      bridge.receiveFromWebRTC(rtp([2], pt: Self.opus, sequence: 2, timestamp: 960)),
      "audio waits while events go out")
    var event = rtp([1, 0x80, 0, 160], pt: 101, sequence: 999, timestamp: eventTimestamp)
    bridge.numberForSIP(&event)
    XCTAssertEqual(
      try RTPPacket.parse(event).header.sequenceNumber, first.header.sequenceNumber &+ 1)
    bridge.resumeAudioToSIP()
    let next = try RTPPacket.parse(
      try XCTUnwrap(bridge.receiveFromWebRTC(rtp([3], pt: Self.opus, sequence: 3, timestamp: 1920)))
    )
    XCTAssertEqual(next.header.sequenceNumber, first.header.sequenceNumber &+ 2)
  }

  func testABridgeMadeDuringEventsContinuesTheSIPStreamAfterThem() throws {
    var bridge = try CallMediaBridge(
      webRTCPayloadType: Self.opus, webRTCSSRC: 7, sipSSRC: 2, sipSequence: 65_534,
      sipTimestamp: 5_000, eventsInProgress: 1)
    bridge.setSIPCodec(.opus(109))
    XCTAssertNil(
      bridge.receiveFromWebRTC(rtp([1], pt: Self.opus, sequence: 1, timestamp: 0)),
      "audio waits for the events already going out")
    var event = rtp([1, 0x80, 0, 160], pt: 101, sequence: 9, timestamp: 4_000)
    bridge.numberForSIP(&event)
    XCTAssertEqual(try RTPPacket.parse(event).header.sequenceNumber, 65_534)
    bridge.resumeAudioToSIP()
    let audio = try RTPPacket.parse(
      try XCTUnwrap(bridge.receiveFromWebRTC(rtp([2], pt: Self.opus, sequence: 2, timestamp: 960))))
    XCTAssertEqual(audio.header.sequenceNumber, 65_535)
    XCTAssertEqual(audio.header.timestamp, 5_000)
    XCTAssertEqual(audio.header.ssrc, 2)
  }
}

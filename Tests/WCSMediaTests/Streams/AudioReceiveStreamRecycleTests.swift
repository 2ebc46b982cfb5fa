import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// A driver that hands each delivered output's packet array back (`recycle`) to an audio
/// receive stream gets the same outputs as one that does not: only the array's storage is
/// reused.
final class AudioReceiveStreamRecycleTests: XCTestCase {
  func testRecycledOutputsMatchFreshOnes() {
    let start = MediaInstant.now()
    let configuration = RTPReceiveSource.Configuration(
      ssrc: 0xA0D1_0000, localSSRC: 1, payloadType: 111, clockRate: 48_000)
    var recycling = AudioReceiveStream(configuration: configuration, now: start)
    var plain = AudioReceiveStream(configuration: configuration, now: start)
    var state: UInt64 = 0xA11C_E5ED
    func next(_ bound: UInt64) -> UInt64 {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return (state >> 33) % bound
    }
    var sequence: UInt16 = 65_000  // wraps during the run
    var delivered = 0
    for step in 0..<5_000 {
      var number = sequence
      switch next(20) {
      case 0: number = sequence &- UInt16(next(40))  // late or duplicate
      case 1: sequence &+= UInt16(next(5))  // loss
      case 2: number = sequence &+ 1  // reordered pair
      default: break
      }
      sequence &+= 1
      let packet = RTPPacket(
        header: RTPHeader(
          payloadType: 111, sequenceNumber: number, timestamp: UInt32(step) &* 960,
          ssrc: 0xA0D1_0000),
        payload: [UInt8(truncatingIfNeeded: step), 1, 2])
      let now = start + .milliseconds(20 * step + Int(next(15)))
      let fresh = plain.receive(packet, now: now)
      let reused = recycling.receive(packet, now: now)
      XCTAssertEqual(reused, fresh, "step \(step)")
      if case .success(let output) = reused {
        delivered += output.packets.count
        recycling.recycle(output.packets)
      }
    }
    XCTAssertGreaterThan(delivered, 4_000)
    XCTAssertEqual(recycling.source.counters, plain.source.counters)
    XCTAssertEqual(recycling.jitterBuffer.duplicates, plain.jitterBuffer.duplicates)
    XCTAssertEqual(recycling.jitterBuffer.latePackets, plain.jitterBuffer.latePackets)
  }
}

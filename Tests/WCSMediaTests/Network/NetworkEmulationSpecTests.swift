import XCTest

@testable import WCSEventLoop
@testable import WCSMedia

/// `NetworkEmulation(spec:)`: what it accepts, what it refuses and with which token.
final class NetworkEmulationSpecTests: XCTestCase {
  func testSpecWithoutDirectionSetsBothDirections() throws {
    let emulation = try NetworkEmulation(spec: "loss=5%,delay=40ms,jitter=15ms,rate=1.5mbit")
    let expected = NetworkConditions(
      loss: .random(rate: 0.05), delay: .milliseconds(40), jitter: .milliseconds(15),
      rateBitsPerSecond: 1_500_000)
    XCTAssertEqual(emulation.send, expected)
    XCTAssertEqual(emulation.receive, expected)
    XCTAssertNil(emulation.seed)
  }

  func testDirectionSectionsApplyLeftToRight() throws {
    let emulation = try NetworkEmulation(
      spec: "delay=20ms ; up:loss=2% ; down:loss=20%,burst=5 ; receive:delay=30ms; seed=9")
    XCTAssertEqual(emulation.send.delay, .milliseconds(20))
    XCTAssertEqual(emulation.send.loss, .random(rate: 0.02))
    XCTAssertEqual(emulation.receive.delay, .milliseconds(30))
    guard case .gilbertElliott(let model) = emulation.receive.loss else {
      return XCTFail("receive loss \(emulation.receive.loss)")
    }
    XCTAssertEqual(model.lossRate, 0.2, accuracy: 1e-12)
    XCTAssertEqual(model.meanBurstLength, 5, accuracy: 1e-12)
    XCTAssertEqual(emulation.seed, 9)
  }

  func testEveryKeyAndUnitIsRead() throws {
    let emulation = try NetworkEmulation(
      spec:
        "send:reorder=10%,duplicate=1.5%,delay=1.5s,jitter=250us,rate=800kbps,queue=64kb;"
        + "receive:rate=2gbit,queue=100ms,ge=5%/20%/1%/90%")
    XCTAssertEqual(emulation.send.reorderRate, 0.1, accuracy: 1e-12)
    XCTAssertEqual(emulation.send.duplicateRate, 0.015, accuracy: 1e-12)
    XCTAssertEqual(emulation.send.delay, .milliseconds(1500))
    XCTAssertEqual(emulation.send.jitter, .microseconds(250))
    XCTAssertEqual(emulation.send.rateBitsPerSecond, 800_000)
    XCTAssertEqual(emulation.send.queueLimit, .bytes(64_000))
    XCTAssertEqual(emulation.receive.rateBitsPerSecond, 2_000_000_000)
    XCTAssertEqual(emulation.receive.queueLimit, .duration(.milliseconds(100)))
    XCTAssertEqual(
      emulation.receive.loss,
      .gilbertElliott(
        GilbertElliottLoss(goodToBad: 0.05, badToGood: 0.2, lossInGood: 0.01, lossInBad: 0.9)))
    XCTAssertEqual(try NetworkEmulation(spec: "queue=2kib").send.queueLimit, .bytes(2048))
  }

  func testEmptyNoneAndOffAreTheIdealNetwork() throws {
    for spec in ["", "  ", "none", "OFF"] {
      XCTAssertTrue(try NetworkEmulation(spec: spec).isIdeal, spec)
    }
    XCTAssertTrue(try NetworkEmulation(spec: "loss=0%").isIdeal)
  }

  func testTheSpecOfAnEmulationParsesBackToIt() throws {
    for spec in [
      "loss=5%,delay=40ms,jitter=15ms,rate=1.5mbit",
      "delay=20ms;up:loss=2%;down:loss=20%,burst=5;seed=3",
      "send:ge=5%/20%/1%/90%,reorder=3%,duplicate=1%,rate=64kbit,queue=3000b",
      "none",
    ] {
      let emulation = try NetworkEmulation(spec: spec)
      let again = try NetworkEmulation(spec: emulation.spec)
      XCTAssertEqual(again.send, emulation.send, "\(spec) → \(emulation.spec)")
      XCTAssertEqual(again.receive, emulation.receive, "\(spec) → \(emulation.spec)")
      XCTAssertEqual(again.seed, emulation.seed)
    }
    XCTAssertEqual(
      try NetworkEmulation(spec: "loss=5%,delay=40ms,rate=1.5mbit").spec,
      "loss=5%,delay=40ms,rate=1500kbit,queue=200ms")
    XCTAssertEqual(
      try NetworkEmulation(spec: "up:loss=20%,burst=5").spec, "send:loss=20%,burst=5")
  }

  func testBadStringsAreRefusedWithTheOffendingToken() {
    let cases: [(String, String, NetworkEmulationSpecError.Reason)] = [
      ("loss=5%,latency=40ms", "latency=40ms", .unknownKey),
      ("delay=-5ms", "delay=-5ms", .negative),
      ("loss=150%", "loss=150%", .outOfRange("0...100 %")),
      ("delay=40", "delay=40", .missingUnit(expected: "us, ms or s")),
      ("loss=5", "loss=5", .missingUnit(expected: "%")),
      (
        "rate=1.5", "rate=1.5",
        .missingUnit(expected: "bit, kbit, mbit, gbit, bps, kbps, mbps or gbps")
      ),
      ("jitter=5 minutes", "jitter=5 minutes", .unknownUnit(expected: "us, ms or s")),
      ("queue=5", "queue=5", .missingUnit(expected: "us, ms, s, b, kb, mb, kib or mib")),
      ("loss=abc%", "loss=abc%", .notANumber),
      ("sideways:loss=5%", "sideways", .unknownDirection),
      ("loss=5%, send:delay=9ms", "send:delay=9ms", .directionInsideSection),
      ("delay", "delay", .missingValue),
      ("wobble", "wobble", .unknownKey),
      ("burst=4", "burst=4", .burstWithoutLoss),
      ("loss=75%,burst=2", "burst=2", .burstTooShort(minimum: 3)),
      ("loss=5%,burst=0.5", "burst=0.5", .outOfRange("≥ 1 datagram")),
      ("rate=1bit", "rate=1bit", .outOfRange("8 bit/s...100 gbit/s")),
      ("ge=5%", "ge=5%", .outOfRange("P%/R% or P%/R%/G%/B%")),
      ("seed=-1", "seed=-1", .notANumber),
    ]
    for (spec, token, reason) in cases {
      XCTAssertThrowsError(try NetworkEmulation(spec: spec), spec) { error in
        XCTAssertEqual(
          error as? NetworkEmulationSpecError,
          NetworkEmulationSpecError(token: token, reason: reason), spec)
      }
    }
    let message = NetworkEmulationSpecError(token: "latency=40ms", reason: .unknownKey)
      .description
    XCTAssertTrue(message.hasPrefix("'latency=40ms': unknown key (known: loss, burst"), message)
  }
}

import Foundation
import WCSTransport
import XCTest

@testable import WCSApi2

/// Connection quality (wcs-protocol.md §4.7): classification thresholds, smoothing, wiring.
final class ConnectionQualityTests: XCTestCase {
  func testClassificationThresholds() {
    typealias E = ConnectionQualityEstimator
    XCTAssertEqual(E.classify(clientFiltered: 0, serverFiltered: 0), .fpwcsConnectionQualityUnknown)
    XCTAssertEqual(
      E.classify(clientFiltered: 1_000_000, serverFiltered: 1_100_000),
      .fpwcsConnectionQualityPerfect)
    XCTAssertEqual(
      E.classify(clientFiltered: 1_000_000, serverFiltered: 1_300_000), .fpwcsConnectionQualityGood)
    XCTAssertEqual(
      E.classify(clientFiltered: 1_000_000, serverFiltered: 1_600_000), .fpwcsConnectionQualityBad)
    XCTAssertEqual(
      E.classify(clientFiltered: 40_000, serverFiltered: 90_000), .fpwcsConnectionQualityPerfect)
    XCTAssertEqual(
      E.classify(clientFiltered: 30_000, serverFiltered: 90_000), .fpwcsConnectionQualityBad)
  }

  func testKalmanSmoothingFollowsAStepGradually() {
    var filter = ScalarKalmanFilter()
    XCTAssertEqual(filter.update(100), 100)
    let first = filter.update(200)
    XCTAssertGreaterThan(first, 100)
    XCTAssertLessThan(first, 200)
    var last = first
    for _ in 0..<50 { last = filter.update(200) }
    XCTAssertEqual(last, 200, accuracy: 0.5)
  }

  func testServerVideoRateDrivesTheCallback() throws {
    let h = try Harness()
    h.establish()
    let (stream, _) = try h.makeStream("q")
    let results = Locked<[String]>([])
    stream.enableConnectionQualityCalculation(true)
    WCSStream(stream).onConnectionQualityCallback { quality, client, server in
      results.withLock { $0.append("\(quality.rawValue) \(Int(client)) \(Int(server))") }
    }
    try stream.publish()
    h.settle()
    let id = JSONValue.string(stream.getStreamID())
    // The fake connection reports 812 344 bit/s sent.
    h.push("inboundVideoRate", [["mediaSessionId": id, "videoRate": 812344]])
    h.push("inboundVideoRate", [["mediaSessionId": id, "videoRate": 100000]])
    let perfect = kFPWCSConnectionQuality.fpwcsConnectionQualityPerfect.rawValue
    let bad = kFPWCSConnectionQuality.fpwcsConnectionQualityBad.rawValue
    XCTAssertEqual(results.value.first, "\(perfect) 812344 812344")
    XCTAssertEqual(results.value.count, 2)
    XCTAssertTrue(results.value[1].hasPrefix("\(bad) 812344 "), results.value[1])
    stream.enableConnectionQualityCalculation(false)
    h.push("inboundVideoRate", [["mediaSessionId": id, "videoRate": 100000]])
    XCTAssertEqual(results.value.count, 2)
  }
}

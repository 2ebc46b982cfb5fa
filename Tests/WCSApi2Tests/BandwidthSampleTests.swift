import Foundation
import WCSMedia
import WCSTransport
import XCTest

@testable import WCSApi2

/// Stats of the media connection drive `getNetworkBandwidth`/`getRemoteBitrate`, and a low
/// estimate raises NOT_ENOUGH_BANDWIDTH once (Sans-I/O core, virtual microseconds).
final class BandwidthSampleTests: XCTestCase {
  private func core(published: Bool, minBitrate: Int) -> SessionCore {
    let core = SessionCore(config: SessionConnectionConfig())
    core.addStream(id: "s1", name: "cam")
    core.streams["s1"]?.published = published
    core.streams["s1"]?.status =
      published ? .fpwcsStreamStatusPublishing : .fpwcsStreamStatusPlaying
    core.streams["s1"]?.request = StreamRequest(
      name: "cam", published: published, hasAudio: true, hasVideo: true, record: false,
      rtmpUrl: nil, custom: nil, transport: "UDP", cvoExtension: false, constraints: .null,
      bitrate: 0, minBitrate: minBitrate, maxBitrate: 0, width: 0, height: 0, quality: 0,
      stripCodecs: [])
    return core
  }

  private func statuses(_ effects: [SessionEffect]) -> [kFPWCSStreamStatus] {
    effects.compactMap { effect in
      if case .streamStatus(let status, _) = effect { status } else { nil }
    }
  }

  func testPublisherEstimateBecomesNetworkBandwidth() {
    let core = core(published: true, minBitrate: 0)
    core.streams["s1"]?.remoteBitrate = 640_000  // the server's videoRate
    let effects = core.bandwidthSample(
      streamId: "s1",
      stats: MediaConnectionStats(
        currentVideoBitrate: 500_000, availableOutgoingBitrate: 1_800_000),
      now: 0)
    XCTAssertEqual(core.streams["s1"]?.networkBandwidth, 1_800_000)
    XCTAssertEqual(core.streams["s1"]?.remoteBitrate, 640_000, "server-reported, not local")
    guard case .streamUpdated(let state) = effects.first else { return XCTFail("\(effects)") }
    XCTAssertEqual(state.networkBandwidth, 1_800_000)
  }

  func testPlayerReceiveBitrateBecomesRemoteBitrate() {
    let core = core(published: false, minBitrate: 0)
    _ = core.bandwidthSample(
      streamId: "s1", stats: MediaConnectionStats(currentVideoBitrate: 812_344), now: 0)
    XCTAssertEqual(core.streams["s1"]?.remoteBitrate, 812_344)
    XCTAssertTrue(
      core.bandwidthSample(
        streamId: "s1", stats: MediaConnectionStats(currentVideoBitrate: 812_344), now: 1
      ).isEmpty, "no change, no update")
  }

  /// Min bitrate 500 kbit/s, estimate 300 kbit/s sampled every second: the event comes once,
  /// at 3 s, with status still PUBLISHING; recovery and a new low spell raise it again.
  func testLowEstimateForThreeSecondsRaisesNotEnoughBandwidthOnce() {
    let core = core(published: true, minBitrate: 500)
    let low = MediaConnectionStats(availableOutgoingBitrate: 300_000)
    var raised: [Int] = []
    for second in 0...6 {
      let effects = core.bandwidthSample(streamId: "s1", stats: low, now: Int64(second) * 1_000_000)
      if statuses(effects) == [.fpwcsStreamStatusNotEnoughtBandwidth] { raised.append(second) }
      if case .streamStatus(_, let state) = effects.first {
        XCTAssertEqual(state.status, .fpwcsStreamStatusPublishing)
        XCTAssertEqual(state.info, "500000/300000")
        XCTAssertEqual(state.networkBandwidth, 300_000)
      }
    }
    XCTAssertEqual(raised, [3])
    let good = MediaConnectionStats(availableOutgoingBitrate: 900_000)
    XCTAssertEqual(statuses(core.bandwidthSample(streamId: "s1", stats: good, now: 7_000_000)), [])
    for second in 8...11 {
      let effects = core.bandwidthSample(streamId: "s1", stats: low, now: Int64(second) * 1_000_000)
      if !statuses(effects).isEmpty { raised.append(second) }
    }
    XCTAssertEqual(raised, [3, 11])
  }
}

/// The session samples its connections' stats (the fake reports 812 344 bps received/sent and
/// a 2 Mbit/s estimate) into the stream getters.
final class BandwidthGetterTests: XCTestCase {
  private func waitFor(_ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(10)
    while !condition(), Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
    return condition()
  }

  func testStatsFlowToTheGetters() throws {
    let h = try Harness { $0.bandwidthSampleInterval = 0.05 }
    h.establish()
    let (publisher, _) = try h.makeStream("cam")
    try publisher.publish()
    h.settle()
    h.answer(publisher)
    h.streamStatus(publisher, "PUBLISHING")
    let (player, _) = try h.makeStream("cam")
    try player.play()
    h.settle()
    h.answer(player)
    h.streamStatus(player, "PLAYING")
    XCTAssertTrue(waitFor { publisher.getNetworkBandwidth() == 2_000_000 })
    XCTAssertEqual(publisher.getRemoteBitrate(), 0, "a publisher's comes from the server")
    XCTAssertTrue(waitFor { player.getRemoteBitrate() == 812_344 })
  }
}

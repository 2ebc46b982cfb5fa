import WCSTransport
import XCTest

@testable import WCSLocalServer

/// `rtmpUrl` of `publishStream` (issue 28): which URLs the core hands to the media engine (the
/// pull host policy, `pullSourceHosts`), how a refusal reaches the publisher while its stream
/// goes on, and the bounded queue between the relay and a push thread.
final class RTMPPushPolicyTests: XCTestCase {
  func testOnlyRTMPURLsOfAllowedHostsArePushedTo() {
    let loopback: Set<String> = ["127.0.0.1", "localhost", "::1"]
    XCTAssertNil(RTMPPushURL.refusal("rtmp://127.0.0.1:1935/live/a", allowedHosts: loopback))
    XCTAssertNil(RTMPPushURL.refusal("RTMPS://LocalHost/live/a", allowedHosts: loopback))
    XCTAssertEqual(
      RTMPPushURL.refusal("rtmp://10.1.2.3/live/a", allowedHosts: loopback),
      "Pushing to host 10.1.2.3 is not allowed (pullSourceHosts)")
    XCTAssertNil(RTMPPushURL.refusal("rtmp://10.1.2.3/live/a", allowedHosts: nil))
    for bad in [
      "http://127.0.0.1/live", "rtmp:///live/a", "rtmp://127.0.0.1/live a",
      "rtmp://127.0.0.1/\u{7}", "rtmp://127.0.0.1/" + String(repeating: "x", count: 2048),
    ] {
      XCTAssertEqual(RTMPPushURL.refusal(bad, allowedHosts: nil), "Bad URI", bad)
    }
  }

  private func published(rtmpUrl: String) -> (ServerHarness, [WCSMessage]) {
    let server = ServerHarness()
    server.connect(1)
    _ = server.take(1)
    var object =
      ServerHarness.streamObject(.string("pub-1"), name: "s", published: true)
      .objectValue ?? [:]
    object["rtmpUrl"] = .string(rtmpUrl)
    server.receive(1, "publishStream", .object(object))
    return (server, server.take(1))
  }

  private func publisherRequest(_ server: ServerHarness) -> LocalServerPublisherRequest? {
    for case .createPublisher(let request) in server.engine.requests { return request }
    return nil
  }

  func testAnAllowedRTMPURLGoesToTheEngineWithThePublisher() {
    let (server, _) = published(rtmpUrl: "rtmp://127.0.0.1:1935/live/out")
    XCTAssertEqual(publisherRequest(server)?.rtmpUrl, "rtmp://127.0.0.1:1935/live/out")
  }

  func testARefusedRTMPURLIsToldToThePublisherWhoseStreamGoesOn() throws {
    let (server, messages) = published(rtmpUrl: "rtmp://203.0.113.9/live/out")
    let request = try XCTUnwrap(publisherRequest(server), "the stream is still published")
    XCTAssertNil(request.rtmpUrl)
    let event = try XCTUnwrap(messages.first { $0.name == "notifyStreamEvent" }?.argument)
    XCTAssertEqual(event["mediaSessionId"]?.stringValue, "pub-1")
    XCTAssertEqual(event["type"]?.stringValue, "rtmpStreamStatus")
    XCTAssertEqual(event["payload"]?["status"]?.stringValue, "FAILED")
    XCTAssertEqual(event["payload"]?["rtmpUrl"]?.stringValue, "rtmp://203.0.113.9/live/out")
    XCTAssertEqual(
      event["payload"]?["info"]?.stringValue,
      "Pushing to host 203.0.113.9 is not allowed (pullSourceHosts)")
    XCTAssertEqual(event["payload"]?["willRetry"]?.boolValue, false)
  }

  func testEngineReportsReachThePublisherAsRTMPStreamStatusEvents() throws {
    let (server, _) = published(rtmpUrl: "rtmp://127.0.0.1/live/out")
    server.run(
      server.core.mediaEvent(
        .rtmpPushStatus(
          mediaSessionId: "pub-1",
          LocalServerRTMPPushStatus(
            rtmpUrl: "rtmp://127.0.0.1/live/out", status: "FAILED",
            info: WCSStreamInfo.failedByRTMPWriterError, detail: "avio_open2 failed",
            willRetry: true)), now: server.now))
    let event = try XCTUnwrap(server.take(1).first { $0.name == "notifyStreamEvent" }?.argument)
    XCTAssertEqual(event["payload"]?["info"]?.stringValue, "Failed by RTMP writer error")
    XCTAssertEqual(event["payload"]?["willRetry"]?.boolValue, true)
    XCTAssertNil(event["payload"]?["detail"], "FFmpeg's words stay in the server log")
  }

  func testTheQueueDropsAndCountsPastItsCapacityAndHandsOutEverythingQueued() {
    let queue = RTMPPushQueue(capacity: 3)
    let packet = RTMPPushPacket(
      kind: .audio, sequenceNumber: 1, timestamp: 960, marker: false, payload: [1], arrival: 0)
    XCTAssertEqual((0..<5).map { _ in queue.push(packet) }, [true, true, true, false, false])
    let taken = queue.take(timeout: .zero)
    XCTAssertEqual(taken.packets.count, 3)
    XCTAssertEqual(taken.dropped, 2)
    XCTAssertEqual(queue.take(timeout: .milliseconds(10)).packets.count, 0)
    queue.stop()
    XCTAssertFalse(queue.push(packet), "nothing is queued for a stopped push")
  }
}

import Foundation
import WCSLocalServer
import WCSMedia
import XCTest

/// `WCSLocalServer.Configuration.networkEmulation` (`wcs-local-server --network`) reaches the
/// default relay engine's connections: a publisher's ICE, DTLS and media pass its emulators.
final class RelayNetworkEmulationTests: XCTestCase {
  func testTheServersEmulationAppliesToTheRelaysConnections() throws {
    let records = try makeTemporaryDirectory("wcs-relay-netem")
    defer { try? FileManager.default.removeItem(at: records) }
    let logs = Collector<String>()
    var configuration = WCSLocalServer.Configuration()
    configuration.wsPort = 0
    configuration.httpPort = 0
    configuration.recordsDirectory = records.path
    configuration.logSink = { logs.append($0) }
    let emulation = try NetworkEmulation(spec: "send:delay=15ms;receive:duplicate=100%;seed=5")
    configuration.networkEmulation = emulation
    let server = try WCSLocalServer.start(configuration)
    defer { server.stop() }
    let loop = EventLoop(label: "relay-netem-client")
    defer { loop.shutdown() }

    let publisherPC = PeerConnection(configuration: .loopback, loop: loop)
    let offer = try loop.submit {
      try publisherPC.createOffer(
        audio: .init(ssrc: 0x1111_1111, trackId: "a", includeG711: false), video: nil,
        mode: .publish)
    }
    let client = TestClient(server.wsURL)
    client.establish()
    client.send(
      "publishStream",
      LocalServerRelayTests.stream("pub-netem", name: "netem", published: true, sdp: offer))
    let answer = try XCTUnwrap(client.waitFor { $0.name == "setRemoteSDP" }?[1]?.stringValue)
    try loop.submit { try publisherPC.setRemoteDescription(answer: answer) }
    XCTAssertNotNil(client.waitForStatus("pub-netem", "PUBLISHING"))

    let statistics = emulation.counters.statistics
    // What the relay sent (its STUN responses, DTLS flights) was held 15 ms; what it received
    // came twice, which ICE and DTLS take in their stride.
    XCTAssertGreaterThan(statistics.send.datagrams, 0)
    XCTAssertEqual(statistics.send.delayed, statistics.send.datagrams)
    XCTAssertEqual(statistics.send.dropped, 0)
    XCTAssertGreaterThan(statistics.receive.datagrams, 0)
    XCTAssertEqual(statistics.receive.duplicated, statistics.receive.datagrams)
    XCTAssertEqual(statistics.receive.delayed, 0)
    loop.submit { publisherPC.close() }
    client.closeAndWait()
  }
}

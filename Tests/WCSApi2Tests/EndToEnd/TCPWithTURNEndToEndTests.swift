import Foundation
import WCSLocalServer
import WCSMedia
import XCTest

@testable import WCSApi2

/// `transport = .TCP` with a TURN server reached over TCP, from a client whose UDP is dropped
/// (nftables, in a namespace): the offer has active TCP host candidates and, once coturn
/// allocated, a relayed one. Against the local server in ICE-TCP mode (passive TCP candidates
/// only) the TCP host pair wins: the relayed candidate is UDP and pairs with no TCP candidate,
/// and a host pair outranks a relayed one anyway. Against the server in its UDP mode the TCP
/// host candidate has nothing to pair with, so the relay (TCP to coturn, UDP on to the server)
/// carries the media. Both play the camera's pictures.
extension ReachEndToEndTests {
  func testTCPTransportWithTURNOverTCPPicksICETCPOrTheRelayAsTheServerOffers() throws {
    let fields = try runInNamespace("testTCPTransportWithTURNInsideNamespace", blocked: true)
    print("transport TCP with TURN/TCP, UDP blocked: \(fields.joined(separator: " "))")
    XCTAssertEqual(fields.first, "ok", fields.joined(separator: " "))
  }

  /// The inner part of the test above; skipped when run directly.
  func testTCPTransportWithTURNInsideNamespace() throws {
    try requireNamespace(
      of: "testTCPTransportWithTURNOverTCPPicksICETCPOrTheRelayAsTheServerOffers")
    let turn = try CoturnProcess(withStreams: true)
    defer { turn.stop() }
    let backend = NativeMediaBackend(
      configuration: .init(
        peerConnection: PeerConnectionConfiguration(
          allowLoopback: true, hostAddresses: [.loopbackV4], portRange: Self.clientPorts),
        systemDevices: nil))
    var figures: [String] = []
    for (iceTCP, localType, remoteProtocol) in [(true, "host", "tcp"), (false, "relay", "udp")] {
      let server = try WCSLocalServer.startForTest("reach-tcp-turn") {
        $0.signaling.iceTCPTransport = iceTCP
      }
      defer { server.stop() }
      let session = try session(server, backend: backend) { options in
        options.iceServers = [
          FPWCSApi2IceServer(
            url: "turn:127.0.0.1:\(turn.port)?transport=tcp", username: "user",
            credential: "secret")
        ]
      }
      defer { session.disconnect() }
      let name = "tcp-turn-\(localType)"
      let publishOptions = cameraOptions(name)
      publishOptions.transport = .fpwcsTransportTCP
      let publisher = try session.createStream(publishOptions)
      try publisher.publish()
      wait("publishing (\(localType))") { publisher.getStatus() == .fpwcsStreamStatusPublishing }
      let pictures = Locked<[I420Image]>([])
      let playOptions = collectingOptions(name, into: pictures)
      playOptions.transport = .fpwcsTransportTCP
      let player = try session.createStream(playOptions)
      try player.play()
      wait("ten pictures (\(localType))") { pictures.withLock { $0.count } >= 10 }
      try assertCameraPictures(pictures.withLock { $0 }, width: 320, height: 240)
      for stream in [publisher, player] {
        let ice = try XCTUnwrap(stats(stream)?.ice)
        XCTAssertEqual(ice.localCandidate?.candidateType, localType, "ICE-TCP server: \(iceTCP)")
        XCTAssertEqual(ice.localCandidate?.transportProtocol, localType == "host" ? "tcp" : "udp")
        XCTAssertEqual(ice.localCandidate?.relayProtocol, localType == "host" ? nil : "tcp")
        XCTAssertEqual(ice.remoteCandidate?.transportProtocol, remoteProtocol)
        XCTAssertEqual(ice.notes, [])
      }
      figures.append("\(localType)=\(pictures.withLock { $0.count })pictures")
      try player.stop()
      try publisher.stop()
    }
    print(
      "REACH-RESULT \(testRun?.failureCount == 0 ? "ok" : "failed") \(figures.joined(separator: ","))"
    )
  }
}

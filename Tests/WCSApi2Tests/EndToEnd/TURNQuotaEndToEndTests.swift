import Foundation
import WCSLocalServer
import WCSMedia
import XCTest

@testable import WCSApi2

/// TURN Allocation Quota Reached (RFC 8656 §6.4, error 486): coturn with `--user-quota=1`
/// holds one allocation for the user; a second allocation through it is refused. With only that
/// server the stream fails with a reason naming the 486; with a second server beside it, the
/// allocation there is used instead and the pictures arrive.
extension ReachEndToEndTests {
  /// A backend on 127.0.0.1 only: one UDP socket, so one TURN allocation per server and stream.
  private func loopbackBackend() -> NativeMediaBackend {
    NativeMediaBackend(
      configuration: .init(
        peerConnection: PeerConnectionConfiguration(
          allowLoopback: true, hostAddresses: [.loopbackV4]),
        systemDevices: nil))
  }

  func testAllocationQuotaReachedFailsNamingThe486OrFallsBackToTheOtherServer() throws {
    // Relay port ranges apart, so the relayed candidate tells which server holds it.
    let quota = try CoturnProcess(
      extraArguments: ["--user-quota=1", "--min-port=49300", "--max-port=49399"])
    defer { quota.stop() }
    let other = try CoturnProcess(extraArguments: ["--min-port=49500", "--max-port=49599"])
    defer { other.stop() }
    let server = try WCSLocalServer.startForTest("turn-quota")
    defer { server.stop() }
    func relayed(through turns: [CoturnProcess]) throws -> FPWCSApi2Session {
      try session(server, backend: loopbackBackend()) { options in
        options.iceServers = turns.map {
          FPWCSApi2IceServer(
            url: "turn:127.0.0.1:\($0.port)", username: "user", credential: "secret")
        }
        options.iceTransportPolicy = .relay
      }
    }

    // The user's one allocation on the quota server.
    let holding = try relayed(through: [quota])
    defer { holding.disconnect() }
    let first = try holding.createStream(cameraOptions("quota-first"))
    try first.publish()
    wait("the first publisher holds the quota") {
      first.getStatus() == .fpwcsStreamStatusPublishing
    }
    let firstPort = try XCTUnwrap(stats(first)?.ice?.localCandidate?.port)
    XCTAssertTrue((49300...49399).contains(firstPort), "relayed on the quota server: \(firstPort)")

    // Only the quota server: 486, said in the failure.
    let refused = try relayed(through: [quota])
    defer { refused.disconnect() }
    let second = try refused.createStream(cameraOptions("quota-second"))
    let start = Date()
    try second.publish()
    wait("the second publisher failed", timeout: 40) {
      second.getStatus() == .fpwcsStreamStatusFailed
    }
    let info = try XCTUnwrap(second.getInfo())
    print(
      "486 → FAILED after \(String(format: "%.2f", Date().timeIntervalSince(start))) s: \(info)"
    )
    XCTAssertTrue(info.hasPrefix("Failed by ICE timeout: no ICE candidate pair succeeded"), info)
    XCTAssertTrue(
      info.contains(
        "no TURN allocation succeeded (127.0.0.1:\(quota.port) udp: allocate: 486"), info)

    // The quota server first, another beside it: that one's allocation carries the media.
    let fallback = try relayed(through: [quota, other])
    defer { fallback.disconnect() }
    let publisher = try fallback.createStream(cameraOptions("quota-fallback"))
    try publisher.publish()
    wait("publishing through the other server") {
      publisher.getStatus() == .fpwcsStreamStatusPublishing
    }
    let pictures = Locked<[I420Image]>([])
    let player = try fallback.createStream(
      collectingOptions("quota-fallback", into: pictures))
    try player.play()
    wait("ten pictures through the other server") { pictures.withLock { $0.count } >= 10 }
    try assertCameraPictures(pictures.withLock { $0 }, width: 320, height: 240)
    for stream in [publisher, player] {
      let local = try XCTUnwrap(stats(stream)?.ice?.localCandidate)
      XCTAssertEqual(local.candidateType, "relay")
      XCTAssertTrue(
        (49500...49599).contains(local.port), "relayed on the other server: \(local.port)")
    }
    XCTAssertEqual(first.getStatus(), .fpwcsStreamStatusPublishing)
  }
}

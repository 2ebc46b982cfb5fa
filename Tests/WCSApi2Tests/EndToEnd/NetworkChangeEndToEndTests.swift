import Foundation
import WCSLocalServer
import WCSMedia
import XCTest

@testable import WCSApi2

/// ICE restart on a network change seen through rtnetlink (no polling), in a network namespace
/// the test makes: 127.0.0.1/32 on `lo` for the servers, the player's addresses on a veth
/// interface (`wcsnet0`, loopback-range /32s, so nothing can leave the namespace). An address
/// added while connected changes nothing; removing the address in use restarts ICE at once on
/// the one there is now; while ICE is disconnected (nftables drops what the address in use
/// sends) a new address restarts it without waiting for consent to expire. After each change
/// the pictures are the virtual camera's again, and the status callbacks are PENDING, then
/// one PLAYING per connection, never FAILED.
extension ReachEndToEndTests {
  private static let interface = "wcsnet0"

  func testPlayerRestartsICEWhenItsAddressGoesOrANewOneComesWhileDisconnected() throws {
    let fields = try runInNamespace(
      "testPlayerNetworkChangeInsideNamespace", blocked: false,
      setup: "ip addr del 127.0.0.1/8 dev lo && ip addr add 127.0.0.1/32 dev lo"
        + " && ip link add \(Self.interface) type veth peer name wcsnet1"
        + " && ip link set wcsnet1 up && ip link set \(Self.interface) up"
        + " && ip addr add 127.0.1.1/32 dev \(Self.interface)")
    print("network change → pictures again: \(fields.joined(separator: " "))")
    let resumed = try XCTUnwrap(Double(fields[0]), fields.joined(separator: " "))
    XCTAssertLessThan(resumed, 3, "resumes within 3 s of the address going away")
  }

  /// Runs `ip` with `arguments` (inside the namespace).
  private func ip(_ arguments: String) throws {
    let process = Process()
    process.executableURL = URL(
      fileURLWithPath: try XCTUnwrap(
        ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip"].first(
          where: FileManager.default.isExecutableFile)))
    process.arguments = arguments.split(separator: " ").map(String.init)
    try process.run()
    process.waitUntilExit()
    XCTAssertEqual(process.terminationStatus, 0, "ip \(arguments)")
  }

  /// The inner part of the test above; skipped when run directly.
  func testPlayerNetworkChangeInsideNamespace() throws {
    try requireNamespace(
      of: "testPlayerRestartsICEWhenItsAddressGoesOrANewOneComesWhileDisconnected")
    let server = try WCSLocalServer.startForTest("reach-netchange")
    defer { server.stop() }
    let publishing = try session(
      server,
      backend: NativeMediaBackend(
        configuration: .init(
          peerConnection: PeerConnectionConfiguration(
            allowLoopback: true, hostAddresses: [.loopbackV4]),
          systemDevices: nil)))
    defer { publishing.disconnect() }
    // Host candidates from the interface's addresses as they are at each (re)start.
    var player = PeerConnectionConfiguration(allowLoopback: true)
    player.hostInterfaces = [Self.interface]
    player.iceConsentInterval = .milliseconds(250)
    player.iceDisconnectedTimeout = .milliseconds(750)
    // Disconnected stays disconnected: only the new address may restart it.
    player.iceConsentTimeout = .seconds(30)
    let playing = try session(
      server,
      backend: NativeMediaBackend(configuration: .init(peerConnection: player, systemDevices: nil))
    )
    defer { playing.disconnect() }

    let publisher = try publishing.createStream(cameraOptions("netchange"))
    try publisher.publish()
    wait("publishing") { publisher.getStatus() == .fpwcsStreamStatusPublishing }
    let publisherId = publisher.getStreamID()
    let pictures = Locked<[I420Image]>([])
    let stream = try playing.createStream(collectingOptions("netchange", into: pictures))
    let recorder = StatusRecorder(stream)
    try stream.play()
    wait("ten pictures") { pictures.withLock { $0.count } >= 10 }
    XCTAssertEqual(stats(stream)?.ice?.localCandidate?.address, "127.0.1.1")
    let firstId = stream.getStreamID()

    /// Waits for the restarted connection (a new id) to deliver ten more camera pictures and
    /// returns the seconds since `start`.
    func resumed(after previous: String, since start: Date, on address: String) throws -> Double {
      wait("ICE restarted", timeout: 5) { stream.getStreamID() != previous }
      let before = pictures.withLock { $0.count }
      wait("ten pictures on the restarted connection", timeout: 15) {
        stream.getConnectionState() == .connected && pictures.withLock { $0.count } >= before + 10
      }
      let seconds = Date().timeIntervalSince(start)
      try assertCameraPictures(
        Array(pictures.withLock { $0 }[before...]), width: 320, height: 240)
      XCTAssertEqual(stats(stream)?.ice?.localCandidate?.address, address)
      return seconds
    }

    // A second address while connected: nothing to do.
    try ip("addr add 127.0.2.1/32 dev \(Self.interface)")
    Thread.sleep(forTimeInterval: 0.5)
    XCTAssertEqual(stream.getStreamID(), firstId, "an address added while connected")
    // The address in use goes away: restarted on the one left.
    try ip("addr del 127.0.1.1/32 dev \(Self.interface)")
    let removed = try resumed(after: firstId, since: Date(), on: "127.0.2.1")
    let secondId = stream.getStreamID()

    // The path dies without an address change: ICE goes disconnected and stays so.
    try nft("add rule inet reach o ip saddr 127.0.2.1 drop")
    wait("disconnected", timeout: 5) { stream.getConnectionState() == .connecting }
    XCTAssertEqual(stream.getStreamID(), secondId)
    try ip("addr add 127.0.3.1/32 dev \(Self.interface)")
    let appeared = try resumed(after: secondId, since: Date(), on: "127.0.3.1")

    playing.callbackQueue.sync {}
    XCTAssertEqual(
      recorder.all,
      [
        .fpwcsStreamStatusPending, .fpwcsStreamStatusPlaying, .fpwcsStreamStatusPlaying,
        .fpwcsStreamStatusPlaying,
      ], "no FAILED; one PLAYING per connection")
    XCTAssertEqual(publisher.getStatus(), .fpwcsStreamStatusPublishing)
    XCTAssertEqual(publisher.getStreamID(), publisherId, "the publisher's address did not change")
    print(
      "REACH-RESULT \(String(format: "%.2f", removed)) removed=\(String(format: "%.2f", removed))s"
        + " appeared=\(String(format: "%.2f", appeared))s statuses=\(recorder.all.map(\.rawValue))"
    )
  }
}

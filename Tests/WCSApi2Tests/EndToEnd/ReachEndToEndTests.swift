import Foundation
import WCSLocalServer
import WCSMedia
import XCTest

@testable import WCSApi2

/// Reaching the local server through what the session options configure: a TURN relay given in
/// `iceServers` with `iceTransportPolicy = .relay` (coturn on 127.0.0.1, long-term
/// credentials), its use visible in `getStats`; and a client whose UDP is dropped by nftables
/// in a network namespace, which fails with a reason that says so.
final class ReachEndToEndTests: XCTestCase {
  func session(
    _ server: WCSLocalServer, backend: NativeMediaBackend,
    configure: (FPWCSApi2SessionOptions) -> Void = { _ in }
  ) throws -> FPWCSApi2Session {
    let options = FPWCSApi2SessionOptions()
    options.urlServer = server.wsURL
    options.mediaBackend = backend
    options.bandwidthSampleInterval = 0
    configure(options)
    let session = try FPWCSApi2.createSession(options)
    session.connect()
    wait("session established") { session.getStatus() == .fpwcsSessionStatusEstablished }
    return session
  }

  func streamOptions(_ name: String) -> FPWCSApi2StreamOptions {
    let options = FPWCSApi2StreamOptions()
    options.name = name
    let constraints = FPWCSApi2MediaConstraints(audio: false, video: true)
    constraints?.video?.maxWidth = 320
    constraints?.video?.maxHeight = 240
    options.constraints = constraints
    return options
  }

  /// Stream options for the virtual camera at exactly 320x240, whose played pictures
  /// `assertCameraPictures` can compare with the source.
  func cameraOptions(_ name: String) -> FPWCSApi2StreamOptions {
    let options = streamOptions(name)
    options.constraints?.video?.deviceID = "virtual:camera"
    options.constraints?.video?.minWidth = 320
    options.constraints?.video?.minHeight = 240
    return options
  }

  /// Player options whose display collects the decoded pictures into `pictures`.
  func collectingOptions(_ name: String, into pictures: Locked<[I420Image]>)
    -> FPWCSApi2StreamOptions
  {
    let options = streamOptions(name)
    options.display = VideoFrameCallbackRenderer { frame in
      guard let image = I420Image(frame) else { return }
      pictures.withLock { $0.append(image) }
    }
    return options
  }

  func testRelayPolicyPublishesAndPlaysThroughTURNAndStatsShowTheRelay() throws {
    let turn = try CoturnProcess()
    defer { turn.stop() }
    let server = try WCSLocalServer.startForTest("reach")
    defer { server.stop() }
    let backend = NativeMediaBackend(
      configuration: NativeMediaBackend.Configuration(systemDevices: nil))
    let session = try session(server, backend: backend) { options in
      options.iceServers = [
        FPWCSApi2IceServer(
          url: "turn:127.0.0.1:\(turn.port)", username: "user", credential: "secret")
      ]
      options.iceTransportPolicy = .relay
    }
    defer { session.disconnect() }

    let publisher = try session.createStream(streamOptions("relayed"))
    try publisher.publish()
    wait("publishing") { publisher.getStatus() == .fpwcsStreamStatusPublishing }
    let player = try session.createStream(streamOptions("relayed"))
    try player.play()
    wait("playing") { player.getStatus() == .fpwcsStreamStatusPlaying }
    wait("frames decoded through the relay") {
      (stats(player)?.detailed?.framesDecoded ?? 0) >= 10
    }

    for stream in [publisher, player] {
      let ice = try XCTUnwrap(stats(stream)?.ice)
      XCTAssertEqual(ice.transportPolicy, .relay)
      let local = try XCTUnwrap(ice.localCandidate)
      XCTAssertEqual(local.candidateType, "relay")
      XCTAssertEqual(local.transportProtocol, "udp")
      XCTAssertEqual(local.relayProtocol, "udp")
      XCTAssertEqual(local.address, "127.0.0.1")
      let remote = try XCTUnwrap(ice.remoteCandidate)
      XCTAssertEqual(remote.candidateType, "host")
      XCTAssertEqual(remote.address, "127.0.0.1")
      XCTAssertNil(remote.relayProtocol)
      XCTAssertEqual(ice.notes, [])
    }
  }

  // MARK: UDP blocked

  static let namespaceVariable = "WCS_REACH_UDP_BLOCKED"
  /// The client's media sockets bind here; the namespace drops UDP sent from these ports.
  static let clientPorts: ClosedRange<UInt16> = 20_000...20_099

  private static var nft: String? {
    ["/usr/sbin/nft", "/sbin/nft"].first(where: FileManager.default.isExecutableFile)
  }

  /// Runs the test `inner` of this class in a fresh network namespace (only `lo`) with an
  /// nftables output chain `inet reach o`, holding `udp sport <clientPorts> drop` when
  /// `blocked`, and `setup` (shell commands) run after that; returns the fields of its
  /// `REACH-RESULT` line. Skips unless this process may create namespaces and nft is
  /// installed.
  func runInNamespace(_ inner: String, blocked: Bool, setup: String = "") throws -> [Substring] {
    guard getuid() == 0 else { throw XCTSkip("needs root for unshare -n and nft") }
    guard let nft = Self.nft else {
      throw XCTSkip("nft is not installed (apt-get install nftables)")
    }
    let probe = Process()
    probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
    probe.arguments = ["-n", "true"]
    do { try probe.run() } catch { throw XCTSkip("unshare is not runnable: \(error)") }
    probe.waitUntilExit()
    if probe.terminationStatus != 0 { throw XCTSkip("unshare -n is not permitted here") }

    let script =
      "ip link set lo up && \(nft) add table inet reach"
      + " && \(nft) add chain inet reach o '{ type filter hook output priority 0; }'"
      + (blocked ? " && \(nft) add rule inet reach o \(Self.blockRule)" : "")
      + (setup.isEmpty ? "" : " && \(setup)")
      + " && exec \"$0\" \"$@\""
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
    process.arguments = [
      "-n", "bash", "-c", script, CommandLine.arguments[0],
      "WCSApi2Tests.ReachEndToEndTests/\(inner)",
    ]
    process.environment = ProcessInfo.processInfo.environment.merging([
      Self.namespaceVariable: "1"
    ]) { _, new in new }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let timer = DispatchWorkItem { [process] in process.terminate() }
    DispatchQueue.global().asyncAfter(deadline: .now() + 90, execute: timer)
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    timer.cancel()
    process.waitUntilExit()
    let marker = "REACH-RESULT "
    let line = try XCTUnwrap(
      text.split(separator: "\n").last { $0.hasPrefix(marker) },
      "no result line (exit \(process.terminationStatus)): \(text.suffix(1500))")
    // A crash's backtrace ends in registers and images: show the crashed thread's frames.
    let crashed = text.range(of: " crashed:").map { String(text[$0.lowerBound...].prefix(2500)) }
    XCTAssertEqual(process.terminationStatus, 0, crashed ?? String(text.suffix(1500)))
    return line.dropFirst(marker.count).split(separator: " ", maxSplits: 1)
  }

  /// Skips an inner test unless it runs inside the namespace `runInNamespace` made for `outer`.
  func requireNamespace(of outer: String) throws {
    guard ProcessInfo.processInfo.environment[Self.namespaceVariable] == "1" else {
      throw XCTSkip("runs inside the namespace of \(outer)")
    }
  }

  /// The nft rule that drops what the client's media sockets send.
  static var blockRule: String {
    "udp sport \(clientPorts.lowerBound)-\(clientPorts.upperBound) drop"
  }

  /// Runs `nft` with `arguments` (inside the namespace).
  func nft(_ arguments: String) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try XCTUnwrap(Self.nft))
    process.arguments = arguments.split(separator: " ").map(String.init)
    try process.run()
    process.waitUntilExit()
    XCTAssertEqual(process.terminationStatus, 0, "nft \(arguments)")
  }

  /// A publisher whose media UDP is dropped (the local server's and the WebSocket pass).
  func testPublisherWithUDPBlockedFailsSayingWhatWasTried() throws {
    let fields = try runInNamespace("testPublisherWithUDPBlockedInsideNamespace", blocked: true)
    let seconds = try XCTUnwrap(Double(fields[0]))
    let info = String(fields[1])
    print("publish → FAILED with UDP blocked: \(seconds) s; info: \(info)")
    XCTAssertLessThan(seconds, 30, "within the 30 s connect timeout")
    XCTAssertTrue(
      info.hasPrefix("Failed by ICE timeout: no ICE candidate pair succeeded: local 1 host udp"),
      info)
    XCTAssertTrue(
      info.hasSuffix("UDP blocked? configure TURN over TCP (turn:host?transport=tcp or turns:)"),
      info)
  }

  /// A player whose path is blocked mid-stream until its consent expires, then restored: ICE
  /// restarts (a new play under the same name) and pictures are decoded again soon after.
  func testPlayerRestartsICEAfterThePathIsBlockedAndRestored() throws {
    let fields = try runInNamespace("testPlayerRestartInsideNamespace", blocked: false)
    let seconds = try XCTUnwrap(Double(fields[0]))
    print("restore → frames decoded on the restarted connection: \(seconds) s (\(fields[1]))")
    XCTAssertLessThan(seconds, 3, "resumes within 3 s of the restore")
  }

  /// The inner part of `testPlayerRestartsICEAfterThePathIsBlockedAndRestored`.
  func testPlayerRestartInsideNamespace() throws {
    guard ProcessInfo.processInfo.environment[Self.namespaceVariable] == "1" else {
      throw XCTSkip(
        "runs inside the namespace of testPlayerRestartsICEAfterThePathIsBlockedAndRestored")
    }
    let server = try WCSLocalServer.startForTest("reach-restart")
    defer { server.stop() }
    let publishing = try session(
      server, backend: NativeMediaBackend(configuration: .init(systemDevices: nil)))
    defer { publishing.disconnect() }
    var fast = PeerConnectionConfiguration(
      allowLoopback: true, hostAddresses: [.loopbackV4], portRange: Self.clientPorts)
    fast.iceConsentInterval = .milliseconds(250)
    fast.iceDisconnectedTimeout = .milliseconds(750)
    fast.iceConsentTimeout = .milliseconds(1500)
    let playing = try session(
      server,
      backend: NativeMediaBackend(configuration: .init(peerConnection: fast, systemDevices: nil)))
    defer { playing.disconnect() }

    let publisher = try publishing.createStream(streamOptions("restarted"))
    try publisher.publish()
    wait("publishing") { publisher.getStatus() == .fpwcsStreamStatusPublishing }
    let player = try playing.createStream(streamOptions("restarted"))
    let recorder = StatusRecorder(player)
    try player.play()
    wait("frames before the block") { (stats(player)?.detailed?.framesDecoded ?? 0) >= 10 }
    let firstId = player.getStreamID()

    try nft("add rule inet reach o \(Self.blockRule)")
    wait("ICE restarted after consent expired", timeout: 10) { player.getStreamID() != firstId }
    Thread.sleep(forTimeInterval: 1)
    try nft("flush chain inet reach o")
    let restored = Date()
    wait("frames on the restarted connection", timeout: 15) {
      player.getStreamID() != firstId && (stats(player)?.detailed?.framesDecoded ?? 0) > 0
        && player.getConnectionState() == .connected
    }
    let seconds = Date().timeIntervalSince(restored)
    wait("more frames") { (stats(player)?.detailed?.framesDecoded ?? 0) >= 10 }
    playing.callbackQueue.sync {}
    XCTAssertEqual(
      recorder.all,
      [.fpwcsStreamStatusPending, .fpwcsStreamStatusPlaying, .fpwcsStreamStatusPlaying],
      "no FAILED; a second PLAYING once the server took the restarted connection")
    XCTAssertEqual(player.getStatus(), .fpwcsStreamStatusPlaying)
    XCTAssertEqual(publisher.getStatus(), .fpwcsStreamStatusPublishing)
    print(
      "REACH-RESULT \(String(format: "%.2f", seconds)) statuses=\(recorder.all.map(\.rawValue))")
  }

  /// A client whose media UDP is dropped still publishes and plays through TURN over TCP and
  /// over TLS (coturn beside it in the namespace; its relayed leg to the server is UDP), and
  /// the pictures played are the virtual camera's (frame numbers in order, PSNR).
  func testUDPBlockedClientPublishesAndPlaysOverTURNTCPAndTLS() throws {
    let fields = try runInNamespace("testTURNOverStreamsInsideNamespace", blocked: true)
    print("TURN over TCP/TLS with UDP blocked: \(fields.joined(separator: " "))")
    XCTAssertEqual(fields.first, "ok", fields.joined(separator: " "))
  }

  /// The part of the test above that runs in the namespace; skipped when run directly.
  func testTURNOverStreamsInsideNamespace() throws {
    guard ProcessInfo.processInfo.environment[Self.namespaceVariable] == "1" else {
      throw XCTSkip(
        "runs inside the namespace of testUDPBlockedClientPublishesAndPlaysOverTURNTCPAndTLS")
    }
    let turn = try CoturnProcess(withStreams: true)
    defer { turn.stop() }
    let server = try WCSLocalServer.startForTest("reach")
    defer { server.stop() }
    var peerConnection = PeerConnectionConfiguration(
      allowLoopback: true, hostAddresses: [.loopbackV4], portRange: Self.clientPorts)
    // coturn's own certificate is the CA: verification stays on.
    peerConnection.turnTLSOptions = TLSClientOptions(caFile: try XCTUnwrap(turn.certificate))
    let backend = NativeMediaBackend(
      configuration: NativeMediaBackend.Configuration(
        peerConnection: peerConnection, systemDevices: nil))
    var figures: [String] = []
    for (url, relayProtocol) in [
      ("turn:127.0.0.1:\(turn.port)?transport=tcp", "tcp"),
      ("turns:127.0.0.1:\(try XCTUnwrap(turn.tlsPort))", "tls"),
    ] {
      let session = try session(server, backend: backend) { options in
        options.iceServers = [
          FPWCSApi2IceServer(url: url, username: "user", credential: "secret")
        ]
        options.iceTransportPolicy = .relay
      }
      defer { session.disconnect() }
      let name = "relayed-\(relayProtocol)"
      let publisher = try session.createStream(cameraOptions(name))
      try publisher.publish()
      wait("publishing over \(url)") { publisher.getStatus() == .fpwcsStreamStatusPublishing }
      let pictures = Locked<[I420Image]>([])
      let player = try session.createStream(collectingOptions(name, into: pictures))
      try player.play()
      wait("playing over \(url)") { player.getStatus() == .fpwcsStreamStatusPlaying }
      wait("ten pictures played over \(url)") { pictures.withLock { $0.count } >= 10 }
      try assertCameraPictures(pictures.withLock { $0 }, width: 320, height: 240)
      for stream in [publisher, player] {
        let local = try XCTUnwrap(stats(stream)?.ice?.localCandidate)
        XCTAssertEqual(local.candidateType, "relay")
        XCTAssertEqual(local.relayProtocol, relayProtocol, url)
      }
      figures.append("\(relayProtocol)=\(pictures.withLock { $0.count })pictures")
      try player.stop()
      try publisher.stop()
    }
    print(
      "REACH-RESULT \(testRun?.failureCount == 0 ? "ok" : "failed") \(figures.joined(separator: ","))"
    )
  }

  /// The part of the test above that runs in the namespace; skipped when run directly.
  func testPublisherWithUDPBlockedInsideNamespace() throws {
    guard ProcessInfo.processInfo.environment[Self.namespaceVariable] == "1" else {
      throw XCTSkip(
        "runs inside the namespace of testPublisherWithUDPBlockedFailsSayingWhatWasTried")
    }
    let server = try WCSLocalServer.startForTest("reach")
    defer { server.stop() }
    let backend = NativeMediaBackend(
      configuration: NativeMediaBackend.Configuration(
        peerConnection: PeerConnectionConfiguration(
          allowLoopback: true, hostAddresses: [.loopbackV4], portRange: Self.clientPorts),
        systemDevices: nil))
    let session = try session(server, backend: backend)
    defer { session.disconnect() }
    let stream = try session.createStream(streamOptions("blocked"))
    let recorder = StatusRecorder(stream)
    let start = Date()
    try stream.publish()
    wait("failed", timeout: 40) { stream.getStatus() == .fpwcsStreamStatusFailed }
    let seconds = Date().timeIntervalSince(start)
    session.callbackQueue.sync {}
    XCTAssertEqual(recorder.all, [.fpwcsStreamStatusFailed])
    XCTAssertEqual(stream.getStatusInfo(), .fpwcsStreamStatusInfoFailedByIceTimeout)
    guard case .failed(.noCandidatePair) = stream.getConnectionState() else {
      return XCTFail("connection state \(stream.getConnectionState())")
    }
    print("REACH-RESULT \(String(format: "%.2f", seconds)) \(stream.getInfo() ?? "")")
  }
}

/// coturn (`turnserver`) on 127.0.0.1, UDP only, long-term credentials `user`/`secret`, loopback
/// peers allowed; stopped by `stop()` or on deinit. Throws `XCTSkip` when coturn is missing.
final class CoturnProcess {
  let port: UInt16
  private let process = Process()
  private let directory: URL

  /// The TLS listener's port and the PEM certificate it presents (for IP 127.0.0.1, also the
  /// CA file a client trusts), when started `withStreams`.
  private(set) var tlsPort: UInt16?
  private(set) var certificate: String?

  /// Starts coturn: UDP only, or with `withStreams` also TCP on `port` and TLS on `tlsPort`
  /// with a certificate `openssl` makes for IP 127.0.0.1; `extraArguments` go on its command
  /// line (e.g. `--user-quota=1`).
  init(withStreams: Bool = false, extraArguments: [String] = []) throws {
    let executable = "/usr/bin/turnserver"
    guard FileManager.default.isExecutableFile(atPath: executable) else {
      throw XCTSkip("coturn is not installed (apt-get install coturn)")
    }
    port = try UDPSocket(bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0)).localAddress.port
    directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-reach-turn-\(UInt32.random(in: 0 ... .max))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    var listeners = ["--no-tls", "--no-tcp"]
    if withStreams {
      let tlsPort = try UDPSocket(bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0))
        .localAddress.port
      let certificate = directory.appendingPathComponent("cert.pem").path
      let key = directory.appendingPathComponent("key.pem").path
      let openssl = Process()
      openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
      openssl.arguments = [
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext",
        "subjectAltName=IP:127.0.0.1",
      ]
      openssl.standardOutput = FileHandle.nullDevice
      openssl.standardError = FileHandle.nullDevice
      try openssl.run()
      openssl.waitUntilExit()
      XCTAssertEqual(openssl.terminationStatus, 0, "openssl made the TURN server's certificate")
      listeners = ["--tls-listening-port=\(tlsPort)", "--cert=\(certificate)", "--pkey=\(key)"]
      self.tlsPort = tlsPort
      self.certificate = certificate
    }
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments =
      [
        "-n", "--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1", "--listening-port=\(port)",
        "--user=user:secret", "--realm=wcs.test", "--lt-cred-mech", "--no-dtls",
        "--allow-loopback-peers", "--no-cli", "--log-file=stdout",
        "--db=\(directory.path)/turndb", "--pidfile=\(directory.path)/turn.pid",
      ] + listeners + extraArguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    if withStreams {
      // The TCP and TLS listeners accept only once coturn is up.
      let tcpUp = waitForTCP(port: port) && waitForTCP(port: tlsPort ?? 0)
      XCTAssertTrue(tcpUp, "coturn's TCP and TLS listeners accept")
    }
  }

  /// Whether a TCP connection to 127.0.0.1:`port` is accepted within 5 s.
  private func waitForTCP(port: UInt16) -> Bool {
    let deadline = Date().addingTimeInterval(5)
    while Date() < deadline {
      let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_port = port.bigEndian
      address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
      let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
      }
      close(fd)
      if connected { return true }
      Thread.sleep(forTimeInterval: 0.05)
    }
    return false
  }

  deinit { stop() }

  func stop() {
    if process.isRunning {
      process.terminate()
      process.waitUntilExit()
    }
    try? FileManager.default.removeItem(at: directory)
  }
}

import Foundation
import XCTest

/// Loss recovery under real kernel drops: `LossBench --child` (one publish → play run) inside a
/// network namespace this test creates, where nftables drops 5 % of the UDP datagrams entering
/// it at random (every leg: media, RTCP, STUN, DTLS). The run's own counters say whether the
/// receiver asked (NACK) and the sender answered (retransmissions), and its frame numbers how
/// many pictures made it.
final class KernelLossRecoveryTests: XCTestCase {
  /// One leg of the child's result line (`LOSSBENCH-RESULT [{...}]`).
  struct Leg {
    var fields: [String: Any]
    func int(_ key: String) -> Int? { (fields[key] as? NSNumber)?.intValue }
    var share: Double {
      guard let sent = int("sent"), sent > 0 else { return 0 }
      return Double(int("decoded") ?? 0) / Double(sent)
    }
    var summary: String {
      "\(fields["leg"] ?? "?"): \(int("decoded") ?? 0)/\(int("sent") ?? 0) decoded, NACKs "
        + "\(int("nacksSent").map(String.init) ?? "-"), retransmissions "
        + "\(int("retransmissions").map(String.init) ?? "-"), longest gap "
        + "\((fields["longestGap"] as? NSNumber)?.doubleValue ?? -1) s"
    }
  }

  private static var nft: String? {
    ["/usr/sbin/nft", "/sbin/nft"].first(where: FileManager.default.isExecutableFile)
  }

  /// Skips unless this process may create network namespaces and nft is installed.
  private func skipUnlessNamespacesWork() throws {
    guard getuid() == 0 else { throw XCTSkip("needs root for unshare -n and nft") }
    guard Self.nft != nil else { throw XCTSkip("nft is not installed (apt-get install nftables)") }
    let probe = Process()
    probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
    probe.arguments = ["-n", "true"]
    do {
      try probe.run()
      probe.waitUntilExit()
    } catch {
      throw XCTSkip("unshare is not runnable: \(error)")
    }
    if probe.terminationStatus != 0 { throw XCTSkip("unshare -n is not permitted here") }
  }

  /// Runs one `LossBench --child` for `path` at `percent` % random loss, with `arguments`
  /// after its own; its legs by name. With `percent` nil it runs outside a namespace (for
  /// `--network`, the SDK's emulator).
  private func run(path: String, percent: Int?, seconds: Double, arguments: [String] = [])
    throws -> [String: Leg]
  {
    let bench = ExampleRunner.buildDirectory.appendingPathComponent("LossBench")
    guard FileManager.default.isExecutableFile(atPath: bench.path) else {
      throw XCTSkip("\(bench.path) is not built (run `swift build --build-tests`)")
    }
    let child = ["--child", "--path", path, "--seconds", "\(seconds)"] + arguments
    let process = Process()
    if let percent {
      let script =
        "ip link set lo up && nft add table inet losstest"
        + " && nft add chain inet losstest input '{ type filter hook input priority 0; }'"
        + " && nft add rule inet losstest input meta l4proto udp numgen random mod 100 '<' \(percent) drop"
        + " && exec \"$0\" \"$@\""
      process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
      process.arguments = ["-n", "bash", "-c", script, bench.path] + child
    } else {
      process.executableURL = bench
      process.arguments = child
    }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let timer = DispatchWorkItem { [process] in process.terminate() }
    DispatchQueue.global().asyncAfter(deadline: .now() + seconds + 12, execute: timer)
    let data = output.fileHandleForReading.readDataToEndOfFile()
    timer.cancel()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    let marker = "LOSSBENCH-RESULT "
    let line = try XCTUnwrap(
      text.split(separator: "\n").last { $0.hasPrefix(marker) },
      "no result line (exit \(process.terminationStatus)): \(text.suffix(500))")
    let legs = try XCTUnwrap(
      try JSONSerialization.jsonObject(with: Data(line.dropFirst(marker.count).utf8))
        as? [[String: Any]])
    var byName: [String: Leg] = [:]
    for leg in legs {
      if let name = leg["leg"] as? String { byName[name] = Leg(fields: leg) }
    }
    return byName
  }

  /// Publisher → wcs-local-server relay → player, 5 % loss on every leg: the player NACKs,
  /// the losses are repaired by retransmission, and nearly every picture is decoded.
  func testRelayedStreamRecoversFromFivePercentKernelLoss() throws {
    try skipUnlessNamespacesWork()
    let leg = try XCTUnwrap(try run(path: "server", percent: 5, seconds: 5)["server"])
    print(leg.summary)
    XCTAssertNil(leg.fields["failure"], "the run failed")
    XCTAssertGreaterThanOrEqual(leg.int("sent") ?? 0, 100, "5 s at 30 fps were sent")
    XCTAssertGreaterThan(leg.int("nacksSent") ?? 0, 0, "the player asked for lost packets")
    XCTAssertGreaterThan(
      leg.int("retransmissions") ?? 0, 0, "the publisher answered the relay's NACKs")
    XCTAssertGreaterThanOrEqual(leg.share, 0.9, "share of the frames decoded")
    XCTAssertLessThanOrEqual(
      (leg.fields["longestGap"] as? NSNumber)?.doubleValue ?? .infinity, 2,
      "longest time without a new picture (s)")
  }

  /// The same with H.264 published (RFC 6184, RTX per RFC 4588 `apt` to the H.264 format):
  /// the player NACKs, the relay and the publisher answer on the RTX streams, and nearly every
  /// picture of the virtual camera is decoded, by its frame number.
  func testRelayedH264StreamRecoversFromFivePercentKernelLoss() throws {
    try skipUnlessNamespacesWork()
    let leg = try XCTUnwrap(
      try run(path: "server", percent: 5, seconds: 5, arguments: ["--codec", "h264"])["server"])
    print("H.264 kernel 5 %: " + leg.summary + ", RTX received \(leg.int("rtxReceived") ?? -1)")
    assertRecovered(leg)
  }

  /// H.264 through the relay on the SDK's emulated network (5 % loss, 40 ms delay, 15 ms
  /// jitter on our sockets, fixed seed): reordered packets and late retransmissions are
  /// waited for by the assembler's window; the same bounds as under kernel loss.
  func testRelayedH264StreamRecoversFromEmulatedLossAndJitter() throws {
    let leg = try XCTUnwrap(
      try run(
        path: "server", percent: nil, seconds: 5,
        arguments: [
          "--codec", "h264", "--network", "loss=5%,delay=40ms,jitter=15ms", "--seed", "3",
        ]
      )["server"])
    print("H.264 emulated 5 %: " + leg.summary + ", RTX received \(leg.int("rtxReceived") ?? -1)")
    assertRecovered(leg)
  }

  /// The H.264 run's bounds: the player decoded H.264, asked for lost packets, got RTX
  /// packets, decoded 90 % of the pictures with no gap over 2 s.
  private func assertRecovered(_ leg: Leg, file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertNil(leg.fields["failure"], "the run failed", file: file, line: line)
    XCTAssertEqual(leg.fields["videoCodec"] as? String, "H264", file: file, line: line)
    XCTAssertGreaterThanOrEqual(leg.int("sent") ?? 0, 100, "5 s at 30 fps", file: file, line: line)
    XCTAssertGreaterThan(leg.int("nacksSent") ?? 0, 0, "the player NACKed", file: file, line: line)
    XCTAssertGreaterThan(
      leg.int("rtxReceived") ?? 0, 0, "the relay answered on RTX", file: file, line: line)
    XCTAssertGreaterThan(
      leg.int("retransmissions") ?? 0, 0, "the publisher answered the relay's NACKs", file: file,
      line: line)
    XCTAssertGreaterThanOrEqual(
      leg.share, 0.9, "share of the frames decoded", file: file, line: line)
    XCTAssertLessThanOrEqual(
      (leg.fields["longestGap"] as? NSNumber)?.doubleValue ?? .infinity, 2,
      "longest time without a new picture (s)", file: file, line: line)
  }

  /// Straight to aiortc (RTX negotiated), 5 % loss on every leg: aiortc NACKs what we publish
  /// and we answer; we NACK what aiortc sends; both directions decode nearly every picture.
  func testAiortcLegsRecoverFromFivePercentKernelLoss() throws {
    try skipUnlessNamespacesWork()
    let check = Process()
    check.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    check.arguments = ["python3", "-c", "import aiortc, numpy"]
    check.standardOutput = FileHandle.nullDevice
    check.standardError = FileHandle.nullDevice
    try check.run()
    check.waitUntilExit()
    if check.terminationStatus != 0 { throw XCTSkip("aiortc is not installed") }

    let legs = try run(path: "aiortc", percent: 5, seconds: 5)
    let publish = try XCTUnwrap(legs["aiortc-publish"])
    let play = try XCTUnwrap(legs["aiortc-play"])
    print(publish.summary)
    print(play.summary)
    XCTAssertNil(publish.fields["failure"])
    XCTAssertNil(play.fields["failure"])
    XCTAssertGreaterThan(publish.int("retransmissions") ?? 0, 0, "we answered aiortc's NACKs")
    XCTAssertGreaterThan(play.int("nacksSent") ?? 0, 0, "we asked aiortc for lost packets")
    XCTAssertGreaterThanOrEqual(publish.share, 0.9, "aiortc decoded what we published")
    XCTAssertGreaterThanOrEqual(play.share, 0.9, "we decoded what aiortc sent")
  }
}

import Foundation
import XCTest

/// Headless Chromium (its own WebRTC stack) publishing its fake camera at 640x360, 30 fps, to
/// `wcs-local-server` and playing it back, inside a network namespace where nftables drops 5 %
/// of the UDP datagrams at random on every leg (the `wcs-loss` page of Tests/Interop/chromium).
/// The page counts over the same span the frames its publisher sent and its player decoded
/// (getStats), and the longest time without a newly decoded frame.
final class ChromiumLossTests: XCTestCase {
  /// The nftables rules of the namespace: `percent` % of the UDP datagrams entering it dropped.
  static func dropRule(percent: Int) -> String {
    "nft add table inet losstest"
      + " && nft add chain inet losstest input '{ type filter hook input priority 0; }'"
      + " && nft add rule inet losstest input meta l4proto udp numgen random mod 100 '<' \(percent) drop"
  }

  func testChromiumThroughLocalServerDecodesAtFivePercentKernelLoss() throws {
    guard ["/usr/sbin/nft", "/sbin/nft"].contains(where: FileManager.default.isExecutableFile)
    else { throw XCTSkip("nft is not installed (apt-get install nftables)") }
    let run = try ChromiumInterop.run(
      scenario: "wcs-loss", timeout: 45, setup: Self.dropRule(percent: 5))
    if let error = run.summary["error"] as? String, error.contains("wcs-local-server not built") {
      throw XCTSkip("wcs-local-server is not part of this build: \(error)")
    }
    XCTAssertEqual(run.page["ok"] as? Bool, true, run.text)
    let sent = try XCTUnwrap(run.int("page", "sent"), run.text)
    let decoded = try XCTUnwrap(run.int("page", "decoded"), run.text)
    let gap = try XCTUnwrap(run.page["longestGap"] as? Double, run.text)
    let nacks = run.int("page", "end", "received", "inbound", "nackCount") ?? 0
    let resent = run.int("page", "end", "sent", "outbound", "retransmittedPacketsSent") ?? 0
    let plis = run.int("page", "end", "received", "inbound", "pliCount") ?? 0
    print(
      "Chromium via wcs-local-server at 5 % loss: decoded \(decoded) / sent \(sent) "
        + String(format: "(%.1f %%)", Double(decoded) * 100 / Double(max(1, sent)))
        + ", longest gap \(Int(gap * 1000)) ms, player NACKs \(nacks), PLIs \(plis), "
        + "publisher retransmissions \(resent)")
    // 8 s at the fake camera's 30 fps (it may give a little less under load).
    XCTAssertGreaterThanOrEqual(sent, 150, run.text)
    XCTAssertGreaterThan(nacks, 0, "the loss reached the player, which asked for the packets")
    XCTAssertGreaterThan(resent, 0, "the relay's NACKs reached the publisher, which resent")
    XCTAssertGreaterThanOrEqual(
      Double(decoded) / Double(max(1, sent)), 0.95, "share of the sent frames the player decoded")
    XCTAssertLessThanOrEqual(gap, 1.0, "longest time without a new picture (s)")
  }
}

import Foundation

/// One run of headless Chromium through `wcs-local-server`: InteropPeer (built next to this
/// executable) serves Tests/Interop/chromium and starts Chromium at the `wcs-loss` page, which
/// publishes its fake camera (640x360, 30 fps), plays it back and reports getStats figures.
func runChromium(loss: Loss) -> Result<[LegResult], RunError> {
  let peer = buildDirectory.appendingPathComponent("InteropPeer").path
  guard FileManager.default.isExecutableFile(atPath: peer),
    FileManager.default.isExecutableFile(
      atPath: buildDirectory.appendingPathComponent("wcs-local-server").path)
  else {
    return .failure(
      RunError(
        reason: "build InteropPeer and wcs-local-server next to LossBench first "
          + "(swift build -c release --product InteropPeer --product wcs-local-server)"))
  }
  let pages = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Tests/Interop/chromium").path
  let command = [
    peer, "--pages", pages, "--scenario", "wcs-loss", "--timeout", "45", "--chromium",
    "/usr/bin/chromium",
  ]
  return runInNamespace(command, loss: loss, timeout: 70).flatMap { text in
    guard let line = text.split(separator: "\n").last,
      let summary = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    else { return .failure(RunError(reason: "InteropPeer printed no summary")) }
    return .success([chromiumLeg(summary["page"] as? [String: Any] ?? [:])])
  }
}

/// The `wcs-loss` page's result as a leg: its player's (inbound) and publisher's (outbound)
/// video counters at the end.
func chromiumLeg(_ page: [String: Any]) -> LegResult {
  func value(_ path: String...) -> Double? {
    var current: Any? = page
    for key in path { current = (current as? [String: Any])?[key] }
    return (current as? NSNumber)?.doubleValue
  }
  var leg = LegResult(leg: "chromium-server")
  leg.sent = Int(value("sent") ?? 0)
  leg.decoded = Int(value("decoded") ?? 0)
  leg.longestGap = value("longestGap")
  leg.toPublishing = value("toPublishing")
  leg.toPlaying = value("toPlaying")
  leg.firstFrame = value("firstFrame")
  leg.nacksSent = value("end", "received", "inbound", "nackCount").map { Int($0) }
  leg.plisSent = value("end", "received", "inbound", "pliCount").map { Int($0) }
  leg.packetsLost = value("end", "received", "inbound", "packetsLost").map { Int64($0) }
  leg.retransmissions = value("end", "sent", "outbound", "retransmittedPacketsSent").map { Int($0) }
  leg.keyFramesEncoded = value("end", "sent", "outbound", "keyFramesEncoded").map { Int($0) }
  leg.keyFrameRequests = value("end", "sent", "outbound", "pliCount").map { Int($0) }
  if page["ok"] as? Bool != true {
    leg.failure = (page["error"] as? String) ?? "the page did not finish"
  }
  return leg
}

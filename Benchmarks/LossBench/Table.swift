import BenchSupport
import Foundation

/// Runs `command` in a fresh network and PID namespace (only `lo`, nothing outlives it) where
/// nftables drops `loss` of the UDP datagrams; its stdout, or why it printed nothing.
func runInNamespace(_ command: [String], loss: Loss, timeout: Double) -> Result<String, RunError> {
  // The rule drops on the input hook: every datagram crosses `lo` once, so every leg (media,
  // RTCP, STUN, DTLS, both directions) loses the same share.
  var script = "ip link set lo up"
  if let match = loss.nftMatch {
    script +=
      " && nft add table inet lossbench"
      + " && nft add chain inet lossbench input '{ type filter hook input priority 0; }'"
      + " && nft add rule inet lossbench input meta l4proto udp \(match) drop"
  }
  script += " && exec \"$0\" \"$@\""
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
  process.arguments = ["-n", "-p", "-f", "--kill-child", "bash", "-c", script] + command
  let output = Pipe()
  let errorLog = FileManager.default.temporaryDirectory
    .appendingPathComponent("lossbench-\(getpid())-child.log")
  _ = FileManager.default.createFile(atPath: errorLog.path, contents: nil)
  defer { try? FileManager.default.removeItem(at: errorLog) }
  process.standardOutput = output
  process.standardError = try? FileHandle(forWritingTo: errorLog)
  do {
    try process.run()
  } catch {
    return .failure(RunError(reason: "unshare: \(error)"))
  }
  // unshare dies, --kill-child SIGKILLs the namespace's init, the kernel ends the rest.
  let timer = DispatchWorkItem { kill(process.processIdentifier, SIGKILL) }
  DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: timer)
  let data = output.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  timer.cancel()
  let text = String(decoding: data, as: UTF8.self)
  guard !text.isEmpty else {
    let errors = (try? String(contentsOf: errorLog, encoding: .utf8)) ?? ""
    return .failure(
      RunError(
        reason: "exit \(process.terminationStatus) without output: "
          + errors.split(separator: "\n").suffix(2).joined(separator: " / ")))
  }
  return .success(text)
}

/// The build directory this executable runs from (`.build/release`).
let buildDirectory = URL(
  fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
    ?? CommandLine.arguments[0]
).deletingLastPathComponent()

/// One run of `path` at `loss`: this executable again as `--child` for "server" and
/// "aiortc", the InteropPeer's `wcs-loss` page for "chromium".
func runOnce(path: String, loss: Loss, settings: RunSettings, run: Int) -> Result<
  [LegResult], RunError
> {
  if path == "chromium" { return runChromium(loss: loss) }
  let command =
    [buildDirectory.appendingPathComponent("LossBench").path, "--child", "--path", path]
    + ["--seconds", "\(settings.seconds)", "--codec", settings.codec]
    + (loss.emulation.map { ["--network", $0, "--seed", "\(run + 1)"] } ?? [])
  return runInNamespace(command, loss: loss, timeout: settings.seconds + 60).flatMap { text in
    guard let legs = ResultLine.parse(text) else {
      return .failure(RunError(reason: "no result line: \(text.suffix(300))"))
    }
    return .success(legs)
  }
}

struct RunError: Error {
  var reason: String
}

/// The median of `values` (the mean of the middle two for an even count); nil when empty.
func median(_ values: [Double]) -> Double? {
  let sorted = values.sorted()
  guard !sorted.isEmpty else { return nil }
  let middle = sorted.count / 2
  return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// One table row: a leg at one loss, the median over its runs.
struct Row {
  var leg: String
  var loss: Loss
  var runs: [LegResult]
  /// Characters of the loss column.
  var lossWidth: Int

  func median(_ value: (LegResult) -> Double?) -> Double? {
    LossBench.median(runs.compactMap(value))
  }

  func format(_ value: Double?, _ format: String, scale: Double = 1) -> String {
    guard let value else {
      let width = String(format: format, 0.0).count
      return String(repeating: " ", count: max(0, width - 1)) + "-"
    }
    return String(format: format, value * scale)
  }

  var line: String {
    let decoded = median { Double($0.decoded) } ?? 0
    let sent = median { Double($0.sent) } ?? 0
    let share = median { $0.share }
    let failures = runs.compactMap(\.failure)
    let columns: [String] = [
      leg.padding(toLength: 15, withPad: " ", startingAt: 0),
      loss.description.padding(toLength: lossWidth, withPad: " ", startingAt: 0),
      String(format: "%4.0f / %-4.0f", decoded, sent),
      format(share, "%5.1f %%", scale: 100),
      format(median(\.longestGap), "%6.0f ms", scale: 1000),
      format(runs.compactMap(\.longestGap).max(), "%6.0f ms", scale: 1000),
      format(median(\.toPublishing), "%6.3f s"),
      format(median(\.toPlaying), "%6.3f s"),
      format(median(\.firstFrame), "%6.3f s"),
      format(median { $0.nacksSent.map(Double.init) }, "%5.0f"),
      format(median { $0.retransmissions.map(Double.init) }, "%5.0f"),
      format(median { $0.plisSent.map(Double.init) }, "%4.0f"),
      format(median { $0.keyFramesEncoded.map(Double.init) }, "%4.0f"),
      format(median { $0.packetsRecovered.map(Double.init) }, "%5.0f"),
      format(median { $0.sendFailures.map(Double.init) }, "%4.0f"),
      failures.isEmpty
        ? "" : "\(failures.count) failed: \(Set(failures).sorted().joined(separator: "; "))",
    ]
    return columns.joined(separator: "  ")
  }
}

func runTable(_ options: Options) -> Int32 {
  guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"),
    ["/usr/sbin/nft", "/sbin/nft"].contains(where: FileManager.default.isExecutableFile)
  else {
    print("LossBench needs root, /usr/bin/unshare and nft (apt-get install nftables)")
    return 1
  }
  let s = options.settings
  print(
    "LossBench \(s.width)x\(s.height)@\(s.fps) \(s.codec), \(s.seconds) s of media per run, "
      + "median of \(options.runs) run(s); kernel loss: nftables drops on the namespace's input hook;"
      + " emulated: the SDK's NetworkEmulation on our sockets, run i with seed=i")
  print(
    "  server: SDK publish + play through the in-process WCSLocalServer relay; "
      + "aiortc-publish: we publish, aiortc decodes; aiortc-play: aiortc sends, we decode")
  print(
    "  decoded/sent: frames from the first decoded one to the end; gap: longest time without"
      + " a new picture (median, worst run); times: publish() → PUBLISHING (aiortc: answer → connected),"
      + " play() → PLAYING, PLAYING → first picture; NACKs/PLIs sent by the receiver we run,"
      + " RTX: retransmissions by the sender we run, KF: key frames encoded; recov: missing"
      + " packets that arrived after all; fail: RTP packets our sender could not send")
  let lossWidth = options.losses.map(\.description.count).max() ?? 4
  let header = [
    "leg".padding(toLength: 15, withPad: " ", startingAt: 0),
    "loss".padding(toLength: lossWidth, withPad: " ", startingAt: 0),
    "decoded/sent", "  share", "gap med  ", "gap max  ", "publish ", "play    ", "first   ",
    "NACKs", "  RTX", "PLIs", "  KF", "recov", "fail", "",
  ]
  print(header.joined(separator: "  "))
  for path in options.paths {
    for loss in options.losses {
      var byLeg: [String: [LegResult]] = [:]
      var order: [String] = []
      var errors: [String] = []
      if path == "chromium", loss.emulation != nil { continue }
      for run in 0..<options.runs {
        switch runOnce(path: path, loss: loss, settings: s, run: run) {
        case .success(let legs):
          for leg in legs {
            if byLeg[leg.leg] == nil { order.append(leg.leg) }
            byLeg[leg.leg, default: []].append(leg)
          }
        case .failure(let error):
          errors.append(error.reason)
        }
      }
      for leg in order {
        print(Row(leg: leg, loss: loss, runs: byLeg[leg] ?? [], lossWidth: lossWidth).line)
      }
      if !errors.isEmpty { print("  \(path) at \(loss): \(errors.joined(separator: "; "))") }
      fflush(nil)
    }
  }
  return 0
}

// Loss figures of issue 23: publisher and player in one run, 640x360 at 30 fps (the virtual
// camera, whose frame-number band identifies every picture), random UDP loss on every leg,
// through the in-process WCSLocalServer relay and straight to the aiortc peer. Each run is a
// child process in a network namespace of its own (only `lo`) where nftables drops the share
// of UDP datagrams on the input hook, as /work/lossy.sh and the table do.
//
// Run: `swift run -c release LossBench` (the whole table, about 7 minutes), or one cell:
// `LossBench --path server --loss 5 --runs 3 --seconds 8`. `--loss 20b` is bursty: 20 % of
// the datagrams, 4 in a row out of every 20. Needs root, `unshare` and `nft`. `--path chromium`
// adds headless Chromium publishing and playing through `wcs-local-server` (the `wcs-loss` page
// of Tests/Interop/chromium, driven by InteropPeer).
import Foundation
import WCSMedia

/// One run's settings, as the parent passes them to the child.
struct RunSettings: Sendable {
  var width = 640
  var height = 360
  var fps = 30
  var seconds = 8.0
  var peerConnection = PeerConnectionConfiguration.loopback
}

/// A loss setting: a share of UDP datagrams dropped at random, or in bursts.
struct Loss: Sendable, CustomStringConvertible {
  var percent: Int
  var bursty: Bool

  init?(_ text: String) {
    bursty = text.hasSuffix("b")
    guard let value = Int(bursty ? String(text.dropLast()) : text), (0...100).contains(value)
    else { return nil }
    percent = value
  }

  var description: String { bursty ? "\(percent) % bursty" : "\(percent) %" }
  var argument: String { bursty ? "\(percent)b" : "\(percent)" }

  /// The nftables rule's match: `numgen random` for random loss; for bursts a counter over all
  /// datagrams entering the namespace, dropping `percent / 5` in a row out of every 20.
  var nftMatch: String? {
    guard percent > 0 else { return nil }
    if bursty { return "numgen inc mod 20 '<' \(max(1, percent / 5))" }
    return "numgen random mod 100 '<' \(percent)"
  }
}

struct Options {
  var paths = ["server", "aiortc"]
  var losses = ["0", "2", "5", "10", "20b"].compactMap(Loss.init)
  var runs = 3
  var settings = RunSettings()
  var child = false
}

func parse(_ arguments: [String]) -> Options? {
  var options = Options()
  var index = 0
  func value() -> String? {
    index += 1
    return index < arguments.count ? arguments[index] : nil
  }
  while index < arguments.count {
    switch arguments[index] {
    case "--path":
      guard let text = value() else { return nil }
      options.paths =
        text == "all"
        ? ["server", "aiortc", "chromium"] : text.split(separator: ",").map(String.init)
      guard options.paths.allSatisfy({ ["server", "aiortc", "chromium"].contains($0) }) else {
        return nil
      }
    case "--loss":
      guard let text = value() else { return nil }
      let losses = text.split(separator: ",").compactMap { Loss(String($0)) }
      guard !losses.isEmpty else { return nil }
      options.losses = losses
    case "--runs":
      guard let runs = value().flatMap(Int.init), runs > 0 else { return nil }
      options.runs = runs
    case "--seconds":
      guard let seconds = value().flatMap(Double.init), seconds > 0, seconds <= 120 else {
        return nil
      }
      options.settings.seconds = seconds
    case "--child":
      options.child = true
    default:
      return nil
    }
    index += 1
  }
  return options
}

let usage = """
  usage: LossBench [--path server,aiortc,chromium|all] [--loss 0,2,5,10,20b] [--runs N]
                   [--seconds S]
  server and aiortc by default; chromium needs InteropPeer and wcs-local-server built next to
  LossBench (`swift build -c release --product InteropPeer --product wcs-local-server`) and
  /usr/bin/chromium; its page runs 8 s of media (--seconds does not apply).
  """

guard let options = parse(Array(CommandLine.arguments.dropFirst())) else {
  print(usage)
  exit(64)
}
if options.child {
  // Inside the namespace: one run of the first path, result as one line.
  let path = options.paths.first ?? "server"
  ResultLine.print(
    path == "server"
      ? runThroughServer(settings: options.settings)
      : runAgainstAiortc(settings: options.settings))
  exit(0)
}
exit(runTable(options))

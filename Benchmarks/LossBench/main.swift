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
// of Tests/Interop/chromium, driven by InteropPeer). `--network SPEC` uses the SDK's network
// emulator instead of the kernel (fixed seeds; jitter needs it): see `--help`. `--codec h264`
// publishes H.264 on the server path.
import BenchSupport
import Foundation
import WCSMedia

/// One run's settings, as the parent passes them to the child.
struct RunSettings: Sendable {
  var width = 640
  var height = 360
  var fps = 30
  var seconds = 8.0
  /// The video codec the server path publishes: "VP8" or "H264" (`preferredVideoCodec`).
  var codec = "VP8"
  var peerConnection = PeerConnectionConfiguration.loopback
}

/// A loss setting: a share of UDP datagrams the kernel drops at random or in bursts (nftables
/// in the namespace), or a network the SDK's own emulator makes (`NetworkEmulation(spec:)`, on
/// our sockets only: both directions of every leg we take part in).
struct Loss: Sendable, CustomStringConvertible {
  var percent = 0
  var bursty = false
  /// The emulator's spec string; nil for kernel drops.
  var emulation: String?

  init?(_ text: String) {
    bursty = text.hasSuffix("b")
    guard let value = Int(bursty ? String(text.dropLast()) : text), (0...100).contains(value)
    else { return nil }
    percent = value
  }

  /// An emulated network; nil when `spec` does not parse.
  init?(emulation spec: String) {
    guard (try? NetworkEmulation(spec: spec)) != nil else { return nil }
    emulation = spec
  }

  var description: String {
    if let emulation { return "emulated \(emulation)" }
    return bursty ? "\(percent) % bursty" : "\(percent) %"
  }

  /// The nftables rule's match: `numgen random` for random loss; for bursts a counter over all
  /// datagrams entering the namespace, dropping `percent / 5` in a row out of every 20.
  var nftMatch: String? {
    guard emulation == nil, percent > 0 else { return nil }
    if bursty { return "numgen inc mod 20 '<' \(max(1, percent / 5))" }
    return "numgen random mod 100 '<' \(percent)"
  }
}

struct Options {
  var paths = ["server", "aiortc"]
  var kernelLosses = ["0", "2", "5", "10", "20b"].compactMap { Loss($0) }
  var emulatedLosses = ["loss=5%,delay=40ms,jitter=15ms", "loss=20%,burst=4"].compactMap {
    Loss(emulation: $0)
  }
  var runs = 3
  var settings = RunSettings()
  var child = false
  /// The child's emulated network and seed.
  var network: String?
  var seed: UInt64 = 1

  var losses: [Loss] { kernelLosses + emulatedLosses }
}

func parse(_ arguments: [String]) -> Options? {
  var options = Options()
  var index = 0
  var givenLoss = false
  var givenNetwork = false
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
      options.kernelLosses = losses
      givenLoss = true
    case "--network":
      guard let text = value(), let loss = Loss(emulation: text) else { return nil }
      options.emulatedLosses = (givenNetwork ? options.emulatedLosses : []) + [loss]
      options.network = text
      givenNetwork = true
    case "--seed":
      guard let seed = value().flatMap(UInt64.init) else { return nil }
      options.seed = seed
    case "--runs":
      guard let runs = value().flatMap(Int.init), runs > 0 else { return nil }
      options.runs = runs
    case "--seconds":
      guard let seconds = value().flatMap(Double.init), seconds > 0, seconds <= 120 else {
        return nil
      }
      options.settings.seconds = seconds
    case "--codec":
      guard let text = value()?.uppercased(), ["VP8", "H264"].contains(text) else { return nil }
      options.settings.codec = text
    case "--child":
      options.child = true
    default:
      return nil
    }
    index += 1
  }
  // Asking for some cells runs those alone.
  if givenLoss, !givenNetwork { options.emulatedLosses = [] }
  if givenNetwork, !givenLoss { options.kernelLosses = [] }
  return options
}

let usage = """
  usage: LossBench [--path server,aiortc,chromium|all] [--loss 0,2,5,10,20b]
                   [--network SPEC]... [--runs N] [--seconds S] [--codec vp8|h264]
  --codec: the video codec the server path publishes and plays (default vp8).
  --loss: kernel drops (nftables), % of UDP datagrams at random; 20b: 20 % in bursts.
  --network: the SDK's network emulator instead, on our sockets, run i with seed=i
  (default cells: loss=5%,delay=40ms,jitter=15ms and loss=20%,burst=4; SPEC syntax below).
  Giving only --loss or only --network runs those cells alone.
  server and aiortc by default; chromium needs InteropPeer and wcs-local-server built next to
  LossBench (`swift build -c release --product InteropPeer --product wcs-local-server`) and
  /usr/bin/chromium; its page runs 8 s of media (--seconds does not apply) and it takes
  kernel drops only (Chromium has its own sockets).

  \(NetworkEmulation.specSyntax)
  """

guard let options = parse(Array(CommandLine.arguments.dropFirst())) else {
  print(usage)
  exit(64)
}
if options.child {
  // Inside the namespace: one run of the first path, result as one line.
  let path = options.paths.first ?? "server"
  var settings = options.settings
  if let network = options.network, var emulation = try? NetworkEmulation(spec: network) {
    emulation.seed = options.seed
    settings.peerConnection.networkEmulation = emulation
  }
  ResultLine.print(
    path == "server"
      ? runThroughServer(settings: settings)
      : runAgainstAiortc(settings: settings))
  exit(0)
}
exit(runTable(options))

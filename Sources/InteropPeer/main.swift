import Foundation
import WCSTransport

// Interop peer for the Chromium tests (Tests/WCSMediaTests/Interop): run inside a network
// namespace that has only `lo`, it serves Tests/Interop/chromium, runs headless Chromium at the
// page, plays the Swift side of the scenario, and prints one JSON summary line on stdout.

let options: InteropOptions
do {
  options = try InteropOptions(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
  FileHandle.standardError.write(Data("\(error)\n\(InteropOptions.usage)\n".utf8))
  exit(2)
}

let scenario: any InteropScenario
switch options.scenario {
case "offer", "loopback": scenario = PageOnlyScenario()
case "peer": scenario = PeerConnectionScenario(role: .answerer(iceLite: false))
case "peer-lite": scenario = PeerConnectionScenario(role: .answerer(iceLite: true))
case "peer-offer": scenario = PeerConnectionScenario(role: .offerer)
case "wcs", "wcs-loss", "wcs-h264":
  scenario = WCSServerScenario(recordsDirectory: options.recordsDirectory)
case "wcs-h264-sdk", "wcs-sdk-h264":
  scenario = SDKExampleScenario(recordsDirectory: options.recordsDirectory)
case "room": scenario = RoomScenario(recordsDirectory: options.recordsDirectory, duration: 10)
default:
  FileHandle.standardError.write(Data("unknown scenario \(options.scenario)\n".utf8))
  exit(2)
}

let summary = InteropSession(options: options, scenario: scenario).run()
let encoder = JSONEncoder()
encoder.outputFormatting = [.sortedKeys]
let line = (try? encoder.encode(summary)) ?? Data("{\"ok\":false}".utf8)
FileHandle.standardOutput.write(line + Data("\n".utf8))
exit(0)

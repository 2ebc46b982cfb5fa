import Foundation
import XCTest

@testable import WCSMedia

/// `Tests/Interop/aiortc_media_peer.py` as a child process, answering one of our connections'
/// offers and reporting what it decoded (JSON lines, every read bounded).
final class AiortcMediaPeer {
  static let scriptPath = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Interop/aiortc_media_peer.py").path

  /// What the peer does with our offer: `receive` answers a publish offer, `send` a play offer.
  enum Mode: String {
    case receive
    case send
  }

  let process: JSONLinesProcess

  init(mode: Mode) throws {
    process = try JSONLinesProcess(script: Self.scriptPath, arguments: [mode.rawValue])
  }

  /// Skips the test when `import aiortc` fails (or python3 cannot run).
  static func skipUnlessInstalled() throws { try skipUnlessPythonImports("aiortc", "numpy") }

  /// Sends our offer and returns aiortc's answer (at most 20 s).
  func answer(_ offer: String) throws -> String {
    try process.writeLine(["offer": offer])
    let reply = try XCTUnwrap(try process.readLine(timeout: 20), "aiortc sent no answer")
    return try XCTUnwrap(reply["answer"] as? String, "\(reply)")
  }

  /// One report.
  func report() throws -> [String: Any] {
    try process.writeLine(["cmd": "report"])
    return try XCTUnwrap(try process.readLine(until: "report", timeout: 10), "no report")
  }

  /// Reports every 200 ms until `condition` holds or `timeout` seconds pass; the last report.
  func report(timeout: Double, until condition: ([String: Any]) -> Bool) throws -> [String: Any] {
    let deadline = Date().addingTimeInterval(timeout)
    var last = try report()
    while !condition(last), Date() < deadline {
      Thread.sleep(forTimeInterval: 0.2)
      last = try report()
    }
    return last
  }

  /// Makes aiortc's video receiver send a PLI; the media SSRC it named.
  func sendPLI() throws -> UInt32? {
    try process.writeLine(["cmd": "pli"])
    let reply = try XCTUnwrap(try process.readLine(until: "pli", timeout: 10), "no pli reply")
    return (reply["ssrc"] as? NSNumber).map { UInt32(truncating: $0) }
  }

  func close() {
    try? process.writeLine(["cmd": "close"])
    process.stop()
  }
}

extension Dictionary where Key == String, Value == Any {
  /// An integer field of an aiortc report (0 when absent).
  func int(_ key: String) -> Int { (self[key] as? NSNumber)?.intValue ?? 0 }
  /// A number field of an aiortc report (0 when absent).
  func double(_ key: String) -> Double { (self[key] as? NSNumber)?.doubleValue ?? 0 }
}

import ExampleSupport
import Foundation
import Synchronization
import XCTest

/// ClickToCall end to end: the example (with the local server and its SIP gateway in-process)
/// calls Debian's baresip on 127.0.0.1, which answers by itself and reports the DTMF it gets.
/// Skipped without baresip (`scripts/install-deps.sh test` installs it).
final class PhoneExamplesTests: XCTestCase {
  func testClickToCallReachesBaresipSendsDTMFAndFinishes() throws {
    let baresip = try AutoAnsweringBaresip()
    defer { baresip.stop() }
    let result = try ExampleRunner.run(
      "ClickToCall",
      ["--callee", "sip:baresip@127.0.0.1:\(baresip.port)", "--dtmf", "42", "--duration", "2"])
    XCTAssertEqual(result.status, 0, result.output)
    XCTAssertEqual(result.summary["Final status"], "FINISH", result.output)
    XCTAssertEqual(result.summary["SIP status"], "200", result.output)
    XCTAssertEqual(result.summary["Reason"], "Normal call clearing", result.output)
    XCTAssertTrue(result.output.contains("ESTABLISHED"), result.output)
    let deadline = Date().addingTimeInterval(5)
    while !baresip.output.contains("received event: '2'"), Date() < deadline { usleep(50_000) }
    XCTAssertTrue(baresip.output.contains("received event: '4'"), baresip.output)
    XCTAssertTrue(baresip.output.contains("received event: '2'"), baresip.output)
  }

  func testPhoneCallsBaresipHoldsSendsDTMFAndHangsUp() throws {
    let baresip = try AutoAnsweringBaresip()
    defer { baresip.stop() }
    let result = try ExampleRunner.run(
      "Phone",
      [
        "--login", "1001", "--callee", "sip:baresip@127.0.0.1:\(baresip.port)", "--dtmf", "7",
        "--hold", "--duration", "1",
      ])
    XCTAssertEqual(result.status, 0, result.output)
    XCTAssertEqual(result.summary["Held"], "yes", result.output)
    XCTAssertEqual(result.summary["Final status"], "FINISH", result.output)
    XCTAssertEqual(result.summary["Direction"], "outgoing", result.output)
    let lines = result.output.split(separator: "\n").map(String.init)
    let order = ["TRYING", "ESTABLISHED", "HOLD", "ESTABLISHED", "FINISH"].map { " \($0)" }
    var position = 0
    for status in order {
      guard
        let index = lines[position...].firstIndex(where: {
          $0.contains("call ") && $0.contains(status)
        })
      else { return XCTFail("no \(status) after line \(position): \(result.output)") }
      position = index + 1
    }
    let deadline = Date().addingTimeInterval(5)
    while !baresip.output.contains("received event: '7'"), Date() < deadline { usleep(50_000) }
    XCTAssertTrue(baresip.output.contains("received event: '7'"), baresip.output)
    XCTAssertTrue(baresip.output.contains("re-INVITE"), baresip.output)
  }

  func testClickToCallToNobodyFailsWithTheReasonAndExitStatusOne() throws {
    let result = try ExampleRunner.run(
      "ClickToCall", ["--callee", "sip:nobody@127.0.0.1:9", "--timeout", "3"])
    XCTAssertEqual(result.status, 1, result.output)
    XCTAssertEqual(result.summary["Final status"], "FAILED", result.output)
    XCTAssertNotEqual(result.summary["Reason"], "-", result.output)
  }
}

/// baresip answering every call, G.711 only, 880 Hz tone as microphone, on a free port.
private final class AutoAnsweringBaresip {
  final class Output: Sendable { let text = Mutex("") }
  let port = Int.random(in: 41000...48000)
  private let process = Process()
  private let collected = Output()
  private let directory = NSTemporaryDirectory() + "baresip-example-\(UUID().uuidString)"

  init() throws {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/baresip") else {
      throw XCTSkip("baresip is not installed")
    }
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let config = [
      "poll_method epoll", "sip_listen 127.0.0.1:\(port)", "net_interface 127.0.0.1",
      "audio_player aufile,/dev/null", "audio_source ausine,880", "ausrc_srate 48000",
      "auplay_srate 48000", "ausrc_channels 2", "audio_alert aufile,/dev/null",
      "module_path /usr/lib/baresip/modules", "module g711.so", "module ausine.so",
      "module aufile.so", "module_app account.so", "module_app menu.so", "",
    ]
    try config.joined(separator: "\n").write(
      toFile: directory + "/config", atomically: true, encoding: .utf8)
    try "<sip:baresip@127.0.0.1:\(port)>;regint=0;answermode=auto\n".write(
      toFile: directory + "/accounts", atomically: true, encoding: .utf8)
    try "".write(toFile: directory + "/contacts", atomically: true, encoding: .utf8)
    process.executableURL = URL(fileURLWithPath: "/usr/bin/baresip")
    process.arguments = ["-f", directory]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    process.standardInput = FileHandle.nullDevice
    let collected = collected
    pipe.fileHandleForReading.readabilityHandler = { handle in
      let data = handle.availableData
      guard !data.isEmpty else { return }
      collected.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
    }
    try process.run()
    let deadline = Date().addingTimeInterval(10)
    while !output.contains("baresip is ready"), Date() < deadline { usleep(20_000) }
  }

  var output: String { collected.text.withLock { $0 } }

  func stop() {
    if process.isRunning {
      process.terminate()
      let deadline = Date().addingTimeInterval(5)
      while process.isRunning, Date() < deadline { usleep(20_000) }
    }
    try? FileManager.default.removeItem(atPath: directory)
  }
}

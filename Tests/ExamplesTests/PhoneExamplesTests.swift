import ExampleSupport
import Foundation
import TestSupport
import WCSMedia
import XCTest

/// ClickToCall end to end: the example (with the local server and its SIP gateway in-process)
/// calls Debian's baresip on 127.0.0.1, which answers by itself and reports the DTMF it gets.
/// Skipped without baresip (`scripts/install-deps.sh test` installs it).
final class PhoneExamplesTests: XCTestCase {
  func testClickToCallReachesBaresipSendsDTMFAndFinishes() throws {
    let baresip = try autoAnsweringBaresip()
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
    let baresip = try autoAnsweringBaresip()
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

  func testPhoneSendsTheDigitsTypedOnStandardInputAsDTMF() throws {
    let baresip = try autoAnsweringBaresip()
    defer { baresip.stop() }
    let result = try ExampleRunner.run(
      "Phone",
      ["--callee", "sip:baresip@127.0.0.1:\(baresip.port)", "--duration", "3"],
      input: "3\n6#\n")
    XCTAssertEqual(result.status, 0, result.output)
    XCTAssertEqual(result.summary["Final status"], "FINISH", result.output)
    XCTAssertTrue(result.output.contains("sent DTMF 3 (RFC 4733)"), result.output)
    XCTAssertTrue(result.output.contains("sent DTMF 6# (RFC 4733)"), result.output)
    let deadline = Date().addingTimeInterval(5)
    while !baresip.output.contains("received event: '#'"), Date() < deadline { usleep(50_000) }
    for digit in ["3", "6", "#"] {
      XCTAssertTrue(baresip.output.contains("received event: '\(digit)'"), baresip.output)
    }
  }

  func testPhoneKeyHHangsUpBeforeTheDuration() throws {
    let baresip = try autoAnsweringBaresip()
    defer { baresip.stop() }
    let started = Date()
    let result = try ExampleRunner.run(
      "Phone", ["--callee", "sip:baresip@127.0.0.1:\(baresip.port)", "--duration", "30"],
      input: "h\n")
    XCTAssertEqual(result.status, 0, result.output)
    XCTAssertEqual(result.summary["Final status"], "FINISH", result.output)
    XCTAssertTrue(result.output.contains("hanging up (key h)"), result.output)
    XCTAssertLessThan(Date().timeIntervalSince(started), 10, result.output)
  }

  func testPhoneAudioOutWritesBaresipsToneToAWAVFile() throws {
    let baresip = try autoAnsweringBaresip()
    defer { baresip.stop() }
    let directory = try ExampleRunner.temporaryDirectory("phone-audio")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/call.wav"
    let result = try ExampleRunner.run(
      "Phone",
      [
        "--callee", "sip:baresip@127.0.0.1:\(baresip.port)", "--duration", "3",
        "--audio-out", path,
      ])
    XCTAssertEqual(result.status, 0, result.output)
    XCTAssertEqual(result.summary["Audio file"], path, result.output)
    let wav = try WAVFile(url: URL(fileURLWithPath: path))
    XCTAssertEqual(wav.sampleRate, 48_000)
    let mono = stride(from: 0, to: wav.samples.count, by: wav.channels).map { wav.samples[$0] }
    XCTAssertGreaterThan(mono.count, 48_000, "at least a second of audio")
    // The last second: past the call's first packets and the jitter buffer's start.
    let tail = Array(mono.suffix(48_000))
    XCTAssertEqual(Tone.dominantFrequency(tail, rate: 48_000), 880, accuracy: 20)
    XCTAssertGreaterThan(Tone.share(of: 880, in: tail, rate: 48_000), 0.5)
  }

  func testPhoneRejectsAnUnknownDTMFType() throws {
    let result = try ExampleRunner.run("Phone", ["--callee", "x", "--dtmf-type", "morse"])
    XCTAssertEqual(result.status, 64, result.output)
    XCTAssertTrue(result.output.contains("--dtmf-type wants rfc4733 or info, got morse"))
  }

  func testClickToCallToNobodyFailsWithTheReasonAndExitStatusOne() throws {
    let result = try ExampleRunner.run(
      "ClickToCall", ["--callee", "sip:nobody@127.0.0.1:9", "--timeout", "3"])
    XCTAssertEqual(result.status, 1, result.output)
    XCTAssertEqual(result.summary["Final status"], "FAILED", result.output)
    XCTAssertNotEqual(result.summary["Reason"], "-", result.output)
  }

  /// baresip answering every call (G.711, an 880 Hz tone as microphone) on a free port.
  private func autoAnsweringBaresip() throws -> BaresipProcess {
    guard BaresipProcess.isInstalled else { throw XCTSkip("baresip is not installed") }
    do {
      return try BaresipProcess(user: "baresip", answer: true)
    } catch let failure as BaresipProcess.StartFailure {
      throw XCTSkip(failure.description)
    }
  }
}

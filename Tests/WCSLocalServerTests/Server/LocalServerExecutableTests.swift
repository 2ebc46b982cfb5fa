import Foundation
import WCSTransport
import XCTest

#if canImport(Glibc)
  import Glibc
#endif

/// The built `wcs-local-server` program: starts, prints its URL, serves, exits 0 on SIGTERM.
final class LocalServerExecutableTests: XCTestCase {
  /// The executable sits next to the test bundle in `.build/<triple>/<configuration>/` (on
  /// Linux the bundle URL is already that directory; on macOS it is the `.xctest` folder).
  private func executableURL() throws -> URL {
    let bundle = Bundle(for: Self.self).bundleURL
    let candidates = [bundle, bundle.deletingLastPathComponent()].map {
      $0.appendingPathComponent("wcs-local-server")
    }
    guard
      let url = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) })
    else { throw XCTSkip("wcs-local-server not built next to \(bundle.path)") }
    return url
  }

  func testStartsPrintsItsURLAndExitsCleanlyOnSIGTERM() throws {
    let records = try makeTemporaryDirectory("wcs-local-server-exe")
    defer { try? FileManager.default.removeItem(at: records) }
    let process = Process()
    process.executableURL = try executableURL()
    process.arguments = ["--ws-port", "0", "--http-port", "0", "--records", records.path]
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    let lines = Collector<String>()
    output.fileHandleForReading.readabilityHandler = { handle in
      let text = String(decoding: handle.availableData, as: UTF8.self)
      for line in text.split(separator: "\n") { lines.append(String(line)) }
    }
    let exited = Collector<Int32>()
    process.terminationHandler = { exited.append($0.terminationStatus) }
    try process.run()
    defer { if process.isRunning { process.terminate() } }

    let printed = lines.wait { $0.contains { $0.hasPrefix("records: ") } }
    let wsLine = try XCTUnwrap(printed.first { $0.hasPrefix("ws: ") })
    let url = String(wsLine.dropFirst("ws: ".count))
    XCTAssertTrue(url.hasPrefix("ws://127.0.0.1:") && url.hasSuffix("/"), url)

    let client = TestClient(url)
    client.establish()
    XCTAssertEqual(
      client.messages.first { $0.name == "getUserData" }?.object["status"], "ESTABLISHED")

    XCTAssertEqual(kill(process.processIdentifier, SIGTERM), 0)
    XCTAssertEqual(exited.wait { !$0.isEmpty }.first, 0, "clean exit status")
    client.events.wait { $0.contains { $0.isTerminal } }
    XCTAssertEqual(client.closeEvent, .closed(code: 1001, reason: "server stopped"))
    output.fileHandleForReading.readabilityHandler = nil
    let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    XCTAssertTrue(log.contains("established: appKey=defaultApp"), log)
    XCTAssertTrue(log.contains("wcs-local-server stopped"), log)
  }
}

import WCSLocalServer
import WCSMedia
import XCTest

final class LocalServerCommandLineTests: XCTestCase {
  private func configuration(_ arguments: [String]) throws -> WCSLocalServer.Configuration {
    guard case .run(let configuration) = try LocalServerCommandLine.parse(arguments) else {
      throw XCTSkip("not a run configuration")
    }
    return configuration
  }

  func testDefaultsAreTheWCSPorts() throws {
    let defaults = try configuration([])
    XCTAssertEqual(defaults.bindAddress, "127.0.0.1")
    XCTAssertEqual(defaults.wsPort, 8080)
    XCTAssertNil(defaults.wssPort)
    XCTAssertEqual(defaults.httpPort, 8081)
    XCTAssertNil(defaults.legacyHTTPPort)
    XCTAssertTrue(defaults.recordsDirectory.hasSuffix("/records"))
  }

  func testEveryFlag() throws {
    let parsed = try configuration([
      "--bind", "0.0.0.0", "--ws-port", "0", "--wss-port", "8443", "--cert", "c.pem", "--key",
      "k.pem", "--http-port", "9091", "--legacy-http-port", "8081", "--records", "/tmp/r",
    ])
    XCTAssertEqual(parsed.bindAddress, "0.0.0.0")
    XCTAssertEqual(parsed.wsPort, 0)
    XCTAssertEqual(parsed.wssPort, 8443)
    XCTAssertEqual(parsed.certificatePath, "c.pem")
    XCTAssertEqual(parsed.privateKeyPath, "k.pem")
    XCTAssertEqual(parsed.httpPort, 9091)
    XCTAssertEqual(parsed.legacyHTTPPort, 8081)
    XCTAssertEqual(parsed.recordsDirectory, "/tmp/r")
    XCTAssertNil(parsed.statisticsInterval)
  }

  func testNoSnapshotsTurnsTheRelaysSnapshotSourceOff() throws {
    XCTAssertTrue(try configuration([]).snapshots)
    XCTAssertFalse(try configuration(["--no-snapshots"]).snapshots)
    XCTAssertTrue(LocalServerCommandLine.usage.contains("--no-snapshots"))
  }

  func testICETCPFlagAsksForMediaOverTCPOnly() throws {
    XCTAssertFalse(try configuration([]).signaling.iceTCPTransport)
    XCTAssertTrue(try configuration(["--ice-tcp"]).signaling.iceTCPTransport)
  }

  func testStatsIntervalInSeconds() throws {
    XCTAssertEqual(try configuration(["--stats", "5"]).statisticsInterval, .seconds(5))
    XCTAssertEqual(try configuration(["--stats", "0.25"]).statisticsInterval, .milliseconds(250))
    for text in ["0", "-1", "x", "nan", "1e9"] {
      XCTAssertThrowsError(try LocalServerCommandLine.parse(["--stats", text])) {
        XCTAssertEqual(
          ($0 as? LocalServerCommandLine.UsageError)?.description,
          "--stats needs seconds 0.1...86400, got '\(text)'")
      }
    }
  }

  func testNetworkFlagGivesTheRelayItsEmulation() throws {
    let parsed = try configuration(["--network", "send:loss=5%;receive:delay=10ms"])
    let emulation = try XCTUnwrap(parsed.networkEmulation)
    XCTAssertEqual(emulation.send, NetworkConditions(loss: .random(rate: 0.05)))
    XCTAssertEqual(emulation.receive, NetworkConditions(delay: .milliseconds(10)))
    XCTAssertNil(try configuration(["--network", "none"]).networkEmulation)
    XCTAssertNil(try configuration([]).networkEmulation)
    XCTAssertThrowsError(try LocalServerCommandLine.parse(["--network", "loss=5"])) { error in
      XCTAssertEqual(
        (error as? LocalServerCommandLine.UsageError)?.description,
        "--network 'loss=5': missing unit (%)")
    }
    XCTAssertTrue(LocalServerCommandLine.usage.contains("--network SPEC"))
    XCTAssertTrue(LocalServerCommandLine.usage.contains("burst=N"))
  }

  func testHelpAndErrors() {
    guard case .help? = try? LocalServerCommandLine.parse(["--ws-port", "1", "--help"]) else {
      return XCTFail("--help not recognised")
    }
    let bad: [([String], String)] = [
      (["--ws-port"], "--ws-port needs a value"),
      (["--ws-port", "70000"], "--ws-port needs a port number 0...65535, got '70000'"),
      (["--http-port", "x"], "--http-port needs a port number 0...65535, got 'x'"),
      (["--wss-port", "8443", "--cert", "c.pem"], "--wss-port needs --cert and --key"),
      (["--verbose"], "unknown argument '--verbose'"),
    ]
    for (arguments, message) in bad {
      XCTAssertThrowsError(try LocalServerCommandLine.parse(arguments), "\(arguments)") {
        XCTAssertEqual(($0 as? LocalServerCommandLine.UsageError)?.description, message)
      }
    }
  }
}

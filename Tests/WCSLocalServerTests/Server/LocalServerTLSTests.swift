import Foundation
import WCSLocalServer
import WCSTransport
import XCTest

/// `wss` next to `ws`: both reach the same signalling core.
final class LocalServerTLSTests: XCTestCase {
  func testSecureAndPlainClientsShareOneServer() throws {
    let directory = try makeTemporaryDirectory("wcs-local-server-tls")
    defer { try? FileManager.default.removeItem(at: directory) }
    let tool = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first {
      FileManager.default.isExecutableFile(atPath: $0)
    }
    guard let tool else { throw XCTSkip("no openssl command line tool") }
    let certificate = directory.appendingPathComponent("cert.pem").path
    let key = directory.appendingPathComponent("key.pem").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = [
      "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
      "-keyout", key, "-out", certificate, "-days", "2", "-subj", "/CN=127.0.0.1",
      "-addext", "subjectAltName=IP:127.0.0.1",
    ]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    XCTAssertEqual(process.terminationStatus, 0)

    let logs = Collector<String>()
    var configuration = testConfiguration(
      engine: SharedFakeMediaEngine(), records: directory, logs: logs)
    configuration.wssPort = 0
    configuration.certificatePath = certificate
    configuration.privateKeyPath = key
    let server = try WCSLocalServer.start(configuration)
    defer { server.stop() }
    let wssURL = try XCTUnwrap(server.wssURL)
    XCTAssertTrue(wssURL.hasPrefix("wss://127.0.0.1:"), wssURL)
    XCTAssertNotEqual(wssURL.replacingOccurrences(of: "wss", with: "ws"), server.wsURL)

    let secure = TestClient(wssURL, options: .init(connectTimeout: 10, caFile: certificate))
    let plain = TestClient(server.wsURL)
    secure.establish()
    plain.establish()
    secure.send("publishStream", streamArgument("pub-tls", name: "tls", published: true))
    secure.waitForStatus("pub-tls", "PUBLISHING")
    plain.send("playStream", streamArgument("play-plain", name: "tls", published: false))
    plain.waitForStatus("play-plain", "PLAYING")
    XCTAssertEqual(server.sessionCount, 2)
    secure.closeAndWait()
    plain.waitForStatus("play-plain", "STOPPED")
    plain.closeAndWait()
  }
}

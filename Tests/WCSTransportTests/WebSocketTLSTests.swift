import Foundation
import XCTest

@testable import WCSTransport

/// `wss://` against a self-signed certificate made for this test by the `openssl` tool.
final class WebSocketTLSTests: XCTestCase {
  private var directory: URL?
  private var certificate = ""
  private var key = ""

  override func setUpWithError() throws {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-tls-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    self.directory = directory
    (certificate, key) = try makeCertificate(
      name: "loopback", subject: "/CN=127.0.0.1",
      alternativeNames: "IP:127.0.0.1,DNS:localhost,DNS:127.0.0.1")
  }

  /// A self-signed P-256 certificate and its key as PEM files in the test's directory.
  private func makeCertificate(
    name: String, subject: String, alternativeNames: String
  ) throws -> (certificate: String, key: String) {
    let tool = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first {
      FileManager.default.isExecutableFile(atPath: $0)
    }
    guard let tool, let directory else { throw XCTSkip("no openssl command line tool") }
    let certificate = directory.appendingPathComponent("\(name)-cert.pem").path
    let key = directory.appendingPathComponent("\(name)-key.pem").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = [
      "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
      "-keyout", key, "-out", certificate, "-days", "2", "-subj", subject,
      "-addext", "subjectAltName=\(alternativeNames)",
    ]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    XCTAssertEqual(process.terminationStatus, 0)
    XCTAssertTrue(FileManager.default.fileExists(atPath: certificate))
    return (certificate, key)
  }

  /// The reason of the only event, which must be `.failed(.connectionFailed)`.
  private func failureReason(
    _ events: [SignalingEvent], file: StaticString = #filePath, line: UInt = #line
  ) -> String {
    XCTAssertEqual(events.count, 1, file: file, line: line)
    guard case .failed(.connectionFailed(let reason))? = events.first else {
      XCTFail("expected a connection failure, got \(events)", file: file, line: line)
      return ""
    }
    return reason
  }

  override func tearDown() {
    if let directory { try? FileManager.default.removeItem(at: directory) }
  }

  private func startTLSServer() throws -> (WebSocketServer, Recorder<WebSocketServer.Event>) {
    try startServer(.init(certificatePath: certificate, privateKeyPath: key))
  }

  func testSelfSignedCertificateIsRefusedByDefault() throws {
    let (server, serverEvents) = try startTLSServer()
    defer { server.stop() }
    XCTAssertTrue(server.url.hasPrefix("wss://127.0.0.1:"))
    let (client, events) = connectClient(server.url)
    let reason = failureReason(events.wait { $0.contains { $0.isTerminal } })
    XCTAssertTrue(reason.contains("self-signed certificate"), reason)
    XCTAssertTrue(client.waitUntilStopped(timeout: 10))
    XCTAssertTrue(serverEvents.all.isEmpty)
  }

  func testSelfSignedCertificateIsAcceptedWithoutVerification() throws {
    let (server, _) = try startTLSServer()
    defer { server.stop() }
    let (client, events) = connectClient(
      server.url, options: .init(connectTimeout: 5, verifyCertificates: false))
    waitOpened(events)
    XCTAssertNoThrow(try client.send("{\"message\":\"ping\",\"data\":[null]}").get())
    let texts = events.wait { !$0.compactMap(\.text).isEmpty }.compactMap(\.text)
    XCTAssertEqual(texts, ["{\"message\":\"ping\",\"data\":[null]}"])
    closeAndWait(client, events)
  }

  func testCertificateIsAcceptedWhenItsCAFileIsGiven() throws {
    let (server, _) = try startTLSServer()
    defer { server.stop() }
    let (client, events) = connectClient(
      server.url, options: .init(connectTimeout: 5, caFile: certificate))
    events.wait { $0.contains { $0 == .opened || $0.isTerminal } }
    XCTAssertEqual(events.all.first, .opened)
    let big = String(repeating: "wss-", count: 1 << 18)  // 1 MiB through TLS
    XCTAssertNoThrow(try client.send(big).get())
    let texts = events.wait(timeout: 30) { !$0.compactMap(\.text).isEmpty }.compactMap(\.text)
    XCTAssertEqual(texts.first?.utf8.count, 1 << 20)
    XCTAssertTrue(texts.first == big)
    closeAndWait(client, events)
  }

  func testCAFileDoesNotExcuseAnAddressMismatch() throws {
    let other = try makeCertificate(
      name: "other", subject: "/CN=other.example", alternativeNames: "DNS:other.example")
    let (server, _) = try startServer(
      .init(certificatePath: other.certificate, privateKeyPath: other.key))
    defer { server.stop() }
    let (client, events) = connectClient(
      server.url, options: .init(connectTimeout: 5, caFile: other.certificate))
    let reason = failureReason(events.wait { $0.contains { $0.isTerminal } })
    XCTAssertTrue(reason.contains("mismatch"), reason)
    XCTAssertTrue(client.waitUntilStopped(timeout: 10))
  }

  func testUnreadableCAFileFailsWithItsPath() throws {
    let (server, serverEvents) = try startTLSServer()
    defer { server.stop() }
    let missing = (directory?.path ?? "/nonexistent") + "/missing-ca.pem"
    let (client, events) = connectClient(
      server.url, options: .init(connectTimeout: 5, caFile: missing))
    let reason = failureReason(events.wait { $0.contains { $0.isTerminal } })
    XCTAssertEqual(reason, "could not read CA certificates from \(missing)")
    XCTAssertTrue(client.waitUntilStopped(timeout: 10))
    XCTAssertTrue(serverEvents.all.isEmpty)
  }

  /// The system trust store is loaded once and shared; a connection that skipped verification
  /// before must not leave the next one accepting what it should refuse, and the other way round.
  func testSharedTrustStoreKeepsEachConnectionsVerification() throws {
    let (server, _) = try startTLSServer()
    defer { server.stop() }
    for verify in [false, true, false, true] {
      let (client, events) = connectClient(
        server.url, options: .init(connectTimeout: 5, verifyCertificates: verify))
      if verify {
        let reason = failureReason(events.wait { $0.contains { $0.isTerminal } })
        XCTAssertTrue(reason.contains("self-signed certificate"), reason)
        XCTAssertTrue(client.waitUntilStopped(timeout: 10))
      } else {
        waitOpened(events)
        closeAndWait(client, events)
      }
    }
  }

  /// A CA file that did not sign the server's certificate is no trust anchor for it.
  func testUnrelatedCAFileIsRefused() throws {
    let (server, _) = try startTLSServer()
    defer { server.stop() }
    let other = try makeCertificate(
      name: "unrelated", subject: "/CN=127.0.0.1", alternativeNames: "IP:127.0.0.1")
    let (client, events) = connectClient(
      server.url, options: .init(connectTimeout: 5, caFile: other.certificate))
    let reason = failureReason(events.wait { $0.contains { $0.isTerminal } })
    XCTAssertTrue(reason.contains("self-signed certificate"), reason)
    XCTAssertTrue(client.waitUntilStopped(timeout: 10))
  }

  /// Connections with and without verification handshaking at the same time on the shared
  /// system trust store: every opt-out opens, every verifying connection refuses.
  func testConcurrentConnectionsKeepTheirOwnVerification() throws {
    let (server, _) = try startTLSServer()
    defer { server.stop() }
    let settings = (0..<16).map { $0 % 2 == 0 }
    let clients = settings.map { verify in
      connectClient(server.url, options: .init(connectTimeout: 10, verifyCertificates: verify))
    }
    for (verify, (client, events)) in zip(settings, clients) {
      let all = events.wait(timeout: 15) { $0.contains { $0 == .opened || $0.isTerminal } }
      if verify {
        XCTAssertEqual(all.count, 1, "\(all)")
        guard case .failed(.connectionFailed(let reason))? = all.first else {
          XCTFail("a verifying connection got \(all)")
          closeAndWait(client, events)
          continue
        }
        XCTAssertTrue(reason.contains("self-signed certificate"), reason)
        XCTAssertTrue(client.waitUntilStopped(timeout: 10))
      } else {
        XCTAssertEqual(all.first, .opened, "\(all)")
        closeAndWait(client, events)
      }
    }
  }

  /// TLS handshakes in flight while other connections and a server create their libwebsockets
  /// contexts: every handshake must still verify and open. (lws re-allocated the SSL ex-data
  /// index its verify callback reads on each context created with the TLS init option, so this
  /// used to fail some handshakes with "certificate verify failed".)
  func testHandshakesSurviveContextsCreatedMeanwhile() throws {
    let (server, _) = try startTLSServer()
    defer { server.stop() }
    let (plain, _) = try startServer()
    defer { plain.stop() }
    var clients: [(WebSocketTransport, Recorder<SignalingEvent>)] = []
    var servers: [WebSocketServer] = []
    for _ in 0..<12 {
      clients.append(
        connectClient(server.url, options: .init(connectTimeout: 10, caFile: certificate)))
      clients.append(connectClient(plain.url))
      let (extra, _) = try startServer()
      servers.append(extra)
    }
    for (client, events) in clients {
      let all = events.wait(timeout: 15) { $0.contains { $0 == .opened || $0.isTerminal } }
      XCTAssertEqual(all.first, .opened, "\(all)")
      closeAndWait(client, events)
    }
    for extra in servers { extra.stop() }
  }
}

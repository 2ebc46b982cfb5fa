import Foundation
import XCTest

@testable import WCSTransport

/// The server listens only on the address it is given (a security property: the local server
/// must not be reachable from the network when bound to 127.0.0.1).
final class WebSocketServerBindTests: XCTestCase {
  func testIPv4BindAddressIsTheOnlyListeningAddress() throws {
    let directory = FileManager.default.temporaryDirectory
    let files = WebSocketServer.FileMount(mountPoint: "/client/records", directory: directory.path)
    let server = WebSocketServer(configuration: .init(address: "127.0.0.1", port: 0, files: files))
    { _ in }
    try server.start()
    defer { server.stop() }
    let httpPort = try XCTUnwrap(server.httpPort)
    for port in [server.port, httpPort] {
      let listeners = Self.listeningAddresses(port: port)
      XCTAssertEqual(listeners, ["0100007F"], "port \(port) listens on \(listeners)")
    }
  }

  func testANameIsRefusedAsBindAddress() {
    let server = WebSocketServer(configuration: .init(address: "not-an-ip", port: 0)) { _ in }
    XCTAssertThrowsError(try server.start()) { error in
      guard case .listenFailed(let address, _, let reason)? = error as? WebSocketServer.StartError
      else { return XCTFail("\(error)") }
      XCTAssertEqual(address, "not-an-ip")
      XCTAssertTrue(reason.contains("IPv4 or IPv6"), reason)
    }
  }

  /// Local addresses (hex as the kernel prints them) of TCP sockets listening on `port`, from
  /// /proc/net/tcp and /proc/net/tcp6.
  static func listeningAddresses(port: Int) -> [String] {
    let hexPort = String(format: "%04X", port)
    var found: [String] = []
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
      guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
      for line in text.split(separator: "\n").dropFirst() {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count > 3, fields[3] == "0A" else { continue }  // 0A = LISTEN
        let local = fields[1].split(separator: ":")
        if local.count == 2, local[1] == hexPort { found.append(String(local[0])) }
      }
    }
    return found
  }
}

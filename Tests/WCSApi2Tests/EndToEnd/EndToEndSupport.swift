import Foundation
import WCSLocalServer
import XCTest

@testable import WCSApi2

extension XCTestCase {
  /// Polls `condition` every 20 ms for up to `timeout` seconds (real sockets: no virtual clock);
  /// a failure names `message` at the caller's line.
  func wait(
    _ message: String, timeout: Double = 20, file: StaticString = #filePath, line: UInt = #line,
    _ condition: () -> Bool
  ) {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
      guard Date() < deadline else {
        return XCTFail("timed out: \(message)", file: file, line: line)
      }
      Thread.sleep(forTimeInterval: 0.02)
    }
  }
}

extension WCSLocalServer {
  /// The local server on free WebSocket and HTTP ports of 127.0.0.1, quiet, recording into a
  /// fresh temporary directory named after `label`.
  static func startForTest(_ label: String) throws -> WCSLocalServer {
    var configuration = WCSLocalServer.Configuration()
    configuration.wsPort = 0
    configuration.httpPort = 0
    configuration.recordsDirectory =
      FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-\(label)-\(UUID().uuidString.prefix(8))").path
    configuration.logSink = { _ in }
    return try WCSLocalServer.start(configuration)
  }
}

extension FPWCSApi2 {
  /// A session connected to `server` with the Web SDK's default app key.
  static func connectedSession(to server: WCSLocalServer) async throws -> FPWCSApi2Session {
    let options = FPWCSApi2SessionOptions()
    options.urlServer = server.wsURL
    options.appKey = "defaultApp"
    let session = try FPWCSApi2.createSession(options)
    try await session.connect()
    return session
  }
}

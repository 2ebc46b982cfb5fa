import Foundation
import XCTest

@testable import WCSTransport

/// What the file mount refuses: hidden files always (404), and what `FileMount.access` says no
/// to (403).
final class WebSocketFileAccessTests: XCTestCase {
  private func directory(_ files: [String: String]) throws -> URL {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-http-access-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    for (name, text) in files {
      try Data(text.utf8).write(to: directory.appendingPathComponent(name))
    }
    return directory
  }

  func testHiddenFilesAreNeverServed() throws {
    let directory = try directory([".recording-pub-1.webm": "in progress", "a.webm": "done"])
    defer { try? FileManager.default.removeItem(at: directory) }
    let files = WebSocketServer.FileMount(mountPoint: "/client/records", directory: directory.path)
    let (server, _) = try startServer(.init(files: files))
    defer { server.stop() }
    let port = try XCTUnwrap(server.httpPort)
    XCTAssertEqual(try httpGet(port: port, path: "/client/records/a.webm").status, 200)
    let hidden = try httpGet(port: port, path: "/client/records/.recording-pub-1.webm")
    XCTAssertEqual(hidden.status, 404)
    XCTAssertFalse(String(decoding: hidden.body, as: UTF8.self).contains("in progress"))
    XCTAssertEqual(
      try httpGet(port: port, path: "/client/records/%2Erecording-pub-1.webm").status, 404)
  }

  func testTheAccessCheckSeesTheQueryAndCanRefuse() throws {
    let directory = try directory(["a.webm": "done"])
    defer { try? FileManager.default.removeItem(at: directory) }
    let access = WebSocketServer.FileAccessCheck { request in
      request.path == "/client/records/a.webm" && request.queryValue("token") == "s3cret"
    }
    let files = WebSocketServer.FileMount(
      mountPoint: "/client/records", directory: directory.path, access: access)
    let (server, _) = try startServer(.init(files: files))
    defer { server.stop() }
    let port = try XCTUnwrap(server.httpPort)
    XCTAssertEqual(try httpGet(port: port, path: "/client/records/a.webm").status, 403)
    XCTAssertEqual(
      try httpGet(port: port, path: "/client/records/a.webm?token=wrong").status, 403)
    let allowed = try httpGet(port: port, path: "/client/records/a.webm?x=1&token=s3cret")
    XCTAssertEqual(allowed.status, 200)
    XCTAssertEqual(String(decoding: allowed.body, as: UTF8.self), "done")
  }

  func testQueryValuesAreFoundByName() {
    let request = WebSocketServer.FileAccessCheck.Request(
      path: "/", query: "a=1&token=x=y&empty&token=second", authorization: nil,
      remoteAddress: "127.0.0.1")
    XCTAssertEqual(request.queryValue("token"), "x=y")
    XCTAssertEqual(request.queryValue("a"), "1")
    XCTAssertEqual(request.queryValue("empty"), "")
    XCTAssertNil(request.queryValue("missing"))
  }
}

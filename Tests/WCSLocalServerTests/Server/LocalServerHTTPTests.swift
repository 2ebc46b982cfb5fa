import Foundation
import WCSLocalServer
import XCTest

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Records are downloadable over HTTP at `/client/records/<name>` (wcs-protocol.md §6).
final class LocalServerHTTPTests: XCTestCase {
  private func get(_ url: String) throws -> (status: Int, body: Data, type: String?) {
    let request = URLRequest(url: try XCTUnwrap(URL(string: url)), timeoutInterval: 10)
    let result = Collector<Result<(Int, Data, String?), any Error>>()
    URLSession.shared.dataTask(with: request) { data, response, error in
      if let error { return result.append(.failure(error)) }
      let http = response as? HTTPURLResponse
      result.append(
        .success(
          (
            http?.statusCode ?? 0, data ?? Data(),
            http?.value(forHTTPHeaderField: "Content-Type")
          )))
    }.resume()
    let (status, body, type) = try XCTUnwrap(result.wait { !$0.isEmpty }.first).get()
    return (status, body, type)
  }

  func testRecordDownloadOnTheHTTPPortAndTheLegacyPort() throws {
    let records = try makeTemporaryDirectory("wcs-local-server-http")
    defer { try? FileManager.default.removeItem(at: records) }
    var configuration = testConfiguration(
      engine: SharedFakeMediaEngine(), records: records, logs: Collector<String>())
    configuration.legacyHTTPPort = 0
    let server = try WCSLocalServer.start(configuration)
    defer { server.stop() }
    // Bytes a text-mode or truncating server would alter: NULs, CR/LF, every byte value.
    let content = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 / 256) })
    let name = "stream-test-record.webm"
    try content.write(to: records.appendingPathComponent(name))

    let main = try get(server.httpBaseURL + "/client/records/" + name)
    XCTAssertEqual(main.status, 200)
    XCTAssertEqual(main.body, content)
    XCTAssertEqual(main.type, "video/webm")
    let legacyBase = try XCTUnwrap(server.legacyHTTPBaseURL)
    XCTAssertNotEqual(legacyBase, server.httpBaseURL)
    let legacy = try get(legacyBase + "/client/records/" + name)
    XCTAssertEqual(legacy.status, 200)
    XCTAssertEqual(legacy.body, content)
    XCTAssertEqual(try get(server.httpBaseURL + "/client/records/missing.webm").status, 404)
  }
}

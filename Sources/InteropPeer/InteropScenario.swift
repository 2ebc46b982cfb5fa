import WCSTransport

/// The Swift side of one page scenario. The session hands it every page message other than
/// `hello`, `log` and `result`, on the WebSocket server's serial event queue.
protocol InteropScenario: AnyObject, Sendable {
  /// Starts what the page needs before Chromium runs; returns extra query parameters for the
  /// page URL (e.g. `wcs` = the WCS server's WebSocket URL).
  func prepare() throws -> [String: String]
  /// Handles one message from the page; `reply` sends a message back to it.
  func handle(_ message: JSONValue, reply: @escaping @Sendable (JSONValue) -> Void)
  /// Swift-side figures for the summary (under `peer`), read after Chromium has ended.
  func finish() -> JSONValue
}

extension InteropScenario {
  func prepare() throws -> [String: String] { [:] }
}

/// Scenarios that run entirely in the page (`offer`, `loopback`): the peer only serves the page
/// and collects the result.
final class PageOnlyScenario: InteropScenario {
  func handle(_ message: JSONValue, reply: @escaping @Sendable (JSONValue) -> Void) {}
  func finish() -> JSONValue { .null }
}

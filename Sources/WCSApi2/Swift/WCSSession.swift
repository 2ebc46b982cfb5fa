/// Swift wrapper of `FPWCSApi2Session` (`WCSSession`, api-surface.md §2.5, §7): throwing init,
/// `on(_:_:)` without the `callback:` label; callbacks receive the underlying session.
public final class WCSSession: Sendable {
  /// The wrapped session.
  public let session: FPWCSApi2Session

  /// Creates a session, as `FPWCSApi2.createSession(_:)`.
  /// - Throws: `WCSError.invalidOptions`/`.invalidArgument` for bad options.
  public init(_ options: FPWCSApi2SessionOptions) throws {
    session = try FPWCSApi2.createSession(options)
  }

  /// Wraps an existing session (e.g. one made by `FPWCSApi2.createSession(_:)`).
  public init(session: FPWCSApi2Session) {
    self.session = session
  }

  /// Sets the callback for one status (replacing an earlier one).
  public func on(_ status: kFPWCSSessionStatus, _ callback: @escaping (FPWCSApi2Session?) -> Void) {
    session.on(status, callback: callback)
  }

  /// Connects; status callbacks report the result.
  public func connect() { session.connect() }

  /// Connects and returns once Established; throws `WCSError` with the reason otherwise.
  public func connect() async throws { try await session.connect() }

  /// Disconnects.
  public func disconnect() { session.disconnect() }

  /// Current status.
  public func getStatus() -> kFPWCSSessionStatus { session.getStatus() }

  /// Creates a wrapped stream.
  /// - Throws: `WCSError.invalidOptions` without a stream name, `.invalidOption(field:reason:)`
  ///   for a name or constraint out of `FPWCSApi2StreamLimits`.
  public func createStream(_ options: FPWCSApi2StreamOptions) throws -> WCSStream {
    WCSStream(try session.createStream(options))
  }

  /// Live streams, wrapped.
  public func getStreams() -> [WCSStream] { session.getStreams().map(WCSStream.init) }

  /// The server URL.
  public func getServerUrl() -> String { session.getServerUrl() }

  /// The server's `authToken`.
  public func getAuthToken() -> String? { session.getAuthToken() }

  /// Sends a JSON object to the server app; `handler` learns the result.
  public func sendData(_ data: [String: Any], handler: FPWCSApi2DataHandler? = nil) {
    session.sendData(data, handler: handler)
  }

  /// Sends a JSON object and returns the accepted `DataStatusEvent`; throws `WCSError` otherwise.
  public func sendData(_ data: [String: Any]) async throws -> FPWCSApi2Data {
    try await session.sendData(data)
  }

  /// Every status change from now on.
  public var statusUpdates: AsyncStream<kFPWCSSessionStatus> { session.statusUpdates }
}

/// Optional extras of a media engine that runs its own I/O threads. The driver calls
/// `attach(wakeUp:)` once at start; the engine calls `wakeUp` (from any thread) whenever it has
/// new events, and the driver then calls `takeEvents()` on its queue. Engines without this are
/// polled every `WCSLocalServer.mediaPollMillis` while streams exist.
public protocol LocalServerMediaEngineHooks: LocalServerMediaEngine {
  /// Gives the engine the function that makes the driver collect its events.
  func attach(wakeUp: @escaping @Sendable () -> Void)
  /// The server is stopping: every stream has already been released (`releaseMedia`);
  /// close sockets and finish writing files before returning.
  func shutdown()
}

/// The engine used when none is configured: every stream fails with `Media engine not
/// available`, so signalling works and clients get a clear FAILED status.
public final class UnavailableMediaEngine: LocalServerMediaEngine {
  /// The FAILED `info` it reports.
  public static let reason = "Media engine not available"
  private var events: [LocalServerMediaEvent] = []

  /// Creates the engine.
  public init() {}

  /// Fails publishers and players; ignores the rest.
  public func perform(_ request: LocalServerMediaRequest) {
    switch request {
    case .createPublisher(let publisher):
      events.append(.failed(mediaSessionId: publisher.mediaSessionId, reason: Self.reason))
    case .createPlayer(let player):
      events.append(.failed(mediaSessionId: player.mediaSessionId, reason: Self.reason))
    case .snapshot(_, let requestId):
      events.append(.snapshotFailed(requestId: requestId, reason: Self.reason))
    case .releaseMedia, .requestKeyFrame: break
    }
  }

  /// Events since the last call.
  public func takeEvents() -> [LocalServerMediaEvent] {
    defer { events.removeAll() }
    return events
  }
}

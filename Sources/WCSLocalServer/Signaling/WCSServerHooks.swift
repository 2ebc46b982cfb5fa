import WCSTransport

/// Questions the signalling core asks the application that runs it: WCS's REST hooks
/// (`connect`, `publishStream`, `playStream`, …, each allowed, refused or rewritten by a web
/// service per `appKey`), in process. `nil` hooks allow everything.
///
/// Two values are equal only when they are copies with the same closures (a closure set since
/// makes them differ): closures cannot be compared.
public struct WCSServerHooks: Sendable, Equatable {
  private final class Identity: Sendable {}
  private var identity = Identity()

  /// Decides each connect, publish, play, room join and call before the core acts on it
  /// (`WCSAccessAction`). The core holds the session's later messages until the answer, which
  /// the driver feeds back with `WCSServerCore.accessDecided(_:_:now:)`.
  public var authorize: (@Sendable (WCSAccessRequest) async -> WCSAccessDecision)? {
    didSet { identity = Identity() }
  }
  /// Decides each HTTP download of a record (`WCSAccessAction.recordDownload`, `fields`
  /// `["name": <file name>]`, `token` from the `token` query argument). Synchronous: the HTTP
  /// server asks on its service thread before it opens the file, and waiting there would stall
  /// every signalling connection. `.rewrite` counts as a refusal (a download cannot be sent
  /// elsewhere). `nil`: every download is allowed.
  public var authorizeRecordDownload: (@Sendable (WCSAccessRequest) -> WCSAccessDecision)? {
    didSet { identity = Identity() }
  }
  /// True when a file named like this (a record name with its extension) exists already, so a
  /// new record gets a suffixed name instead (`RecordNaming.uniqueFileName`). `nil`: only the
  /// names of the core's own unfinished records count as taken.
  public var recordNameTaken: (@Sendable (String) -> Bool)? {
    didSet { identity = Identity() }
  }

  /// No hooks.
  public init() {}

  /// Equal when both are copies of one value: closures cannot be compared, so hooks made
  /// separately are never equal, even with the same code.
  public static func == (lhs: WCSServerHooks, rhs: WCSServerHooks) -> Bool {
    lhs.identity === rhs.identity
  }
}

/// The `o=` line one side writes into every offer or answer it makes (RFC 8866 §5.2): its own
/// session id, never the peer's (RFC 3264 §5), kept for the whole session, and a session version
/// that goes up by one with each new description from this side (RFC 3264 §8; JSEP,
/// RFC 8829 §5.2.2 and §5.3.2).
public struct SDPLocalOrigin: Hashable, Sendable {
  /// Largest session id written: 62 bits, so the decimal id and any version arithmetic a peer
  /// does on it stay within a signed 64-bit integer (RFC 8829 §5.2.1).
  public static let maxSessionId: UInt64 = 1 << 62

  /// `<sess-id>`, 1...2^62.
  public let sessionId: UInt64
  /// `<sess-version>` of the last description made; `nil` before the first.
  public private(set) var lastVersion: UInt64?
  /// `<sess-version>` of the first description.
  public let firstVersion: UInt64

  /// An origin with a given session id (tests, or a session id kept elsewhere).
  public init(sessionId: UInt64, firstVersion: UInt64 = 1) {
    self.sessionId = sessionId
    self.firstVersion = firstVersion
  }

  /// An origin with a random session id in 1...2^62 from `generator`.
  public init(using generator: inout some RandomNumberGenerator, firstVersion: UInt64 = 1) {
    self.init(
      sessionId: UInt64.random(in: 1...Self.maxSessionId, using: &generator),
      firstVersion: firstVersion)
  }

  /// The origin for the next description: the same session id, the version one above the last
  /// (or `firstVersion` the first time).
  public mutating func next() -> SDPOrigin {
    let version = lastVersion.map { $0 &+ 1 } ?? firstVersion
    lastVersion = version
    return SDPOrigin(sessionId: "\(sessionId)", sessionVersion: "\(version)")
  }
}

/// Identifies one WebSocket connection of the local server. The driver picks the value (any
/// number unique among open connections) and passes it with every input; the core never
/// invents one.
public struct WCSConnectionID: Hashable, Sendable, Comparable, CustomStringConvertible,
  ExpressibleByIntegerLiteral
{
  /// The driver's number for the connection.
  public var rawValue: UInt64

  /// Wraps the driver's number.
  public init(_ rawValue: UInt64) { self.rawValue = rawValue }

  /// Lets tests write `connectionOpened(1, ...)`.
  public init(integerLiteral value: UInt64) { self.rawValue = value }

  /// `#<number>`, as it appears in log lines.
  public var description: String { "#\(rawValue)" }

  /// Orders by number, so the core serves connections in a reproducible order.
  public static func < (lhs: WCSConnectionID, rhs: WCSConnectionID) -> Bool {
    lhs.rawValue < rhs.rawValue
  }
}

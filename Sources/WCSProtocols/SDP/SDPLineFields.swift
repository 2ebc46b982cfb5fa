/// `o=<username> <sess-id> <sess-version> <nettype> <addrtype> <unicast-address>`
/// (RFC 8866 §5.2). Numbers are kept as written (they may exceed 64 bits in the wild).
public struct SDPOrigin: Hashable, Sendable {
  /// Username, `-` when none.
  public var username: String
  /// Session id (decimal digits as written).
  public var sessionId: String
  /// Session version (decimal digits as written).
  public var sessionVersion: String
  /// Network type, `IN`.
  public var netType: String
  /// Address type, `IP4` or `IP6`.
  public var addressType: String
  /// Unicast address or host name.
  public var address: String

  /// Creates an origin.
  public init(
    username: String = "-", sessionId: String, sessionVersion: String, netType: String = "IN",
    addressType: String = "IP4", address: String = "127.0.0.1"
  ) {
    self.username = username
    self.sessionId = sessionId
    self.sessionVersion = sessionVersion
    self.netType = netType
    self.addressType = addressType
    self.address = address
  }

  /// `- 0 0 IN IP4 127.0.0.1`: used when an SDP has no (valid) `o=` line.
  public static let placeholder = SDPOrigin(sessionId: "0", sessionVersion: "0")
}

/// `c=<nettype> <addrtype> <connection-address>` (RFC 8866 §5.7). `address` keeps any
/// `/ttl/count` suffix as written.
public struct SDPConnection: Hashable, Sendable {
  /// Network type, `IN`.
  public var netType: String
  /// `IP4` or `IP6`.
  public var addressType: String
  /// Connection address (with optional multicast suffixes).
  public var address: String

  /// Creates connection data.
  public init(netType: String = "IN", addressType: String = "IP4", address: String) {
    self.netType = netType
    self.addressType = addressType
    self.address = address
  }
}

/// `b=<bwtype>:<bandwidth>` (RFC 8866 §5.8), e.g. `AS` in kbit/s or `TIAS` in bit/s
/// (RFC 3890).
public struct SDPBandwidth: Hashable, Sendable {
  /// Bandwidth type, e.g. `AS`, `CT`, `TIAS`.
  public var type: String
  /// Value in the unit of `type` (kbit/s for AS/CT, bit/s for TIAS).
  public var value: UInt64

  /// Creates a bandwidth line.
  public init(type: String, value: UInt64) {
    self.type = type
    self.value = value
  }
}

/// `t=<start-time> <stop-time>` (NTP seconds, RFC 8866 §5.9) with its `r=` lines verbatim.
public struct SDPTiming: Hashable, Sendable {
  /// Start time in NTP seconds; 0 = unbounded.
  public var start: UInt64
  /// Stop time in NTP seconds; 0 = unbounded.
  public var stop: UInt64
  /// `r=` repeat-time values, verbatim (RFC 8866 §5.10).
  public var repeats: [String]

  /// Creates a timing line; the default is the permanent session `t=0 0`.
  public init(start: UInt64 = 0, stop: UInt64 = 0, repeats: [String] = []) {
    self.start = start
    self.stop = stop
    self.repeats = repeats
  }
}

/// One STUN or TURN server a media connection may use, parsed from a `stun:`/`turn:`/`turns:`
/// URI (RFC 7064 §3.1, RFC 7065 §3.1), as the W3C `RTCIceServer.urls` carries them.
///
/// Shapes: `stun:host[:port]` (UDP, default port 3478), `turn:host[:port][?transport=udp|tcp]`
/// (default UDP, port 3478), `turns:host[:port][?transport=tcp]` (TLS over TCP, port 5349).
/// `host` is a name, a dotted quad or a bracketed IPv6 literal (`[::1]`).
public struct MediaICEServer: Sendable, Hashable, CustomStringConvertible {
  /// The URI scheme.
  public enum Scheme: String, Sendable, Hashable {
    /// A STUN server (server-reflexive candidates, RFC 8489).
    case stun
    /// A TURN server reached over UDP or TCP (RFC 8656).
    case turn
    /// A TURN server reached over TLS (RFC 8656 §3.1, RFC 7065 `turns:`).
    case turns
  }

  /// How the client reaches the server.
  public enum Transport: String, Sendable, Hashable {
    /// UDP datagrams (default for `stun:` and `turn:`).
    case udp
    /// A TCP connection (RFC 6062 framing, `turn:…?transport=tcp`).
    case tcp
    /// TLS 1.2+ over TCP (`turns:`), certificate verified against `host`.
    case tls
  }

  /// `stun`, `turn` or `turns`.
  public var scheme: Scheme
  /// The host as written, without brackets: a name or an IP literal.
  public var host: String
  /// The server port (3478, or 5349 for `turns:`, when the URI gives none).
  public var port: UInt16
  /// UDP, TCP or TLS.
  public var transport: Transport
  /// Long-term credential username (RFC 8489 §9.2); required for TURN, ignored for STUN.
  public var username: String?
  /// Long-term credential password; required for TURN, ignored for STUN.
  public var credential: String?

  /// Makes a server from its parts (no checks; `init(url:username:credential:)` parses URIs).
  public init(
    scheme: Scheme, host: String, port: UInt16, transport: Transport, username: String? = nil,
    credential: String? = nil
  ) {
    self.scheme = scheme
    self.host = host
    self.port = port
    self.transport = transport
    self.username = username
    self.credential = credential
  }

  /// Parses one URI. Throws `MediaICEServerError` naming the URI and what is wrong: an
  /// unknown scheme (`stuns:` is not supported), an empty or malformed host, a port outside
  /// 1...65535, a query other than `transport=udp|tcp`, `turns:` with `transport=udp` (DTLS
  /// to the TURN server is not supported), or a TURN URI without username or credential.
  public init(url: String, username: String? = nil, credential: String? = nil)
    throws(MediaICEServerError)
  {
    let text = url.trimmingWhitespace
    guard let colon = text.firstIndex(of: ":") else { throw .init(url, "no scheme") }
    let schemeText = text[..<colon].lowercased()
    guard let scheme = Scheme(rawValue: schemeText) else {
      throw .init(url, "unsupported scheme '\(schemeText)' (stun:, turn: or turns:)")
    }
    var rest = Substring(text[text.index(after: colon)...])
    if rest.hasPrefix("//") {
      throw .init(url, "no '//' after the scheme (RFC 7064/7065: 'turn:host:port')")
    }
    var query: Substring?
    if let mark = rest.firstIndex(of: "?") {
      query = rest[rest.index(after: mark)...]
      rest = rest[..<mark]
    }
    let (host, portText) = try Self.splitHostPort(rest, url: url)
    let port: UInt16
    if let portText {
      guard let value = UInt16(portText), value > 0 else {
        throw .init(url, "port '\(portText)' is not in 1...65535")
      }
      port = value
    } else {
      port = scheme == .turns ? 5349 : 3478
    }
    var transport: Transport = scheme == .turns ? .tls : .udp
    if let query {
      guard scheme != .stun else { throw .init(url, "stun: takes no query") }
      let parts = query.split(separator: "=", maxSplits: 1)
      guard parts.count == 2, parts[0].lowercased() == "transport" else {
        throw .init(url, "query '\(query)' is not 'transport=udp' or 'transport=tcp'")
      }
      switch parts[1].lowercased() {
      case "udp":
        guard scheme == .turn else {
          throw .init(url, "turns: over UDP (DTLS) is not supported; use transport=tcp")
        }
        transport = .udp
      case "tcp": transport = scheme == .turns ? .tls : .tcp
      default: throw .init(url, "transport '\(parts[1])' is neither udp nor tcp")
      }
    }
    if scheme != .stun {
      guard let username, !username.isEmpty, let credential, !credential.isEmpty else {
        throw .init(url, "TURN needs a username and a credential")
      }
    }
    self.init(
      scheme: scheme, host: host, port: port, transport: transport,
      username: scheme == .stun ? nil : username, credential: scheme == .stun ? nil : credential)
  }

  /// `host` and the port text of `host[:port]` or `[v6][:port]`.
  private static func splitHostPort(_ text: Substring, url: String) throws(MediaICEServerError)
    -> (String, Substring?)
  {
    if text.hasPrefix("[") {
      guard let close = text.firstIndex(of: "]") else {
        throw .init(url, "IPv6 literal without ']'")
      }
      let host = text[text.index(after: text.startIndex)..<close]
      let after = text[text.index(after: close)...]
      guard !host.isEmpty else { throw .init(url, "empty host") }
      if after.isEmpty { return (String(host), nil) }
      guard after.hasPrefix(":") else { throw .init(url, "junk after ']'") }
      return (String(host), after.dropFirst())
    }
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count <= 2 else {
      throw .init(url, "more than one ':' (write IPv6 hosts in brackets)")
    }
    let host = parts[0]
    guard !host.isEmpty else { throw .init(url, "empty host") }
    guard host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" }) else {
      throw .init(url, "host '\(host)' has characters a host name cannot have")
    }
    return (String(host), parts.count == 2 ? parts[1] : nil)
  }

  /// The URI again, normalised: `turn:host:port?transport=tcp` (no credentials).
  public var description: String {
    let hostText = host.contains(":") ? "[\(host)]" : host
    let query =
      switch (scheme, transport) {
      case (.turn, .tcp): "?transport=tcp"
      default: ""
      }
    return "\(scheme.rawValue):\(hostText):\(port)\(query)"
  }
}

/// Why an ICE server URI was refused: the URI as given and the reason.
public struct MediaICEServerError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The URI as the app gave it.
  public var url: String
  /// What is wrong with it.
  public var reason: String

  /// Makes an error.
  public init(_ url: String, _ reason: String) {
    self.url = url
    self.reason = reason
  }

  /// `bad ICE server URL 'turn:…': <reason>`.
  public var description: String { "bad ICE server URL '\(url)': \(reason)" }
}

/// Which candidates a connection may use (W3C `RTCIceTransportPolicy`).
public enum MediaICETransportPolicy: String, Sendable, Hashable {
  /// Host, server-reflexive and relayed candidates.
  case all
  /// Only TURN relayed candidates: host addresses are never revealed or used directly.
  case relay
}

extension String {
  fileprivate var trimmingWhitespace: Substring {
    let start = firstIndex { !$0.isWhitespace } ?? endIndex
    let end = lastIndex { !$0.isWhitespace }.map { index(after: $0) } ?? start
    return self[start..<max(start, end)]
  }
}

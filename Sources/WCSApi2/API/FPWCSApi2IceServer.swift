import WCSMediaSeam

/// One STUN or TURN server, as an entry of the iOS SDK's `mediaConfig.iceServers`
/// (`RTCIceServer`): its URIs, and the long-term credential TURN needs (RFC 8489 §9.2).
///
/// `urls` shapes (RFC 7064 §3.1, RFC 7065 §3.1): `stun:host[:port]`,
/// `turn:host[:port][?transport=udp|tcp]`, `turns:host[:port][?transport=tcp]`; ports default
/// to 3478 (5349 for `turns:`); IPv6 hosts in brackets. A bad URI makes session or stream
/// creation throw `WCSError.invalidOption(field: "iceServers[i].urls[j]", …)`.
public final class FPWCSApi2IceServer {
  /// The server's URIs; each becomes one server entry with this credential.
  public var urls: [String]
  /// TURN username; required for `turn:`/`turns:`.
  public var username: String?
  /// TURN password; required for `turn:`/`turns:`.
  public var credential: String?

  /// A server with its URIs and optional credential.
  public init(urls: [String], username: String? = nil, credential: String? = nil) {
    self.urls = urls
    self.username = username
    self.credential = credential
  }

  /// A server with one URI.
  public convenience init(url: String, username: String? = nil, credential: String? = nil) {
    self.init(urls: [url], username: username, credential: credential)
  }
}

/// Which candidates a stream may use (iOS `RTCIceTransportPolicy`, W3C `iceTransportPolicy`).
public enum FPWCSApi2IceTransportPolicy: String, Sendable {
  /// Host, server-reflexive and relayed candidates (the default).
  case all
  /// TURN relayed candidates only: local addresses are never revealed or used directly.
  case relay
}

/// The ICE settings of a session or stream, parsed: `nil` members leave the choice to the
/// next level (stream → session → media engine).
struct ICESettings: Sendable, Equatable {
  var servers: [MediaICEServer]?
  var policy: MediaICETransportPolicy?

  /// Parses `servers` (every URI of every entry, in order).
  /// - Throws: `WCSError.invalidOption(field:reason:)` naming the entry and URI.
  init(servers: [FPWCSApi2IceServer]?, policy: FPWCSApi2IceTransportPolicy?) throws(WCSError) {
    self.policy = policy.map { $0 == .relay ? .relay : .all }
    guard let servers else {
      self.servers = nil
      return
    }
    var parsed: [MediaICEServer] = []
    for (i, server) in servers.enumerated() {
      guard !server.urls.isEmpty else {
        throw .invalidOption(field: "iceServers[\(i)].urls", reason: "no URL")
      }
      for (j, url) in server.urls.enumerated() {
        do throws(MediaICEServerError) {
          parsed.append(
            try MediaICEServer(url: url, username: server.username, credential: server.credential)
          )
        } catch {
          throw .invalidOption(field: "iceServers[\(i)].urls[\(j)]", reason: "\(error)")
        }
      }
    }
    self.servers = parsed
  }

  /// Settings that give nothing (the engine decides).
  init() {}

  /// These settings, with `fallback`'s members where these give none.
  func over(_ fallback: ICESettings) -> ICESettings {
    var merged = self
    if merged.servers == nil { merged.servers = fallback.servers }
    if merged.policy == nil { merged.policy = fallback.policy }
    return merged
  }

  /// Puts the settings into a media request.
  func apply(to request: inout MediaConnectionRequest) {
    request.iceServers = servers
    request.iceTransportPolicy = policy
  }
}

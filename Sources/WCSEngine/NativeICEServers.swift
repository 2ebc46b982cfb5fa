import Foundation
import WCSMediaSeam
import WCSPeerConnection
import WCSProtocols

/// Turns a request's ICE servers (`MediaConnectionRequest.iceServers`) into the STUN and TURN
/// entries of a `PeerConnectionConfiguration`: names resolved to addresses, transports
/// mapped, and servers the transport cannot use dropped with a note saying why.
enum NativeICEServers {
  /// TURN transports `PeerConnection` can reach a server with: UDP, TCP (RFC 8656 §3.1) and
  /// TLS (`turns:`, RFC 7065); an entry of any other would be skipped with a note.
  static let supportedTURNTransports = Set(ICETURNTransport.allCases)

  /// What the mapping gave: the configuration to use and one note per server left out.
  struct Resolution: Sendable {
    var configuration: PeerConnectionConfiguration
    var notes: [String]
  }

  /// `base` with the request's servers and policy in place of its own when the request gives
  /// them (`nil` keeps the base's). A name is resolved with `getaddrinfo` (blocking; IP
  /// literals never touch DNS); a name that does not resolve is a note, not an error, so the
  /// other servers and host candidates still get their chance.
  static func resolve(
    _ request: MediaConnectionRequest, base: PeerConnectionConfiguration,
    lookup: (String) -> [ICEIPAddress] = resolveHost
  ) -> Resolution {
    var configuration = base
    var notes: [String] = []
    if let policy = request.iceTransportPolicy {
      configuration.iceTransportPolicy = policy == .relay ? .relay : .all
    }
    if let servers = request.iceServers {
      configuration.stunServers = []
      configuration.turnServers = []
      for server in servers {
        let addresses = lookup(server.host)
        guard let ip = addresses.first else {
          notes.append("\(server): host '\(server.host)' did not resolve")
          continue
        }
        let address = ICETransportAddress(ip: ip, port: server.port)
        switch server.scheme {
        case .stun:
          configuration.stunServers.append(address)
        case .turn, .turns:
          let transport: ICETURNTransport =
            switch server.transport {
            case .udp: .udp
            case .tcp: .tcp
            case .tls: .tls
            }
          guard supportedTURNTransports.contains(transport) else {
            notes.append("\(server): TURN over \(transport.rawValue.uppercased()) not supported")
            continue
          }
          configuration.turnServers.append(
            ICETURNServer(
              address: address, username: server.username ?? "",
              password: server.credential ?? "", transport: transport,
              serverName: ICEIPAddress(server.host) == nil ? server.host : nil))
        }
      }
    }
    if request.transport == .tcp {
      // As the iOS SDK: TCP offers TCP candidates only (RFC 6544 active host candidates), and
      // relayed ones from TURN servers reached over TCP or TLS; nothing goes out over UDP.
      configuration.iceCandidateProtocol = .tcp
      let udpServers = configuration.turnServers.filter { !$0.transport.isStream }
      if !configuration.stunServers.isEmpty || !udpServers.isEmpty {
        notes.append("transport TCP: STUN and TURN over UDP unused (TURN over TCP/TLS kept)")
        configuration.stunServers = []
        configuration.turnServers.removeAll { !$0.transport.isStream }
      }
      if configuration.iceTransportPolicy == .relay && configuration.turnServers.isEmpty {
        notes.append("iceTransportPolicy relay with transport TCP needs TURN over TCP or TLS")
      }
    } else if configuration.iceTransportPolicy == .relay && configuration.turnServers.isEmpty {
      notes.append("iceTransportPolicy relay without a usable TURN server: nothing to gather")
    }
    return Resolution(configuration: configuration, notes: notes)
  }

  /// IPv4 then IPv6 addresses of `host`: the literal itself, or `getaddrinfo`'s answers.
  static func resolveHost(_ host: String) -> [ICEIPAddress] {
    if let literal = ICEIPAddress(host) { return [literal] }
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, nil, &hints, &list) == 0 else { return [] }
    defer { freeaddrinfo(list) }
    var v4: [ICEIPAddress] = []
    var v6: [ICEIPAddress] = []
    var entry = list
    while let current = entry {
      if let address = current.pointee.ai_addr {
        if current.pointee.ai_family == AF_INET {
          let octets = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
            withUnsafeBytes(of: $0.pointee.sin_addr) { Array($0) }
          }
          if let ip = ICEIPAddress(octets: octets), !v4.contains(ip) { v4.append(ip) }
        } else if current.pointee.ai_family == AF_INET6 {
          let octets = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
            withUnsafeBytes(of: $0.pointee.sin6_addr) { Array($0) }
          }
          if let ip = ICEIPAddress(octets: octets), !v6.contains(ip) { v6.append(ip) }
        }
      }
      entry = current.pointee.ai_next
    }
    return v4 + v6
  }

  /// The transport protocol of a candidate as `RTCIceCandidateStats.protocol` names it.
  /// `udp`, or `tcp` for ICE-TCP candidates (RFC 6544).
  static func candidateProtocol(_ candidate: ICECandidate) -> String {
    candidate.transport.rawValue
  }

  /// `RTCIceCandidateStats.relayProtocol` of a relayed candidate: how we reach the TURN
  /// server holding it; `nil` for other types, or when servers of several transports make it
  /// ambiguous.
  static func relayProtocol(
    _ candidate: ICECandidate, configuration: PeerConnectionConfiguration
  ) -> String? {
    guard candidate.type == .relayed else { return nil }
    let transports = Set(configuration.turnServers.map(\.transport))
    return transports.count == 1 ? transports.first?.rawValue : nil
  }
}

/// An ICE candidate as carried in `a=candidate` (RFC 8839 §5.1):
/// `<foundation> <component> <transport> <priority> <address> <port> typ <type>
/// [raddr <addr>] [rport <port>] *(<extension name> <extension value>)`.
/// `tcptype` (RFC 6544 §4.5) and `generation` are typed; every other extension pair is kept
/// in order in `extensions`.
public struct ICECandidateAttribute: Hashable, Sendable {
  /// Foundation, 1–32 ice-chars.
  public var foundation: String
  /// Component id: 1 = RTP, 2 = RTCP (RFC 8445 §5.1.1.1).
  public var component: Int
  /// Transport as written (`udp`, `UDP`, `tcp`, or an unknown token such as `ssltcp`).
  public var transport: String
  /// Priority (RFC 8445 §5.1.2), 1...2^31-1 in practice.
  public var priority: UInt32
  /// Connection address: IPv4, IPv6 or an mDNS/FQDN name.
  public var address: String
  /// Port, 0...65535.
  public var port: Int
  /// Candidate type (`typ`).
  public var type: SDPCandidateType
  /// `raddr`: related address for reflexive/relayed candidates.
  public var relatedAddress: String?
  /// `rport`: related port.
  public var relatedPort: Int?
  /// `tcptype` for TCP candidates: `active`, `passive` or `so` (RFC 6544 §4.5).
  public var tcpType: String?
  /// `generation` (libwebrtc extension).
  public var generation: Int?
  /// Other extension name/value pairs in written order (e.g. `network-id`, `ufrag`).
  public var extensions: [FormatParameter]

  /// Creates a candidate.
  public init(
    foundation: String, component: Int, transport: String, priority: UInt32, address: String,
    port: Int, type: SDPCandidateType, relatedAddress: String? = nil, relatedPort: Int? = nil,
    tcpType: String? = nil, generation: Int? = nil, extensions: [FormatParameter] = []
  ) {
    self.foundation = foundation
    self.component = component
    self.transport = transport
    self.priority = priority
    self.address = address
    self.port = port
    self.type = type
    self.relatedAddress = relatedAddress
    self.relatedPort = relatedPort
    self.tcpType = tcpType
    self.generation = generation
    self.extensions = extensions
  }

  /// `true` when the transport is UDP (case-insensitive).
  public var isUDP: Bool { transport.lowercased() == "udp" }

  /// `true` when the transport is TCP (case-insensitive, RFC 6544).
  public var isTCP: Bool { transport.lowercased() == "tcp" }

  /// Parses the attribute value (what follows `a=candidate:`); a leading `candidate:` (as in
  /// the trickle form) is accepted too. Returns nil when a mandatory field is missing or not a
  /// number in range, or `rport`/`generation` is not a number. An odd trailing extension name
  /// gets an empty value.
  public init?(attributeValue: some StringProtocol) {
    guard let c = String.withBytes(of: attributeValue, { ICECandidateAttribute(bytes: $0) })
    else { return nil }
    self = c
  }

  init?(bytes value: ByteSlice) {
    var c = value.trimmed()
    if c.hasPrefix("candidate:") { c = c.dropFirst(10) }
    guard let foundation = c.nextField(),
      let component = c.nextField()?.int(in: 1...256),
      let transport = c.nextField(),
      let priority = c.nextField()?.uint32(),
      let address = c.nextField(),
      let port = c.nextField()?.int(in: 0...65535),
      c.nextField()?.equals("typ") == true,
      let typeToken = c.nextField()
    else { return nil }
    // Fill locals and initialize once: mutating `self` field by field in a failable init costs
    // several times more.
    var relatedAddress: String? = nil
    var relatedPort: Int? = nil
    var tcpType: String? = nil
    var generation: Int? = nil
    var extensions: [FormatParameter] = []
    while let name = c.nextField() {
      let value = c.nextField()
      if relatedAddress == nil, name.equals("raddr") {
        relatedAddress = value?.string ?? ""
      } else if relatedPort == nil, name.equals("rport") {
        guard let p = value?.int(in: 0...65535) else { return nil }
        relatedPort = p
      } else if tcpType == nil, name.equals("tcptype") {
        tcpType = value?.token ?? ""
      } else if generation == nil, name.equals("generation") {
        guard let g = value?.int() else { return nil }
        generation = g
      } else {
        // Browsers add two or three (network-id, network-cost, ufrag): one allocation, no regrowth.
        if extensions.isEmpty { extensions.reserveCapacity(4) }
        extensions.append(FormatParameter(name.token, value?.token ?? ""))
      }
    }
    let type: SDPCandidateType
    if typeToken.equals("host") {
      type = .host
    } else if typeToken.equals("srflx") {
      type = .serverReflexive
    } else if typeToken.equals("prflx") {
      type = .peerReflexive
    } else if typeToken.equals("relay") {
      type = .relayed
    } else {
      type = .other(typeToken.string)
    }
    self.init(
      foundation: foundation.string, component: component, transport: transport.token,
      priority: priority, address: address.string, port: port, type: type,
      relatedAddress: relatedAddress, relatedPort: relatedPort, tcpType: tcpType,
      generation: generation, extensions: extensions)
  }

  /// The attribute value in RFC 8839 §5.1 order, without the `candidate:` prefix.
  public var attributeValue: String {
    var w = ByteWriter(capacity: 128)
    SDPWriter.candidate(self, &w)
    return w.string
  }
}

/// Candidate types (RFC 8445 §5.1.1, `cand-type` of RFC 8839 §5.1).
public enum SDPCandidateType: Hashable, Sendable {
  /// `host`.
  case host
  /// `srflx`: server reflexive.
  case serverReflexive
  /// `prflx`: peer reflexive.
  case peerReflexive
  /// `relay`: relayed (TURN).
  case relayed
  /// Any other token, kept as written.
  case other(String)

  /// Maps a `typ` token (case-sensitive as in the grammar; unknown tokens → `.other`).
  public init(token: String) {
    switch token {
    case "host": self = .host
    case "srflx": self = .serverReflexive
    case "prflx": self = .peerReflexive
    case "relay": self = .relayed
    default: self = .other(token)
    }
  }

  /// The `typ` token.
  public var token: String {
    switch self {
    case .host: return "host"
    case .serverReflexive: return "srflx"
    case .peerReflexive: return "prflx"
    case .relayed: return "relay"
    case .other(let t): return t
    }
  }
}

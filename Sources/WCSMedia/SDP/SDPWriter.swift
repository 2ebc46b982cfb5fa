/// Serializes a ``SessionDescription`` with CRLF line ends in the RFC 8866 §5 order:
/// `v o s i u e p c b t r z k a*` then per section `m i c* b* k a*`. Lines kept verbatim
/// (`unknownLines`) are written just before the attributes of their level.
public enum SDPWriter {
  /// The SDP text; every line (including the last) ends with CRLF (RFC 8866 §5).
  public static func write(_ sdp: SessionDescription) -> String {
    var out = ""
    out.reserveCapacity(1024 + sdp.media.count * 1536)
    out += "v=\(sdp.version)\r\n"
    let o = sdp.origin
    out += "o=" + o.username + " " + o.sessionId + " " + o.sessionVersion + " " + o.netType
    out += " " + o.addressType + " " + o.address + "\r\n"
    out += "s=" + sdp.sessionName + "\r\n"
    if let i = sdp.information { out += "i=" + i + "\r\n" }
    if let u = sdp.uri { out += "u=" + u + "\r\n" }
    for e in sdp.emails { out += "e=" + e + "\r\n" }
    for p in sdp.phones { out += "p=" + p + "\r\n" }
    if let c = sdp.connection { connection(c, &out) }
    for b in sdp.bandwidths { out += "b=" + b.type + ":\(b.value)\r\n" }
    for t in sdp.timing {
      out += "t=\(t.start) \(t.stop)\r\n"
      for r in t.repeats { out += "r=" + r + "\r\n" }
    }
    if let z = sdp.timeZones { out += "z=" + z + "\r\n" }
    if let k = sdp.encryptionKey { out += "k=" + k + "\r\n" }
    for line in sdp.unknownLines { out += line + "\r\n" }
    for a in sdp.attributes { attribute(a, &out) }
    for m in sdp.media { media(m, &out) }
    return out
  }

  /// The `a=` line for one attribute, without the line end (e.g. `a=rtpmap:111 opus/48000/2`).
  public static func line(for attribute: SDPAttribute) -> String {
    var s = ""
    self.attributeBody(attribute, &s)
    return s
  }

  private static func media(_ m: MediaDescription, _ out: inout String) {
    out += "m=" + m.media + " \(m.port)"
    if let c = m.portCount { out += "/\(c)" }
    out += " " + m.proto
    for f in m.formats { out += " " + f }
    out += "\r\n"
    if let i = m.information { out += "i=" + i + "\r\n" }
    for c in m.connections { connection(c, &out) }
    for b in m.bandwidths { out += "b=" + b.type + ":\(b.value)\r\n" }
    if let k = m.encryptionKey { out += "k=" + k + "\r\n" }
    for line in m.unknownLines { out += line + "\r\n" }
    for a in m.attributes { attribute(a, &out) }
  }

  private static func connection(_ c: SDPConnection, _ out: inout String) {
    out += "c=" + c.netType + " " + c.addressType + " " + c.address + "\r\n"
  }

  private static func attribute(_ a: SDPAttribute, _ out: inout String) {
    attributeBody(a, &out)
    out += "\r\n"
  }

  private static func attributeBody(_ a: SDPAttribute, _ out: inout String) {
    switch a {
    case .rtpmap(let r):
      out += "a=rtpmap:\(r.payloadType) " + r.encodingName + "/\(r.clockRate)"
      if let c = r.channels { out += "/\(c)" }
    case .fmtp(let f):
      out += "a=fmtp:\(f.payloadType) "
      for (i, p) in f.parameters.enumerated() {
        if i > 0 { out += ";" }
        out += p.name
        if let v = p.value { out += "=" + v }
      }
    case .rtcpFeedback(let fb):
      out += "a=rtcp-fb:" + (fb.payloadType.map { String($0) } ?? "*") + " " + fb.type
      if let p = fb.parameter { out += " " + p }
    case .extmap(let e):
      out += "a=extmap:\(e.id)"
      if let d = e.direction { out += "/" + d.rawValue }
      out += " " + e.uri
      if let x = e.extensionAttributes { out += " " + x }
    case .ssrc(let s):
      out += "a=ssrc:\(s.ssrc) " + s.attribute
      if let v = s.value { out += ":" + v }
    case .ssrcGroup(let g):
      out += "a=ssrc-group:" + g.semantics
      for s in g.ssrcs { out += " \(s)" }
    case .msid(let m):
      out += "a=msid:" + m.streamId
      if let t = m.trackId { out += " " + t }
    case .mid(let m): out += "a=mid:" + m
    case .group(let g):
      out += "a=group:" + g.semantics
      for m in g.mids { out += " " + m }
    case .rtcpMux: out += "a=rtcp-mux"
    case .rtcpReducedSize: out += "a=rtcp-rsize"
    case .iceUfrag(let u): out += "a=ice-ufrag:" + u
    case .icePwd(let p): out += "a=ice-pwd:" + p
    case .iceOptions(let o):
      out += "a=ice-options:"
      for (i, t) in o.enumerated() { out += (i > 0 ? " " : "") + t }
    case .iceLite: out += "a=ice-lite"
    case .candidate(let c): out += "a=candidate:" + c.attributeValue
    case .endOfCandidates: out += "a=end-of-candidates"
    case .fingerprint(let f): out += "a=fingerprint:" + f.hashFunction + " " + f.hexString
    case .setup(let s): out += "a=setup:" + s.rawValue
    case .direction(let d): out += "a=" + d.rawValue
    case .sctpPort(let p): out += "a=sctp-port:\(p)"
    case .other(let name, let value):
      out += "a=" + name
      if let value { out += ":" + value }
    }
  }
}

extension SessionDescription {
  /// The SDP text with CRLF line ends (see ``SDPWriter/write(_:)``).
  public var sdpText: String { SDPWriter.write(self) }

  /// Parses `text` leniently (see ``SDPParser/parse(_:)``), dropping the warnings.
  ///
  /// - Throws: ``SDPParseError`` when the SDP is unusable.
  public init(parsing text: String) throws(SDPParseError) {
    self = try SDPParser.parse(text).description
  }
}

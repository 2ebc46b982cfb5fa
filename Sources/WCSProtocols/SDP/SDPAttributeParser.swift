/// Parses the value of one `a=` line into an ``SDPAttribute``.
enum SDPAttributeParser {
  /// Outcome of parsing one attribute.
  enum Outcome {
    /// A typed attribute.
    case typed(SDPAttribute)
    /// A known attribute whose value is malformed (kept as `.other` with a warning).
    case malformed
    /// Not a typed attribute (kept as `.other` silently).
    case unknown
    /// A valid `a=ssrc` whose value the caller makes into a string (it shares repeated ones).
    case ssrc(UInt32, String, ByteSlice?)
  }

  // Each typed case unwraps and wraps in place: going through `Optional.map` and a shared
  // helper made the compiler destroy an optional payload on every path.
  static func parse(name: ByteSlice, value: ByteSlice?) -> Outcome {
    guard let value else { return flag(name) }
    switch name.count {
    case 3:
      if name.equals("mid") {
        if let a = token(value) { return .typed(.mid(a)) }
        return .malformed
      }
    case 4:
      if name.equals("fmtp") {
        if let a = fmtp(value) { return .typed(.fmtp(a)) }
        return .malformed
      }
      if name.equals("ssrc") {
        var c = value
        guard let ssrc = c.nextField()?.uint32() else { return .malformed }
        let (attr, v) = c.trimmed().splitOnce(UInt8(ascii: ":"))
        guard !attr.isEmpty else { return .malformed }
        return .ssrc(ssrc, attr.token, v)
      }
      if name.equals("msid") {
        if let a = msid(value) { return .typed(.msid(a)) }
        return .malformed
      }
    case 5:
      if name.equals("group") {
        if let a = group(value) { return .typed(.group(a)) }
        return .malformed
      }
      if name.equals("setup") {
        if let a = setup(value.trimmed()) { return .typed(.setup(a)) }
        return .malformed
      }
    case 6:
      if name.equals("rtpmap") {
        if let a = rtpmap(value) { return .typed(.rtpmap(a)) }
        return .malformed
      }
      if name.equals("extmap") {
        if let a = extmap(value) { return .typed(.extmap(a)) }
        return .malformed
      }
    case 7:
      if name.equals("rtcp-fb") {
        if let a = rtcpFeedback(value) { return .typed(.rtcpFeedback(a)) }
        return .malformed
      }
      if name.equals("ice-pwd") {
        if let a = token(value) { return .typed(.icePwd(a)) }
        return .malformed
      }
    case 9:
      if name.equals("ice-ufrag") {
        if let a = token(value) { return .typed(.iceUfrag(a)) }
        return .malformed
      }
      if name.equals("candidate") {
        if let a = ICECandidateAttribute(bytes: value) { return .typed(.candidate(a)) }
        return .malformed
      }
      if name.equals("sctp-port") {
        if let a = value.trimmed().int(in: 0...65535) { return .typed(.sctpPort(a)) }
        return .malformed
      }
    case 10:
      if name.equals("ssrc-group") {
        if let a = ssrcGroup(value) { return .typed(.ssrcGroup(a)) }
        return .malformed
      }
    case 11:
      if name.equals("fingerprint") {
        if let a = CertificateFingerprint(bytes: value) { return .typed(.fingerprint(a)) }
        return .malformed
      }
      if name.equals("ice-options") {
        var v = value
        var tokens: [String] = []
        while let t = v.nextField() { tokens.append(t.string) }
        return tokens.isEmpty ? .malformed : .typed(.iceOptions(tokens))
      }
    default: break
    }
    return .unknown
  }

  private static func flag(_ name: ByteSlice) -> Outcome {
    switch name.count {
    case 8:
      if name.equals("rtcp-mux") { return .typed(.rtcpMux) }
      if name.equals("sendrecv") { return .typed(.direction(.sendrecv)) }
      if name.equals("sendonly") { return .typed(.direction(.sendonly)) }
      if name.equals("recvonly") { return .typed(.direction(.recvonly)) }
      if name.equals("inactive") { return .typed(.direction(.inactive)) }
      if name.equals("ice-lite") { return .typed(.iceLite) }
    case 10:
      if name.equals("rtcp-rsize") { return .typed(.rtcpReducedSize) }
    case 17:
      if name.equals("end-of-candidates") { return .typed(.endOfCandidates) }
    default: break
    }
    return .unknown
  }

  /// Same as `DTLSSetup(rawValue:)`, without making a `String` first.
  private static func setup(_ v: ByteSlice) -> DTLSSetup? {
    if v.equals("actpass") { return .actpass }
    if v.equals("active") { return .active }
    if v.equals("passive") { return .passive }
    if v.equals("holdconn") { return .holdconn }
    return nil
  }

  /// Exactly one field.
  private static func token(_ v: ByteSlice) -> String? {
    var c = v
    guard let t = c.nextField(), c.nextField() == nil else { return nil }
    return t.token
  }

  private static func restToken(_ v: ByteSlice) -> String? {
    let t = v.trimmed()
    return t.isEmpty ? nil : t.token
  }

  private static func rest(_ v: ByteSlice) -> String? {
    let t = v.trimmed()
    return t.isEmpty ? nil : t.string
  }

  static func rtpmap(_ v: ByteSlice) -> RTPMap? {
    var c = v
    guard let ptText = c.nextField(), let pt = ptText.int(in: 0...127), let enc = c.nextField(),
      c.nextField() == nil
    else { return nil }
    var e = enc
    var done = false
    guard let name = e.nextPiece(UInt8(ascii: "/"), &done), !name.isEmpty,
      let rate = e.nextPiece(UInt8(ascii: "/"), &done)?.int(), rate > 0
    else { return nil }
    var channels: Int? = nil
    if let ch = e.nextPiece(UInt8(ascii: "/"), &done) {
      guard let n = ch.int(), n > 0, !(e.nextPiece(UInt8(ascii: "/"), &done) != nil) else {
        return nil
      }
      channels = n
    }
    return RTPMap(payloadType: pt, encodingName: name.token, clockRate: rate, channels: channels)
  }

  static func fmtp(_ v: ByteSlice) -> FormatParameters? {
    var c = v.trimmed()
    guard let pt = c.nextField()?.int(in: 0...127) else { return nil }
    var params: [FormatParameter] = []
    var done = false
    while let piece = c.nextPiece(UInt8(ascii: ";"), &done) {
      let p = piece.trimmed()
      if p.isEmpty { continue }
      let (k, val) = p.splitOnce(UInt8(ascii: "="))
      if params.isEmpty { params.reserveCapacity(4) }
      params.append(FormatParameter(k.trimmed().token, val.map { $0.trimmed().string }))
    }
    return FormatParameters(payloadType: pt, parameters: params)
  }

  static func rtcpFeedback(_ v: ByteSlice) -> RTCPFeedback? {
    var c = v
    guard let ptText = c.nextField(), let type = c.nextField() else { return nil }
    let pt: Int?
    if ptText.equals("*") {
      pt = nil
    } else {
      guard let p = ptText.int(in: 0...127) else { return nil }
      pt = p
    }
    return RTCPFeedback(payloadType: pt, type: type.token, parameter: restToken(c))
  }

  static func extmap(_ v: ByteSlice) -> HeaderExtensionMap? {
    var c = v
    guard let head = c.nextField(), let uri = c.nextField() else { return nil }
    let (idText, dirText) = head.splitOnce(UInt8(ascii: "/"))
    guard let id = idText.int(in: 1...255) else { return nil }
    var direction: MediaDirection? = nil
    if let dirText {
      guard let d = MediaDirection(rawValue: dirText.string) else { return nil }
      direction = d
    }
    return HeaderExtensionMap(
      id: id, direction: direction, uri: uri.headerExtensionURI, extensionAttributes: rest(c))
  }

  static func ssrcGroup(_ v: ByteSlice) -> SSRCGroup? {
    var c = v
    guard let sem = c.nextField() else { return nil }
    var ssrcs: [UInt32] = []
    while let f = c.nextField() {
      guard let n = f.uint32() else { return nil }
      ssrcs.append(n)
    }
    return SSRCGroup(semantics: sem.token, ssrcs: ssrcs)
  }

  static func msid(_ v: ByteSlice) -> MediaStreamID? {
    var c = v
    guard let stream = c.nextField() else { return nil }
    let track = c.nextField()
    guard c.nextField() == nil else { return nil }
    return MediaStreamID(streamId: stream.string, trackId: track?.string)
  }

  static func group(_ v: ByteSlice) -> SDPGroup? {
    var c = v
    guard let sem = c.nextField() else { return nil }
    var mids: [String] = []
    while let f = c.nextField() { mids.append(f.token) }
    return SDPGroup(semantics: sem.string, mids: mids)
  }
}

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
  }

  @inline(__always)
  private static func outcome(_ attribute: SDPAttribute?) -> Outcome {
    guard let attribute else { return .malformed }
    return .typed(attribute)
  }

  static func parse(name: ByteSlice, value: ByteSlice?) -> Outcome {
    guard let value else { return flag(name) }
    switch name.count {
    case 3:
      if name.equals("mid") {
        return outcome(token(value).map { .mid($0) })
      }
    case 4:
      if name.equals("fmtp") {
        return outcome(fmtp(value).map { .fmtp($0) })
      }
      if name.equals("ssrc") {
        return outcome(ssrc(value).map { .ssrc($0) })
      }
      if name.equals("msid") {
        return outcome(msid(value).map { .msid($0) })
      }
    case 5:
      if name.equals("group") {
        return outcome(group(value).map { .group($0) })
      }
      if name.equals("setup") {
        return outcome(DTLSSetup(rawValue: value.trimmed().string).map { .setup($0) })
      }
    case 6:
      if name.equals("rtpmap") {
        return outcome(rtpmap(value).map { .rtpmap($0) })
      }
      if name.equals("extmap") {
        return outcome(extmap(value).map { .extmap($0) })
      }
    case 7:
      if name.equals("rtcp-fb") {
        return outcome(rtcpFeedback(value).map { .rtcpFeedback($0) })
      }
      if name.equals("ice-pwd") {
        return outcome(token(value).map { .icePwd($0) })
      }
    case 9:
      if name.equals("ice-ufrag") {
        return outcome(token(value).map { .iceUfrag($0) })
      }
      if name.equals("candidate") {
        return outcome(ICECandidateAttribute(bytes: value).map { .candidate($0) })
      }
      if name.equals("sctp-port") {
        return outcome(value.trimmed().int(in: 0...65535).map { .sctpPort($0) })
      }
    case 10:
      if name.equals("ssrc-group") {
        return outcome(ssrcGroup(value).map { .ssrcGroup($0) })
      }
    case 11:
      if name.equals("fingerprint") {
        return outcome(CertificateFingerprint(bytes: value).map { .fingerprint($0) })
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

  /// Exactly one field.
  private static func token(_ v: ByteSlice) -> String? {
    var c = v
    guard let t = c.nextField(), c.nextField() == nil else { return nil }
    return t.string
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

  static func ssrc(_ v: ByteSlice) -> SSRCAttribute? {
    var c = v
    guard let ssrc = c.nextField()?.uint32() else { return nil }
    let r = c.trimmed()
    let (attr, value) = r.splitOnce(UInt8(ascii: ":"))
    guard !attr.isEmpty else { return nil }
    return SSRCAttribute(ssrc: ssrc, attribute: attr.token, value: value?.string)
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
    while let f = c.nextField() { mids.append(f.string) }
    return SDPGroup(semantics: sem.string, mids: mids)
  }
}

/// Parses the value of one `a=` line into an ``SDPAttribute``. Returns nil when a known
/// attribute's value is malformed (the caller then keeps it as `.other` with a warning).
enum SDPAttributeParser {
  static func parse(name: Substring, value: Substring?) -> SDPAttribute?? {
    guard let value else {
      switch name {
      case "rtcp-mux": return .some(.rtcpMux)
      case "rtcp-rsize": return .some(.rtcpReducedSize)
      case "ice-lite": return .some(.iceLite)
      case "end-of-candidates": return .some(.endOfCandidates)
      case "sendrecv": return .some(.direction(.sendrecv))
      case "sendonly": return .some(.direction(.sendonly))
      case "recvonly": return .some(.direction(.recvonly))
      case "inactive": return .some(.direction(.inactive))
      default: return .none
      }
    }
    switch name {
    case "rtpmap": return .some(rtpmap(value).map { .rtpmap($0) })
    case "fmtp": return .some(fmtp(value).map { .fmtp($0) })
    case "rtcp-fb": return .some(rtcpFeedback(value).map { .rtcpFeedback($0) })
    case "extmap": return .some(extmap(value).map { .extmap($0) })
    case "ssrc": return .some(ssrc(value).map { .ssrc($0) })
    case "ssrc-group": return .some(ssrcGroup(value).map { .ssrcGroup($0) })
    case "msid": return .some(msid(value).map { .msid($0) })
    case "mid": return .some(token(value).map { .mid($0) })
    case "group": return .some(group(value).map { .group($0) })
    case "ice-ufrag": return .some(token(value).map { .iceUfrag($0) })
    case "ice-pwd": return .some(token(value).map { .icePwd($0) })
    case "ice-options":
      let f = SDPScanner.fields(value)
      return .some(f.isEmpty ? nil : .iceOptions(f.map { String($0) }))
    case "candidate":
      return .some(ICECandidateAttribute(attributeValue: value).map { .candidate($0) })
    case "fingerprint":
      return .some(CertificateFingerprint(attributeValue: value).map { .fingerprint($0) })
    case "setup":
      return .some(DTLSSetup(rawValue: String(SDPScanner.trim(value))).map { .setup($0) })
    case "sctp-port":
      return .some(
        Int(SDPScanner.trim(value)).flatMap { (0...65535).contains($0) ? $0 : nil }
          .map { .sctpPort($0) })
    default: return .none
    }
  }

  private static func token(_ v: Substring) -> String? {
    let f = SDPScanner.fields(v)
    return f.count == 1 ? String(f[0]) : nil
  }

  private static func payloadType(_ s: Substring) -> Int? {
    guard let pt = Int(s), (0...127).contains(pt) else { return nil }
    return pt
  }

  static func rtpmap(_ v: Substring) -> RTPMap? {
    let f = SDPScanner.fields(v)
    guard f.count == 2, let pt = payloadType(f[0]) else { return nil }
    let enc = SDPScanner.split(f[1], UInt8(ascii: "/"))
    guard enc.count == 2 || enc.count == 3, !enc[0].isEmpty, let rate = Int(enc[1]), rate > 0
    else { return nil }
    var channels: Int? = nil
    if enc.count == 3 {
      guard let c = Int(enc[2]), c > 0 else { return nil }
      channels = c
    }
    return RTPMap(
      payloadType: pt, encodingName: String(enc[0]), clockRate: rate, channels: channels)
  }

  static func fmtp(_ v: Substring) -> FormatParameters? {
    let (ptText, rest) = SDPScanner.splitOnce(SDPScanner.trim(v), UInt8(ascii: " "))
    guard let pt = payloadType(ptText) else { return nil }
    var params: [FormatParameter] = []
    if let rest {
      for piece in SDPScanner.split(rest, UInt8(ascii: ";")) {
        let p = SDPScanner.trim(piece)
        if p.isEmpty { continue }
        let (k, val) = SDPScanner.splitOnce(p, UInt8(ascii: "="))
        params.append(
          FormatParameter(
            String(SDPScanner.trim(k)), val.map { String(SDPScanner.trim($0)) }))
      }
    }
    return FormatParameters(payloadType: pt, parameters: params)
  }

  static func rtcpFeedback(_ v: Substring) -> RTCPFeedback? {
    let (ptText, rest) = SDPScanner.splitOnce(SDPScanner.trim(v), UInt8(ascii: " "))
    let pt: Int?
    if ptText == "*" {
      pt = nil
    } else {
      guard let p = payloadType(ptText) else { return nil }
      pt = p
    }
    guard let rest else { return nil }
    let (type, param) = SDPScanner.splitOnce(SDPScanner.trim(rest), UInt8(ascii: " "))
    guard !type.isEmpty else { return nil }
    let parameter = param.map { SDPScanner.trim($0) }.flatMap { $0.isEmpty ? nil : String($0) }
    return RTCPFeedback(payloadType: pt, type: String(type), parameter: parameter)
  }

  static func extmap(_ v: Substring) -> HeaderExtensionMap? {
    let (head, rest) = SDPScanner.splitOnce(SDPScanner.trim(v), UInt8(ascii: " "))
    guard let rest else { return nil }
    let (idText, dirText) = SDPScanner.splitOnce(head, UInt8(ascii: "/"))
    guard let id = Int(idText), (1...255).contains(id) else { return nil }
    var direction: MediaDirection? = nil
    if let dirText {
      guard let d = MediaDirection(rawValue: String(dirText)) else { return nil }
      direction = d
    }
    let (uri, attrs) = SDPScanner.splitOnce(SDPScanner.trim(rest), UInt8(ascii: " "))
    guard !uri.isEmpty else { return nil }
    let extAttrs = attrs.map { SDPScanner.trim($0) }.flatMap { $0.isEmpty ? nil : String($0) }
    return HeaderExtensionMap(
      id: id, direction: direction, uri: String(uri), extensionAttributes: extAttrs)
  }

  static func ssrc(_ v: Substring) -> SSRCAttribute? {
    let (ssrcText, rest) = SDPScanner.splitOnce(SDPScanner.trim(v), UInt8(ascii: " "))
    guard let ssrc = UInt32(ssrcText), let rest else { return nil }
    let (attr, value) = SDPScanner.splitOnce(rest, UInt8(ascii: ":"))
    guard !attr.isEmpty else { return nil }
    return SSRCAttribute(ssrc: ssrc, attribute: String(attr), value: value.map { String($0) })
  }

  static func ssrcGroup(_ v: Substring) -> SSRCGroup? {
    let f = SDPScanner.fields(v)
    guard let sem = f.first else { return nil }
    var ssrcs: [UInt32] = []
    for s in f.dropFirst() {
      guard let n = UInt32(s) else { return nil }
      ssrcs.append(n)
    }
    return SSRCGroup(semantics: String(sem), ssrcs: ssrcs)
  }

  static func msid(_ v: Substring) -> MediaStreamID? {
    let f = SDPScanner.fields(v)
    guard f.count == 1 || f.count == 2 else { return nil }
    return MediaStreamID(streamId: String(f[0]), trackId: f.count == 2 ? String(f[1]) : nil)
  }

  static func group(_ v: Substring) -> SDPGroup? {
    let f = SDPScanner.fields(v)
    guard let sem = f.first else { return nil }
    return SDPGroup(semantics: String(sem), mids: f.dropFirst().map { String($0) })
  }
}

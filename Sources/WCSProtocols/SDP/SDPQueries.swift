/// Typed look-ups over attribute lists (first occurrence wins, as in JSEP RFC 8829 §5.8).
extension MediaDescription {
  /// `a=mid` (RFC 9143 §5), nil when absent.
  public var mid: String? {
    for case .mid(let m) in attributes { return m }
    return nil
  }

  /// The direction attribute; `sendrecv` when absent (RFC 8866 §6.7).
  public var direction: MediaDirection {
    for case .direction(let d) in attributes { return d }
    return .sendrecv
  }

  /// All `a=rtpmap` lines in order.
  public var rtpMaps: [RTPMap] {
    attributes.compactMap { if case .rtpmap(let r) = $0 { return r } else { return nil } }
  }

  /// The `a=rtpmap` of `payloadType`, or the RFC 3551 §6 static mapping (PCMU 0, GSM 3,
  /// G723 4, PCMA 8, G722 9, CN 13, G729 18) when the section has no rtpmap for it.
  public func rtpMap(payloadType: Int) -> RTPMap? {
    for case .rtpmap(let r) in attributes where r.payloadType == payloadType { return r }
    return RTPMap.staticPayloadType(payloadType)
  }

  /// The `a=fmtp` of `payloadType`.
  public func formatParameters(payloadType: Int) -> FormatParameters? {
    for case .fmtp(let f) in attributes where f.payloadType == payloadType { return f }
    return nil
  }

  /// `a=rtcp-fb` lines that apply to `payloadType` (including the `*` wildcard).
  public func rtcpFeedback(payloadType: Int) -> [RTCPFeedback] {
    attributes.compactMap {
      if case .rtcpFeedback(let fb) = $0, fb.payloadType == nil || fb.payloadType == payloadType {
        return fb
      }
      return nil
    }
  }

  /// Payload types of the `m=` line whose encoding name equals `name` ignoring case, in `m=`
  /// order.
  public func payloadTypes(forCodec name: String) -> [Int] {
    let key = name.lowercased()
    return payloadTypes.filter { rtpMap(payloadType: $0)?.encodingName.lowercased() == key }
  }

  /// `a=candidate` lines in order.
  public var candidates: [ICECandidateAttribute] {
    attributes.compactMap { if case .candidate(let c) = $0 { return c } else { return nil } }
  }

  /// `a=extmap` lines in order.
  public var headerExtensions: [HeaderExtensionMap] {
    attributes.compactMap { if case .extmap(let e) = $0 { return e } else { return nil } }
  }

  /// `a=ssrc` lines in order.
  public var ssrcAttributes: [SSRCAttribute] {
    attributes.compactMap { if case .ssrc(let s) = $0 { return s } else { return nil } }
  }

  /// `true` when the section has `a=rtcp-mux` (RFC 5761 §5.1.1).
  public var hasRTCPMux: Bool { attributes.contains(.rtcpMux) }
}

extension SessionDescription {
  /// The first `a=group:BUNDLE` (RFC 9143 §7.1), nil when absent.
  public var bundleGroup: SDPGroup? {
    for case .group(let g) in attributes where g.semantics.uppercased() == "BUNDLE" { return g }
    return nil
  }

  /// `true` when the session has `a=ice-lite` (RFC 8839 §5.3).
  public var isICELite: Bool { attributes.contains(.iceLite) }
}

extension RTPMap {
  /// The RFC 3551 §6 static audio payload types most often left without an rtpmap.
  public static func staticPayloadType(_ pt: Int) -> RTPMap? {
    switch pt {
    case 0: return RTPMap(payloadType: 0, encodingName: "PCMU", clockRate: 8000, channels: 1)
    case 3: return RTPMap(payloadType: 3, encodingName: "GSM", clockRate: 8000, channels: 1)
    case 4: return RTPMap(payloadType: 4, encodingName: "G723", clockRate: 8000, channels: 1)
    case 8: return RTPMap(payloadType: 8, encodingName: "PCMA", clockRate: 8000, channels: 1)
    case 9: return RTPMap(payloadType: 9, encodingName: "G722", clockRate: 8000, channels: 1)
    case 13: return RTPMap(payloadType: 13, encodingName: "CN", clockRate: 8000, channels: 1)
    case 18: return RTPMap(payloadType: 18, encodingName: "G729", clockRate: 8000, channels: 1)
    default: return nil
    }
  }
}

extension SDPAttribute {
  /// The `a=fingerprint` values of a media section, or of the session when the section has
  /// none (RFC 8122 §5: media level overrides session level; several may be given).
  public static func fingerprints(
    media: MediaDescription, session: SessionDescription
  ) -> [CertificateFingerprint] {
    func pick(_ list: [SDPAttribute]) -> [CertificateFingerprint] {
      list.compactMap { if case .fingerprint(let f) = $0 { f } else { nil } }
    }
    let atMedia = pick(media.attributes)
    return atMedia.isEmpty ? pick(session.attributes) : atMedia
  }
}

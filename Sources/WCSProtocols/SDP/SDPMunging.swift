/// Client-side SDP edits of the WCS Web SDK (wcs-protocol.md §4.4), done on the model instead of
/// on text.
extension MediaDescription {
  /// Removes the codecs whose encoding name equals one of `names` (ASCII case-insensitive; the
  /// Web SDK matches substrings, which would also hit e.g. `H264` for `H26`; an exact name is
  /// what callers pass): their payload types leave the `m=` line and their `a=rtpmap`, `a=fmtp`
  /// and `a=rtcp-fb` lines are removed, as are RTX payload types whose `apt` (RFC 4588 §8.1)
  /// points to a removed payload type. Static payload types without rtpmap (PCMU 0, PCMA 8)
  /// match by their RFC 3551 names. Returns the removed payload types.
  @discardableResult
  public mutating func stripCodecs(_ names: [String]) -> Set<Int> {
    let keys = Set(names.map { $0.lowercased() })
    var removed = Set<Int>()
    for pt in payloadTypes {
      if let name = rtpMap(payloadType: pt)?.encodingName.lowercased(), keys.contains(name) {
        removed.insert(pt)
      }
    }
    guard !removed.isEmpty else { return removed }
    for case .fmtp(let f) in attributes {
      if let apt = f.associatedPayloadType, removed.contains(apt),
        rtpMap(payloadType: f.payloadType)?.isCodec("rtx") == true
      {
        removed.insert(f.payloadType)
      }
    }
    formats.removeAll { Int($0).map(removed.contains) ?? false }
    attributes.removeAll { a in
      switch a {
      case .rtpmap(let r): return removed.contains(r.payloadType)
      case .fmtp(let f): return removed.contains(f.payloadType)
      case .rtcpFeedback(let fb): return fb.payloadType.map(removed.contains) ?? false
      default: return false
      }
    }
    return removed
  }

  /// Adds or updates fmtp parameters of every payload type of codec `codec` (case-insensitive):
  /// existing parameters are updated in place, new ones appended in the given order, unknown
  /// ones kept. A payload type without `a=fmtp` gets one right after its `a=rtpmap`
  /// (RFC 8866 §6.15). Returns the payload types changed.
  @discardableResult
  public mutating func setFormatParameters(codec: String, _ parameters: [FormatParameter]) -> [Int]
  {
    guard !parameters.isEmpty else { return [] }
    let pts = payloadTypes(forCodec: codec)
    for pt in pts {
      if let i = attributes.firstIndex(where: {
        if case .fmtp(let f) = $0 { return f.payloadType == pt } else { return false }
      }), case .fmtp(var f) = attributes[i] {
        for p in parameters { f.set(p.name, p.value) }
        attributes[i] = .fmtp(f)
        continue
      }
      let new = SDPAttribute.fmtp(FormatParameters(payloadType: pt, parameters: parameters))
      if let r = attributes.firstIndex(where: {
        if case .rtpmap(let m) = $0 { return m.payloadType == pt } else { return false }
      }) {
        attributes.insert(new, at: r + 1)
      } else {
        attributes.append(new)
      }
    }
    return pts
  }
}

/// Opus options applied to the server SDP before it is set as remote description
/// (wcs-protocol.md §4.4 "Opus options"; parameters of RFC 7587 §6.1).
public struct OpusFormatOptions: Hashable, Sendable {
  /// `maxaveragebitrate` in bit/s (6000...510000).
  public var maxAverageBitrate: Int?
  /// `stereo` and `sprop-stereo` (1 when true, 0 when false).
  public var stereo: Bool?
  /// `useinbandfec` (1 when true, 0 when false).
  public var useInbandFEC: Bool?

  /// Creates options; nil leaves a parameter untouched.
  public init(maxAverageBitrate: Int? = nil, stereo: Bool? = nil, useInbandFEC: Bool? = nil) {
    self.maxAverageBitrate = maxAverageBitrate
    self.stereo = stereo
    self.useInbandFEC = useInbandFEC
  }

  /// The parameters in the Web SDK order `maxaveragebitrate;stereo;sprop-stereo;useinbandfec`.
  public var parameters: [FormatParameter] {
    var out: [FormatParameter] = []
    if let maxAverageBitrate {
      out.append(FormatParameter("maxaveragebitrate", "\(maxAverageBitrate)"))
    }
    if let stereo {
      out.append(FormatParameter("stereo", stereo ? "1" : "0"))
      out.append(FormatParameter("sprop-stereo", stereo ? "1" : "0"))
    }
    if let useInbandFEC { out.append(FormatParameter("useinbandfec", useInbandFEC ? "1" : "0")) }
    return out
  }
}

extension SessionDescription {
  /// ``MediaDescription/stripCodecs(_:)`` on every m-section.
  public mutating func stripCodecs(_ names: [String]) {
    for i in media.indices { media[i].stripCodecs(names) }
  }

  /// Sets the Opus fmtp parameters (RFC 7587 §6.1) on every Opus payload type.
  public mutating func setOpusOptions(_ options: OpusFormatOptions) {
    let params = options.parameters
    for i in media.indices { media[i].setFormatParameters(codec: "opus", params) }
  }

  /// Sets `x-google-min-bitrate` / `x-google-max-bitrate` (kbit/s, libwebrtc extensions) on
  /// every VP8 and H264 payload type, as the Web SDK does for publishing bitrate bounds
  /// (wcs-protocol.md §4.4, WCS-4013). nil leaves a bound untouched.
  public mutating func setVideoBitrateBounds(minKbps: Int?, maxKbps: Int?) {
    var params: [FormatParameter] = []
    if let minKbps { params.append(FormatParameter("x-google-min-bitrate", "\(minKbps)")) }
    if let maxKbps { params.append(FormatParameter("x-google-max-bitrate", "\(maxKbps)")) }
    for i in media.indices {
      media[i].setFormatParameters(codec: "VP8", params)
      media[i].setFormatParameters(codec: "H264", params)
    }
  }
}

/// Builds JSEP-style offers (RFC 8829 §5.2.1) the way Chromium lays them out, for WCS publish
/// and play (wcs-protocol.md §4.3): audio then video, mids `0`/`1`, `a=group:BUNDLE` listing
/// them, `UDP/TLS/RTP/SAVPF`, rtcp-mux, rtcp-rsize, one ICE ufrag/pwd and fingerprint repeated
/// in every section.
public enum SDPOfferBuilder {
  /// RTP header extension URIs and the ids used in every section (the same URI keeps the same
  /// id across bundled sections, RFC 9143 §7.5).
  public enum HeaderExtension {
    /// `urn:ietf:params:rtp-hdrext:ssrc-audio-level` (RFC 6464), id 1, audio only.
    public static let audioLevel = HeaderExtensionMap(
      id: 1, uri: "urn:ietf:params:rtp-hdrext:ssrc-audio-level")
    /// Absolute send time (libwebrtc, used by goog-remb), id 2.
    public static let absSendTime = HeaderExtensionMap(
      id: 2, uri: "http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time")
    /// Transport-wide sequence number (draft-holmer-rmcat-transport-wide-cc-extensions-01), id 3.
    public static let transportWideCC = HeaderExtensionMap(
      id: 3, uri: "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01")
    /// `urn:ietf:params:rtp-hdrext:sdes:mid` (RFC 9143 §15), id 4.
    public static let mid = HeaderExtensionMap(id: 4, uri: "urn:ietf:params:rtp-hdrext:sdes:mid")
  }

  /// A publish offer: the given sections forced to `sendonly`.
  public static func publishOffer(_ parameters: SDPOfferParameters) -> SessionDescription {
    var p = parameters
    p.audio?.direction = .sendonly
    p.video?.direction = .sendonly
    return offer(p)
  }

  /// A play offer: the given sections forced to `recvonly` (no msid/ssrc lines, RFC 8830 §2).
  public static func playOffer(_ parameters: SDPOfferParameters) -> SessionDescription {
    var p = parameters
    p.audio?.direction = .recvonly
    p.video?.direction = .recvonly
    return offer(p)
  }

  /// An offer with the directions given in `parameters`.
  public static func offer(_ p: SDPOfferParameters) -> SessionDescription {
    var media: [MediaDescription] = []
    if let audio = p.audio { media.append(audioSection(audio, mid: "\(media.count)", p)) }
    if let video = p.video { media.append(videoSection(video, mid: "\(media.count)", p)) }
    var attributes: [SDPAttribute] = []
    attributes.append(.group(SDPGroup(semantics: "BUNDLE", mids: media.compactMap(\.mid))))
    let sends = [p.audio?.direction, p.video?.direction].contains {
      $0 == .sendonly || $0 == .sendrecv
    }
    if sends { attributes.append(.other(name: "msid-semantic", value: " WMS " + p.streamId)) }
    return SessionDescription(
      origin: SDPOrigin(sessionId: "\(p.sessionId)", sessionVersion: "\(p.sessionVersion)"),
      attributes: attributes, media: media)
  }

  private static func sends(_ d: MediaDirection) -> Bool { d == .sendonly || d == .sendrecv }

  private static func section(
    kind: String, formats: [Int], mid: String, direction: MediaDirection, trackId: String,
    extensions: [HeaderExtensionMap], _ p: SDPOfferParameters
  ) -> MediaDescription {
    // RFC 8829 §5.2.1: port 9 and 0.0.0.0 until a default candidate exists.
    let rtp = p.candidates.first { $0.component == 1 }
    var m = MediaDescription(
      media: kind, port: rtp?.port ?? 9, proto: "UDP/TLS/RTP/SAVPF",
      formats: formats.map { "\($0)" },
      connections: [
        SDPConnection(
          addressType: rtp.map { $0.address.contains(":") ? "IP6" : "IP4" } ?? "IP4",
          address: rtp?.address ?? "0.0.0.0")
      ])
    var a: [SDPAttribute] = [.other(name: "rtcp", value: "9 IN IP4 0.0.0.0")]
    a += p.candidates.map { .candidate($0) }
    if p.endOfCandidates { a.append(.endOfCandidates) }
    a += [
      .iceUfrag(p.iceUfrag), .icePwd(p.icePwd), .fingerprint(p.fingerprint), .setup(p.setup),
      .mid(mid),
    ]
    a += extensions.map { .extmap($0) }
    a.append(.direction(direction))
    if sends(direction) {
      a.append(.msid(MediaStreamID(streamId: p.streamId, trackId: trackId)))
    }
    a += [.rtcpMux, .rtcpReducedSize]
    m.attributes = a
    return m
  }

  private static func audioSection(
    _ audio: SDPOfferParameters.Audio, mid: String, _ p: SDPOfferParameters
  ) -> MediaDescription {
    let opus = audio.opusPayloadType
    var m = section(
      kind: "audio", formats: audio.includeG711 ? [opus, 0, 8] : [opus], mid: mid,
      direction: audio.direction, trackId: audio.trackId,
      extensions: [
        HeaderExtension.audioLevel, HeaderExtension.absSendTime,
        HeaderExtension.transportWideCC, HeaderExtension.mid,
      ], p)
    m.attributes += [
      .rtpmap(RTPMap(payloadType: opus, encodingName: "opus", clockRate: 48000, channels: 2)),
      .rtcpFeedback(RTCPFeedback(payloadType: opus, type: "transport-cc")),
      .fmtp(
        FormatParameters(
          payloadType: opus,
          parameters: [FormatParameter("minptime", "10"), FormatParameter("useinbandfec", "1")])),
    ]
    if audio.includeG711 {
      m.attributes += [
        .rtpmap(RTPMap(payloadType: 0, encodingName: "PCMU", clockRate: 8000)),
        .rtpmap(RTPMap(payloadType: 8, encodingName: "PCMA", clockRate: 8000)),
      ]
    }
    if sends(audio.direction) {
      m.attributes += ssrcLines(audio.ssrc, trackId: audio.trackId, p)
    }
    return m
  }

  private static func videoSection(
    _ video: SDPOfferParameters.Video, mid: String, _ p: SDPOfferParameters
  ) -> MediaDescription {
    let vp8 = video.vp8PayloadType
    var formats = [vp8]
    if let rtx = video.rtx { formats.append(rtx.payloadType) }
    let h264Types = video.h264Formats.map(\.payloadType)
    if video.h264?.isPreferred == true {
      formats.insert(contentsOf: h264Types, at: 0)
    } else {
      formats += h264Types
    }
    if video.rtx != nil {
      formats += video.h264Formats.compactMap(\.retransmissionPayloadType)
    }
    var m = section(
      kind: "video", formats: formats, mid: mid, direction: video.direction,
      trackId: video.trackId,
      extensions: [
        HeaderExtension.absSendTime, HeaderExtension.transportWideCC, HeaderExtension.mid,
      ], p)
    m.attributes.append(
      .rtpmap(RTPMap(payloadType: vp8, encodingName: "VP8", clockRate: 90000)))
    for (type, parameter) in videoFeedback {
      m.attributes.append(
        .rtcpFeedback(RTCPFeedback(payloadType: vp8, type: type, parameter: parameter)))
    }
    for h264 in video.h264Formats {
      let pt = h264.payloadType
      m.attributes.append(.rtpmap(RTPMap(payloadType: pt, encodingName: "H264", clockRate: 90000)))
      for (type, parameter) in videoFeedback {
        m.attributes.append(
          .rtcpFeedback(RTCPFeedback(payloadType: pt, type: type, parameter: parameter)))
      }
      m.attributes.append(
        .fmtp(FormatParameters(payloadType: pt, parameters: h264.formatParameters.formatParameters))
      )
    }
    if let rtx = video.rtx {
      m.attributes += retransmissionFormat(rtx.payloadType, repairing: vp8)
      for h264 in video.h264Formats {
        guard let h264RTX = h264.retransmissionPayloadType else { continue }
        m.attributes += retransmissionFormat(h264RTX, repairing: h264.payloadType)
      }
    }
    if sends(video.direction) {
      if let rtx = video.rtx {
        m.attributes.append(.ssrcGroup(SSRCGroup(semantics: "FID", ssrcs: [video.ssrc, rtx.ssrc])))
      }
      m.attributes += ssrcLines(video.ssrc, trackId: video.trackId, p)
      if let rtx = video.rtx { m.attributes += ssrcLines(rtx.ssrc, trackId: video.trackId, p) }
    }
    return m
  }

  /// An RTX format repairing `media` (RFC 4588 §8.1: `rtx/90000` with `apt`).
  private static func retransmissionFormat(_ payloadType: Int, repairing media: Int)
    -> [SDPAttribute]
  {
    [
      .rtpmap(RTPMap(payloadType: payloadType, encodingName: "rtx", clockRate: 90000)),
      .fmtp(
        FormatParameters(payloadType: payloadType, parameters: [FormatParameter("apt", "\(media)")])
      ),
    ]
  }

  /// RFC 4585 §4.2 nack/pli, RFC 5104 §7.1 ccm fir, libwebrtc goog-remb and transport-cc.
  private static let videoFeedback: [(String, String?)] = [
    ("goog-remb", nil), ("transport-cc", nil), ("ccm", "fir"), ("nack", nil), ("nack", "pli"),
  ]

  private static func ssrcLines(_ ssrc: UInt32, trackId: String, _ p: SDPOfferParameters)
    -> [SDPAttribute]
  {
    [
      .ssrc(SSRCAttribute(ssrc: ssrc, attribute: "cname", value: p.cname)),
      .ssrc(SSRCAttribute(ssrc: ssrc, attribute: "msid", value: p.streamId + " " + trackId)),
    ]
  }
}

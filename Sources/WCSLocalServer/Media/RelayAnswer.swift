import WCSProtocols

/// Turns a `PeerConnection` answer (which mirrors every offered codec) into what the relay can
/// honour (wcs-protocol.md §9.3): only Opus and VP8, with their RTX formats (RFC 4588) where
/// the peer offered them; no FEC or RED (we never send them); no transport-wide congestion
/// control (we send no TWCC feedback, RFC 8888 family); and for a player the SSRC we send from
/// in each section (RFC 5576), with its RTX SSRC in an `a=ssrc-group:FID` when RTX is kept, so
/// clients that demultiplex by signalled SSRC find both streams.
enum RelayAnswer {
  /// Codec names we never relay, besides everything that is not Opus or VP8.
  static let transportWideCC = "transport-cc"
  static let transportWideCCExtension =
    "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"

  /// The Opus and VP8 formats of `offerSDP` by payload type.
  /// - Throws: `SDPParseError` when the text does not parse; `.offer` when it has no section
  ///   to accept; `.noCommonCodecs` when the accepted sections have neither Opus nor VP8.
  static func offeredCodecs(_ offerSDP: String) throws -> [UInt8: RelayCodec] {
    let offer = try SDPParser.parse(offerSDP).description
    do {
      _ = try offer.firstAcceptedMediaIndex()
    } catch {
      throw RelayAnswerError.offer(error)
    }
    let codecs = RelayCodecs.payloadTypes(in: offer)
    guard !codecs.isEmpty else { throw RelayAnswerError.noCommonCodecs }
    return codecs
  }

  /// The restricted answer text. `ssrcs` maps `audio`/`video` to the SSRC we send there
  /// (players only), `retransmissionSSRCs` to the RTX SSRC we resend from there (signalled only
  /// where an RTX format survives); `cname` goes into those `a=ssrc` lines.
  /// - Throws: `SDPParseError` when `answer` does not parse (it is our own text, so only on a
  ///   bug); `RelayAnswerError.offer` when no section was accepted to begin with;
  ///   `RelayAnswerError.noCommonCodecs` when no Opus or VP8 format is left.
  static func restrict(
    _ answer: String, ssrcs: [String: UInt32] = [:], retransmissionSSRCs: [String: UInt32] = [:],
    cname: String = "wcs"
  ) throws -> String {
    var sdp = try SDPParser.parse(answer).description
    // The answer mirrors the offer, so a section already rejected here was rejected (or
    // missing) in the offer: that is not a codec problem.
    do {
      _ = try sdp.firstAcceptedMediaIndex()
    } catch {
      throw RelayAnswerError.offer(error)
    }
    for index in sdp.media.indices where !sdp.media[index].isRejected {
      let names = Set(sdp.media[index].rtpMaps.map(\.encodingName))
      let unwanted = names.filter { name in
        name.lowercased() != "rtx"
          && !RelayCodecs.relayed.contains { $0.lowercased() == name.lowercased() }
      }
      let offered = sdp.media[index].formats
      // RTX of a stripped codec goes with it; RTX without a usable `apt` is dropped here.
      sdp.media[index].stripCodecs(Array(unwanted))
      Self.stripUnassociatedRetransmission(&sdp.media[index])
      if sdp.media[index].payloadTypes.isEmpty {
        // Nothing relayable here: reject the section (RFC 3264 §6), keeping a format so the
        // m= line stays well-formed.
        sdp.media[index].port = 0
        sdp.media[index].formats = Array(offered.prefix(1))
        continue
      }
      sdp.media[index].attributes.removeAll { attribute in
        switch attribute {
        case .rtcpFeedback(let feedback): return feedback.type == transportWideCC
        case .extmap(let map): return map.uri == transportWideCCExtension
        default: return false
        }
      }
      let kind = sdp.media[index].media
      if let ssrc = ssrcs[kind] {
        let hasRetransmission = !sdp.media[index].payloadTypes(forCodec: "rtx").isEmpty
        if hasRetransmission, let rtx = retransmissionSSRCs[kind] {
          sdp.media[index].attributes.append(
            .ssrcGroup(SSRCGroup(semantics: "FID", ssrcs: [ssrc, rtx])))
          sdp.media[index].attributes.append(
            .ssrc(SSRCAttribute(ssrc: ssrc, attribute: "cname", value: cname)))
          sdp.media[index].attributes.append(
            .ssrc(SSRCAttribute(ssrc: rtx, attribute: "cname", value: cname)))
        } else {
          sdp.media[index].attributes.append(
            .ssrc(SSRCAttribute(ssrc: ssrc, attribute: "cname", value: cname)))
        }
      }
    }
    guard sdp.media.contains(where: { !$0.isRejected }) else {
      throw RelayAnswerError.noCommonCodecs
    }
    return SDPWriter.write(sdp)
  }

  /// A publisher's answer keeping, in each video section, only the formats of the first
  /// relayable codec the publisher listed (its preference, RFC 3264 §6.1) and their RTX: the
  /// relay does not transcode, so each stream has one video codec that players must take.
  /// - Throws: `SDPParseError` when `answer` does not parse (our own text: only on a bug).
  static func keepingFirstVideoCodec(_ answer: String) throws -> String {
    try keepingVideoFormats(answer) { section in
      let codecs = section.payloadTypes.compactMap { payloadType -> (Int, RelayCodec)? in
        guard let map = section.rtpMap(payloadType: payloadType),
          map.encodingName.lowercased() != "rtx"
        else { return nil }
        return (payloadType, codec(map, in: section))
      }
      guard let first = codecs.first?.1 else { return [] }
      return Set(codecs.filter { sameCodec($0.1, first) }.map(\.0))
    }
  }

  /// A player's answer keeping, in each video section, only the formats that carry the
  /// publisher's video (`RelayCodecs.payloadTypeMap`) and their RTX: the player then decodes
  /// what it is sent, whatever order it offered its codecs in.
  static func keepingVideoFormats(_ answer: String, for publisher: [UInt8: RelayCodec]) throws
    -> String
  {
    try keepingVideoFormats(answer) { section in
      let player = RelayCodecs.payloadTypes(in: SessionDescription(media: [section]))
      let sent = publisher.filter { $0.value.kind == .video }
      return Set(RelayCodecs.payloadTypeMap(publisher: sent, player: player).values.map(Int.init))
    }
  }

  private static func codec(_ map: RTPMap, in section: MediaDescription) -> RelayCodec {
    var codec = RelayCodec(kind: .video, name: map.encodingName, clockRate: map.clockRate)
    if map.encodingName.uppercased() == "H264" {
      codec.h264 = H264FormatParameters(
        section.formatParameters(payloadType: map.payloadType)?.parameters ?? [])
    }
    return codec
  }

  private static func sameCodec(_ a: RelayCodec, _ b: RelayCodec) -> Bool {
    a.name.caseInsensitiveCompare(b.name) == .orderedSame && a.clockRate == b.clockRate
      && RelayCodecs.sameH264Configuration(a.h264, b.h264)
  }

  /// `answer` with each accepted video section cut down to the media formats `keep` picks
  /// (all kept when it picks none) and the RTX formats of those.
  private static func keepingVideoFormats(
    _ answer: String, keep: (MediaDescription) -> Set<Int>
  ) throws -> String {
    var sdp = try SDPParser.parse(answer).description
    for index in sdp.media.indices
    where sdp.media[index].media == "video" && !sdp.media[index].isRejected {
      let section = sdp.media[index]
      let kept = keep(section)
      guard !kept.isEmpty else { continue }
      let others = Set(
        section.payloadTypes.filter { payloadType in
          section.rtpMap(payloadType: payloadType)?.encodingName.lowercased() != "rtx"
            && !kept.contains(payloadType)
        })
      guard !others.isEmpty else { continue }
      sdp.media[index].formats.removeAll { Int($0).map(others.contains) ?? false }
      sdp.media[index].attributes.removeAll { attribute in
        switch attribute {
        case .rtpmap(let map): return others.contains(map.payloadType)
        case .fmtp(let parameters): return others.contains(parameters.payloadType)
        case .rtcpFeedback(let feedback): return feedback.payloadType.map(others.contains) ?? false
        default: return false
        }
      }
      Self.stripUnassociatedRetransmission(&sdp.media[index])
    }
    return SDPWriter.write(sdp)
  }

  /// Removes the RTX formats of `section` whose `apt` names no format left in it.
  static func stripUnassociatedRetransmission(_ section: inout MediaDescription) {
    let kept = Set(section.payloadTypes)
    let orphans = Set(
      section.payloadTypes(forCodec: "rtx").filter { payloadType in
        guard let apt = section.formatParameters(payloadType: payloadType)?.associatedPayloadType
        else { return true }
        return apt == payloadType || !kept.contains(apt)
          || section.rtpMap(payloadType: apt)?.encodingName.lowercased() == "rtx"
      })
    guard !orphans.isEmpty else { return }
    section.formats.removeAll { Int($0).map(orphans.contains) ?? false }
    section.attributes.removeAll { attribute in
      switch attribute {
      case .rtpmap(let map): return orphans.contains(map.payloadType)
      case .fmtp(let parameters): return orphans.contains(parameters.payloadType)
      case .rtcpFeedback(let feedback): return feedback.payloadType.map(orphans.contains) ?? false
      default: return false
      }
    }
  }
}

/// Why an offer cannot be answered.
enum RelayAnswerError: Error, Equatable {
  /// The offer has no media section to accept (no `m=` line, or every one at port 0).
  case offer(SDPOfferError)
  /// The offer's accepted sections have neither Opus nor VP8 (FAILED info `No common codecs`,
  /// wcs-protocol.md §5.2).
  case noCommonCodecs
  /// A player offered video but none of the publisher's video codec (FAILED info
  /// `Transcoding required, but disabled`, wcs-protocol.md §5.2: the relay does not transcode).
  case transcodingRequired

  /// The FAILED `info` the client gets: the WCS wording for `noCommonCodecs`, local-server
  /// texts (`WCSStreamInfo`) where WCS has none.
  var info: String {
    switch self {
    case .offer(.noMediaSections): return WCSStreamInfo.offerHasNoMediaSections
    case .offer(.allMediaSectionsRejected): return WCSStreamInfo.offerMediaSectionsAllRejected
    case .noCommonCodecs: return WCSStreamInfo.noCommonCodecs
    case .transcodingRequired: return WCSStreamInfo.transcodingRequiredButDisabled
    }
  }
}

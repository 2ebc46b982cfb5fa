import Foundation
import WCSProtocols

/// What the relay needs to know about one offered codec: the media kind and clock rate of a
/// payload type.
struct RelayCodec: Equatable, Sendable {
  enum Kind: Equatable, Sendable {
    case audio
    case video
  }
  /// `audio` or `video`.
  var kind: Kind
  /// Encoding name as in `a=rtpmap` (`opus`, `VP8`).
  var name: String
  /// RTP clock rate, Hz.
  var clockRate: Int
  /// For H.264, its `a=fmtp` parameters (RFC 6184 §8.1): players get it only when the profile
  /// and packetization mode match (§8.2.2), as the relay does not transcode.
  var h264: H264FormatParameters? = nil
}

/// The codecs the local server relays (wcs-protocol.md §9.3): Opus, VP8 and H.264 (recorded:
/// Opus and VP8).
enum RelayCodecs {
  static let relayed = ["opus", "VP8", "H264"]

  /// Payload type → codec for the Opus and VP8 formats of every section of `sdp`.
  static func payloadTypes(in sdp: SessionDescription) -> [UInt8: RelayCodec] {
    var map: [UInt8: RelayCodec] = [:]
    for section in sdp.media where !section.isRejected {
      let kind: RelayCodec.Kind
      switch section.media {
      case "audio": kind = .audio
      case "video": kind = .video
      default: continue
      }
      for rtpMap in section.rtpMaps {
        guard
          relayed.contains(where: { $0.caseInsensitiveCompare(rtpMap.encodingName) == .orderedSame }
          ),
          let payloadType = UInt8(exactly: rtpMap.payloadType), payloadType < 128
        else { continue }
        var codec = RelayCodec(kind: kind, name: rtpMap.encodingName, clockRate: rtpMap.clockRate)
        if rtpMap.encodingName.uppercased() == "H264" {
          // Unreadable parameters: not H.264 this relay can match, so not relayed.
          guard
            let parameters = H264FormatParameters(
              section.formatParameters(payloadType: rtpMap.payloadType)?.parameters ?? [])
          else { continue }
          codec.h264 = parameters
        }
        map[payloadType] = codec
      }
    }
    return map
  }

  /// For each publisher payload type, the player's payload type of the same codec (first match
  /// by name, case-insensitive, and clock rate); codecs the player lacks are left out.
  static func payloadTypeMap(
    publisher: [UInt8: RelayCodec], player: [UInt8: RelayCodec]
  ) -> [UInt8: UInt8] {
    var map: [UInt8: UInt8] = [:]
    for (publisherType, codec) in publisher {
      let match = player.filter {
        $0.value.kind == codec.kind && $0.value.clockRate == codec.clockRate
          && $0.value.name.caseInsensitiveCompare(codec.name) == .orderedSame
          && Self.sameH264Configuration($0.value.h264, codec.h264)
      }.keys.min()
      if let match { map[publisherType] = match }
    }
    return map
  }

  /// Whether two H.264 formats (nil for other codecs) carry the same stream: profile and
  /// packetization mode (RFC 6184 §8.2.2).
  static func sameH264Configuration(_ a: H264FormatParameters?, _ b: H264FormatParameters?)
    -> Bool
  {
    guard let a, let b else { return a == nil && b == nil }
    return a.matches(b)
  }

  /// Whether a player with `player`'s codecs can take the video `publisher` sends without
  /// transcoding: true when the publisher sends no video or the player offered none.
  static func playerTakesVideo(publisher: [UInt8: RelayCodec], player: [UInt8: RelayCodec])
    -> Bool
  {
    let sent = publisher.filter { $0.value.kind == .video }
    guard !sent.isEmpty, player.contains(where: { $0.value.kind == .video }) else { return true }
    return !payloadTypeMap(publisher: sent, player: player).isEmpty
  }

  /// RTX payload type → the media payload type it repairs (`a=fmtp:<rtx> apt=<media>`,
  /// RFC 4588 §8.1), for every RTX format of `sdp` whose `apt` is a relayed format (Opus, VP8,
  /// H.264).
  static func retransmissionPayloadTypes(in sdp: SessionDescription) -> [UInt8: UInt8] {
    let media = payloadTypes(in: sdp)
    var map: [UInt8: UInt8] = [:]
    for section in sdp.media where !section.isRejected {
      for payloadType in section.payloadTypes(forCodec: "rtx") {
        guard let rtx = UInt8(exactly: payloadType), rtx < 128,
          let apt = section.formatParameters(payloadType: payloadType)?.associatedPayloadType,
          let associated = UInt8(exactly: apt), media[associated] != nil
        else { continue }
        map[rtx] = associated
      }
    }
    return map
  }

  /// RTX SSRC → media SSRC from the `a=ssrc-group:FID <media> <rtx>` lines of `sdp`
  /// (RFC 5576 §4.2, RFC 4588 §8.3).
  static func retransmissionSSRCs(in sdp: SessionDescription) -> [UInt32: UInt32] {
    var map: [UInt32: UInt32] = [:]
    for section in sdp.media where !section.isRejected {
      for case .ssrcGroup(let group) in section.attributes
      where group.semantics.uppercased() == "FID" && group.ssrcs.count == 2 {
        map[group.ssrcs[1]] = group.ssrcs[0]
      }
    }
    return map
  }

  /// The media kinds of `sdp` whose Opus, VP8 or H.264 format has `a=rtcp-fb:<pt> nack` (generic
  /// NACK, RFC 4585 §4.2): the kinds the relay may NACK.
  static func kindsWithNACK(in sdp: SessionDescription) -> Set<RelayCodec.Kind> {
    var kinds = Set<RelayCodec.Kind>()
    let media = payloadTypes(in: sdp)
    for section in sdp.media where !section.isRejected {
      for payloadType in section.payloadTypes {
        guard let type = UInt8(exactly: payloadType), let codec = media[type],
          section.rtcpFeedback(payloadType: payloadType).contains(where: {
            $0.type == "nack" && ($0.parameter ?? "").isEmpty
          })
        else { continue }
        kinds.insert(codec.kind)
      }
    }
    return kinds
  }
}

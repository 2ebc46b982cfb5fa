/// The SIP leg's video as its SDP says it (RFC 4566, RFC 3264; VP8 as RFC 7741 names it): where
/// the far end receives RTP and RTCP, its VP8 payload type, and which key frame requests it
/// understands (RFC 4585 §4.2 `a=rtcp-fb`: `nack pli`, RFC 5104 §7.1 `ccm fir`). Sans-I/O.
struct SIPVideoDescription: Sendable, Equatable {
  /// The payload type the gateway offers VP8 on (dynamic, RFC 3551 §6).
  static let offeredVP8PayloadType: UInt8 = 96

  var address: String
  /// RTP port; RTCP goes to `port + 1` unless `rtcpMux` (RFC 3550 §11, RFC 5761).
  var port: UInt16
  /// The far end's VP8 payload type.
  var payloadType: UInt8
  /// `a=rtcp-mux`: RTCP shares the RTP port.
  var rtcpMux: Bool
  /// `a=rtcp-fb:<pt> nack pli` (or `a=rtcp-fb:* nack pli`).
  var pictureLossIndication: Bool
  /// `a=rtcp-fb:<pt> ccm fir`.
  var fullIntraRequest: Bool
  /// `a=sendonly`/`a=inactive` on the video section: the far end sends nothing we could show.
  var holding: Bool

  /// Where RTCP goes.
  var rtcpPort: UInt16 { rtcpMux ? port : port &+ 1 }

  /// The first accepted `m=video` section with VP8 in `sdp` (an address of its own or the
  /// session's); `nil` when there is none, it is rejected (port 0) or offers no VP8.
  static func parse(_ sdp: String) -> SIPVideoDescription? {
    guard sdp.utf8.count <= SIPMediaDescription.maxLength else { return nil }
    var sessionAddress: String?
    var mediaAddress: String?
    var port: UInt16?
    var formats: [UInt8] = []
    var lines: [Substring] = []
    var inVideo = false
    var sawVideo = false
    // Only lines before the first m= line are the session's (an audio section's `c=` is not).
    var sawMedia = false
    for raw in sdp.split(whereSeparator: \.isNewline) {
      if raw.hasPrefix("m=") {
        sawMedia = true
        if sawVideo { break }
        let parts = raw.dropFirst(2).split(separator: " ")
        inVideo = parts.first == "video" && parts.count >= 4
        guard inVideo else { continue }
        sawVideo = true
        port = UInt16(parts[1])
        formats = parts.dropFirst(3).prefix(32).compactMap { UInt8($0) }
      } else if raw.hasPrefix("c=") {
        let parts = raw.split(separator: " ")
        guard parts.count >= 3 else { continue }
        if inVideo {
          mediaAddress = String(parts[2])
        } else if !sawMedia {
          sessionAddress = String(parts[2])
        }
      } else if inVideo, raw.hasPrefix("a=") {
        lines.append(raw.dropFirst(2))
      }
    }
    guard let port, port > 0, let address = mediaAddress ?? sessionAddress, !address.isEmpty
    else { return nil }
    var vp8: UInt8?
    for line in lines where line.hasPrefix("rtpmap:") {
      let parts = line.dropFirst("rtpmap:".count).split(separator: " ", maxSplits: 1)
      guard parts.count == 2, let pt = UInt8(parts[0]), formats.contains(pt),
        parts[1].lowercased().hasPrefix("vp8/90000")
      else { continue }
      vp8 = pt
      break
    }
    guard let vp8 else { return nil }
    func feedback(_ kind: String) -> Bool {
      lines.contains { line in
        let parts = line.split(separator: " ", maxSplits: 1)
        return parts.count == 2 && (parts[0] == "rtcp-fb:\(vp8)" || parts[0] == "rtcp-fb:*")
          && parts[1].lowercased() == kind
      }
    }
    return SIPVideoDescription(
      address: address, port: port, payloadType: vp8, rtcpMux: lines.contains("rtcp-mux"),
      pictureLossIndication: feedback("nack pli"), fullIntraRequest: feedback("ccm fir"),
      holding: lines.contains("sendonly") || lines.contains("inactive"))
  }

  /// The gateway's `m=video` section (RTP on `port`, RTCP on `port + 1`): VP8 on the offer's
  /// payload type or the far end's, with `nack pli` and `ccm fir` (the gateway relays both as
  /// key frame requests); `direction` is `sendrecv` or `sendonly` (hold).
  static func localSection(
    port: UInt16, answering remote: SIPVideoDescription?, direction: String
  ) -> [String] {
    let pt = remote?.payloadType ?? offeredVP8PayloadType
    return [
      "m=video \(port) RTP/AVP \(pt)", "a=rtpmap:\(pt) VP8/90000", "a=rtcp-fb:\(pt) nack pli",
      "a=rtcp-fb:\(pt) ccm fir", "a=\(direction)",
    ]
  }

  /// The format list of the first `m=video` line of `sdp` (`"96 97"`), whether or not the
  /// gateway can take it; `nil` when the offer has no video section.
  static func offeredFormats(_ sdp: String) -> String? {
    guard sdp.utf8.count <= SIPMediaDescription.maxLength else { return nil }
    for raw in sdp.split(whereSeparator: \.isNewline) where raw.hasPrefix("m=video ") {
      let parts = raw.dropFirst(2).split(separator: " ")
      guard parts.count >= 4 else { return nil }
      return parts.dropFirst(3).prefix(32).joined(separator: " ")
    }
    return nil
  }

  /// Whether `sdp`'s first `m=video` line comes before its first `m=audio` line.
  static func videoFirst(_ sdp: String) -> Bool {
    guard sdp.utf8.count <= SIPMediaDescription.maxLength else { return false }
    for raw in sdp.split(whereSeparator: \.isNewline) {
      if raw.hasPrefix("m=video ") { return true }
      if raw.hasPrefix("m=audio ") { return false }
    }
    return false
  }

  /// The whole SDP from the audio leg's SDP (session lines and the audio section) and a video
  /// section (`[]` for none), with the video section first when `videoFirst`: an answer lists
  /// its m-lines in the offer's order (RFC 3264 §6), later offers in the previous SDP's order
  /// (§8).
  static func sessionDescription(audio: String, video: [String], videoFirst: Bool) -> String {
    let videoText = video.map { $0 + "\r\n" }.joined()
    guard videoFirst, !video.isEmpty, let start = audio.range(of: "\r\nm=audio ") else {
      return audio + videoText
    }
    // CR LF is one Character (one grapheme cluster): one step past it is the `m=` line.
    let sessionEnd = audio.index(after: start.lowerBound)
    return String(audio[..<sessionEnd]) + videoText + String(audio[sessionEnd...])
  }

  /// The answer's refusal of an offered video stream (RFC 3264 §6: port 0, the offer's
  /// formats kept because an `m=` line needs at least one).
  static func refusedSection(formats: String) -> [String] {
    ["m=video 0 RTP/AVP \(formats)"]
  }
}

/// The SIP leg's audio as its SDP says it (RFC 4566, RFC 3264): where the far end receives
/// RTP, the codec it took (Opus, passed through to the WebRTC leg, or G.711, transcoded) and
/// its `telephone-event` payload type. Sans-I/O.
struct SIPMediaDescription: Sendable, Equatable {
  /// An audio codec of the SIP leg.
  enum Codec: String, Sendable {
    case pcmu = "PCMU"
    case pcma = "PCMA"
    /// RFC 7587 Opus: the WebRTC leg's own codec, so the gateway passes it through.
    case opus = "opus"
  }

  /// The payload type the gateway offers Opus on (dynamic, RFC 3551 §6).
  static let offeredOpusPayloadType: UInt8 = 111

  var address: String
  var port: UInt16
  var codec: Codec
  /// The codec's payload type: 0 (PCMU), 8 (PCMA) or the far end's Opus one.
  var payloadType: UInt8
  /// `telephone-event/8000` payload type, `nil` when the far end did not offer it.
  var telephoneEvent: UInt8?
  /// `a=sendonly`/`a=inactive`: the far end holds the call.
  var holding: Bool

  /// Why an SDP cannot be used.
  enum ParseError: Error, Equatable, CustomStringConvertible {
    case noAudio
    case noAddress
    case badPort(String)
    case noCommonCodec

    var description: String {
      switch self {
      case .noAudio: return "SDP has no usable m=audio line"
      case .noAddress: return "SDP has no c= address"
      case .badPort(let text): return "SDP has a bad audio port '\(text.prefix(16))'"
      case .noCommonCodec: return "No common codecs (opus/PCMU/PCMA)"
      }
    }
  }

  /// Longest SDP parsed; longer input is refused.
  static let maxLength = 64 * 1024

  /// Reads the first `m=audio` section of `sdp`.
  /// - Throws: `ParseError` when the SDP has no audio, address, valid port or G.711 codec.
  static func parse(_ sdp: String) throws(ParseError) -> SIPMediaDescription {
    guard sdp.utf8.count <= maxLength else { throw .noAudio }
    var sessionAddress: String?
    var mediaAddress: String?
    var port: UInt16?
    var formats: [UInt8] = []
    var rtpmap: [UInt8: String] = [:]
    var holding = false
    var inAudio = false
    var sawAudio = false
    // Lines before the first m= line are the session's; a video section before the audio one
    // (a video-first offer) lends the audio neither its address nor its direction.
    var sawMedia = false
    for raw in sdp.split(whereSeparator: \.isNewline) {
      let line = String(raw)
      if line.hasPrefix("m=") {
        sawMedia = true
        if sawAudio { inAudio = false; continue }
        let parts = line.dropFirst(2).split(separator: " ")
        guard parts.first == "audio" else { inAudio = false; continue }
        guard parts.count >= 4 else { throw .noAudio }
        guard let value = UInt16(parts[1]), value > 0 else { throw .badPort(String(parts[1])) }
        port = value
        formats = parts.dropFirst(3).prefix(32).compactMap { UInt8($0) }
        inAudio = true
        sawAudio = true
      } else if line.hasPrefix("c=") {
        let parts = line.split(separator: " ")
        guard parts.count >= 3 else { continue }
        if inAudio {
          mediaAddress = String(parts[2])
        } else if !sawMedia {
          sessionAddress = String(parts[2])
        }
      } else if inAudio, line.hasPrefix("a=rtpmap:") {
        let body = line.dropFirst("a=rtpmap:".count)
        let parts = body.split(separator: " ", maxSplits: 1)
        if parts.count == 2, let pt = UInt8(parts[0]) {
          rtpmap[pt] = parts[1].lowercased()
        }
      } else if line == "a=sendonly" || line == "a=inactive" {
        if inAudio || !sawMedia { holding = true }
      }
    }
    guard sawAudio, let port else { throw .noAudio }
    guard let address = mediaAddress ?? sessionAddress, !address.isEmpty else {
      throw .noAddress
    }
    var codec: Codec?
    var payloadType: UInt8 = 0
    for format in formats {
      let name = rtpmap[format] ?? (format == 0 ? "pcmu/8000" : format == 8 ? "pcma/8000" : "")
      if name.hasPrefix("pcmu/8000") {
        codec = .pcmu
      } else if name.hasPrefix("pcma/8000") {
        codec = .pcma
      } else if name.hasPrefix("opus/48000"), format >= 96, format <= 127 {
        codec = .opus
      }
      payloadType = format
      if codec != nil { break }
    }
    guard let codec else { throw .noCommonCodec }
    let telephoneEvent = formats.first { rtpmap[$0]?.hasPrefix("telephone-event/8000") == true }
    return SIPMediaDescription(
      address: address, port: port, codec: codec, payloadType: payloadType,
      telephoneEvent: telephoneEvent, holding: holding)
  }

  /// The gateway's SDP: an offer with Opus (111, preferred: no transcoding), PCMU, PCMA and
  /// telephone-event 101, or an answer that keeps the far end's codec and event payload type. `direction` is `sendrecv` or
  /// `sendonly` (hold, RFC 3264 §8.4).
  static func localSDP(
    address: String, port: UInt16, sessionId: UInt64, version: Int,
    answering remote: SIPMediaDescription?, direction: String
  ) -> String {
    let event: UInt8? = remote == nil ? 101 : remote?.telephoneEvent
    let opus =
      remote?.codec == .opus ? remote?.payloadType : remote == nil ? offeredOpusPayloadType : nil
    var formats: [UInt8] = remote.map { [$0.payloadType] } ?? [offeredOpusPayloadType, 0, 8]
    if let event { formats.append(event) }
    let formatList = formats.map { String($0) }.joined(separator: " ")
    var lines: [String] = [
      "v=0", "o=- \(sessionId) \(version) IN IP4 \(address)", "s=WCS local server",
      "c=IN IP4 \(address)", "t=0 0",
      "m=audio \(port) RTP/AVP \(formatList)",
    ]
    if let opus {
      // Mono, no FEC: what the WebRTC leg's SDK sends (RFC 7587 §6.1 keeps the /2).
      lines.append("a=rtpmap:\(opus) opus/48000/2")
      lines.append("a=fmtp:\(opus) useinbandfec=0")
    }
    if remote == nil || remote?.codec == .pcmu { lines.append("a=rtpmap:0 PCMU/8000") }
    if remote == nil || remote?.codec == .pcma { lines.append("a=rtpmap:8 PCMA/8000") }
    if let event {
      lines.append("a=rtpmap:\(event) telephone-event/8000")
      lines.append("a=fmtp:\(event) 0-15")
    }
    lines.append("a=ptime:20")
    lines.append("a=\(direction)")
    return lines.joined(separator: "\r\n") + "\r\n"
  }
}

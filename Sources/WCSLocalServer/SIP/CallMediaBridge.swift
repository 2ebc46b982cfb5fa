import WCSCodecs
import WCSProtocols

/// The audio of one gateway call between its WebRTC leg (Opus, RFC 7587) and its SIP leg
/// (PCMU/PCMA, RFC 3551 §4.5.14), transcoded through 48 kHz linear PCM (libopus and
/// `G711AudioConverter`), or passed through with its payload type and SSRC rewritten when the
/// SIP side took Opus too. Sans-I/O: packets in, packets out; the driver does the sockets.
///
/// Each direction has its own SSRC, sequence numbers and timestamps (RFC 3550 §5.1): toward
/// SIP the timestamps are the Opus ones scaled to 8 kHz, and RFC 4733 events the SIP leg sends
/// take their numbers from the same sequence (`numberForSIP`); toward WebRTC the G.711 audio is
/// regrouped into 20 ms Opus frames, timestamped from the SIP packets' own. While `holding` nothing goes either way
/// (RFC 3264 §8.4). RFC 4733 events from the SIP side are not forwarded as RTP: the WebRTC leg's
/// answer keeps only Opus and VP8, so the SIP leg decodes them (`TelephoneEventDecoder`) and the
/// client hears of them as `notifyDtmf`; the SDK's own DTMF goes out through `sendDtmf`, which
/// the SIP leg turns into telephone-events.
public struct CallMediaBridge {
  /// What went through, for statistics and tests.
  public struct Statistics: Equatable, Sendable {
    /// RTP packets sent to the SIP leg.
    public var packetsToSIP = 0
    /// RTP packets sent to the WebRTC leg.
    public var packetsToWebRTC = 0
    /// Packets that could not be used (not RTP, another payload type, undecodable), both ways.
    public var packetsDropped = 0
    /// Packets dropped because the call is on hold.
    public var packetsHeld = 0
  }

  /// How the SIP leg carries audio.
  public enum SIPCodec: Equatable, Sendable {
    /// G.711 μ-law (PT 0) or A-law (PT 8): transcoded.
    case g711(G711.Law)
    /// Opus with this payload type: passed through.
    case opus(UInt8)
  }

  /// Samples (48 kHz) from the SIP side held for the next Opus frame, at most (100 ms): a far
  /// end sending faster than real time cannot grow the buffer.
  public static let maxPendingSamples = 4800

  /// The WebRTC leg's Opus payload type.
  public let webRTCPayloadType: UInt8
  /// Our SSRC toward the WebRTC client.
  public let webRTCSSRC: UInt32
  /// Our SSRC toward the SIP far end.
  public let sipSSRC: UInt32
  /// The SIP side's codec, `nil` until its SDP is known.
  public private(set) var sipCodec: SIPCodec?
  /// The call is on hold (either side): no media either way.
  public var holding = false
  /// What went through.
  public private(set) var statistics = Statistics()

  private var toSIP: G711AudioConverter?
  private var fromSIP: G711AudioConverter?
  private let decoder: OpusDecoder
  private let encoder: OpusEncoder
  /// The first WebRTC packet's timestamp, and ours for it.
  private var toSIPOrigin: UInt32?
  private let toSIPBase: UInt32
  /// The next sequence number toward SIP: audio and RFC 4733 events share it.
  private var sipSequence: UInt16
  /// The timestamp of the last audio packet toward SIP.
  private var lastSIPTimestamp: UInt32
  /// RFC 4733 events being sent: audio toward SIP waits (RFC 4733 §2.5.1.2).
  private var eventsInProgress = 0
  private var pending: [Int16] = []
  /// The 48 kHz timestamp of `pending`'s first sample.
  private var pendingTimestamp: UInt32 = 0
  private var fromSIPOrigin: UInt32?
  private let fromSIPBase: UInt32
  private var webRTCSequence: UInt16

  /// A bridge for a WebRTC leg that negotiated Opus as `webRTCPayloadType`. Toward SIP it
  /// continues the SIP leg's stream at `sipSequence` and `sipTimestamp` (random by default),
  /// with `eventsInProgress` RFC 4733 events already going out (audio waits for their
  /// `resumeAudioToSIP()`): a far end that got events before the bridge sees one stream.
  /// - Throws: `OpusError` when libopus cannot make a codec.
  public init(
    webRTCPayloadType: UInt8, webRTCSSRC: UInt32, sipSSRC: UInt32,
    sipSequence: UInt16 = .random(in: 0...UInt16.max),
    sipTimestamp: UInt32 = .random(in: 0...UInt32.max), eventsInProgress: Int = 0
  ) throws(OpusError) {
    self.webRTCPayloadType = webRTCPayloadType
    self.webRTCSSRC = webRTCSSRC
    self.sipSSRC = sipSSRC
    decoder = try OpusDecoder(channels: 1)
    // No FEC: the SIP leg's G.711 has none to carry over, and the WebRTC leg is loopback here.
    encoder = try OpusEncoder(
      configuration: OpusEncoder.Configuration(channels: 1, bitrate: 32_000, inbandFEC: false))
    toSIPBase = sipTimestamp
    self.sipSequence = sipSequence
    lastSIPTimestamp = sipTimestamp
    self.eventsInProgress = max(0, eventsInProgress)
    fromSIPBase = UInt32.random(in: 0...UInt32.max)
    webRTCSequence = UInt16.random(in: 0...UInt16.max)
  }

  /// The SIP side's codec, from its SDP (again after a re-INVITE: the converters restart when
  /// it changes).
  public mutating func setSIPCodec(_ codec: SIPCodec) {
    guard codec != sipCodec else { return }
    sipCodec = codec
    if case .g711(let law) = codec {
      toSIP = G711AudioConverter(law: law)
      fromSIP = G711AudioConverter(law: law)
    } else {
      toSIP = nil
      fromSIP = nil
    }
    pending = []
  }

  /// A packet the WebRTC leg received (Opus from the client): the packet for the SIP leg, or
  /// nil (no SIP codec yet, held, or not usable).
  public mutating func receiveFromWebRTC(_ bytes: [UInt8]) -> [UInt8]? {
    guard let packet = try? RTPPacket.parse(bytes), packet.header.payloadType == webRTCPayloadType,
      !packet.payload.isEmpty
    else {
      statistics.packetsDropped += 1
      return nil
    }
    guard let sipCodec else { return nil }
    guard !holding else {
      statistics.packetsHeld += 1
      return nil
    }
    guard eventsInProgress == 0 else {
      statistics.packetsHeld += 1
      return nil
    }
    let origin = toSIPOrigin ?? packet.header.timestamp
    toSIPOrigin = origin
    let elapsed = packet.header.timestamp &- origin
    let payloadType: UInt8
    let payload: [UInt8]
    let timestamp: UInt32
    switch sipCodec {
    case .opus(let type):
      payloadType = type
      payload = packet.payload
      timestamp = toSIPBase &+ elapsed
    case .g711(let law):
      guard let frame = try? decoder.decode(packet.payload), var converter = toSIP else {
        statistics.packetsDropped += 1
        return nil
      }
      payload = converter.encode(frame)
      toSIP = converter
      payloadType = law.payloadType
      timestamp = toSIPBase &+ elapsed / 6
    }
    let header = RTPHeader(
      marker: packet.header.marker, payloadType: payloadType, sequenceNumber: sipSequence,
      timestamp: timestamp, ssrc: sipSSRC)
    guard let out = try? RTPPacket(header: header, payload: payload).serialized() else {
      return nil
    }
    sipSequence &+= 1
    lastSIPTimestamp = timestamp
    statistics.packetsToSIP += 1
    return out
  }

  /// RFC 4733 events start toward SIP: audio waits until `resumeAudioToSIP()`. Returns the
  /// timestamp the first event takes, one 20 ms packet after the last audio (8 kHz G.711
  /// clock; Opus pass-through uses 48 kHz, where the events' own 8 kHz clock does not apply).
  public mutating func pauseAudioToSIP() -> UInt32 {
    eventsInProgress += 1
    return lastSIPTimestamp &+ 160
  }

  /// The last event packet went out: audio goes on.
  public mutating func resumeAudioToSIP() {
    eventsInProgress = max(0, eventsInProgress - 1)
  }

  /// Gives an event packet (a whole RTP packet, its SSRC ours) the next sequence number of
  /// the stream toward SIP.
  public mutating func numberForSIP(_ packet: inout [UInt8]) {
    guard packet.count >= RTPHeader.fixedHeaderLength else { return }
    packet[2] = UInt8(sipSequence >> 8)
    packet[3] = UInt8(sipSequence & 0xff)
    sipSequence &+= 1
  }

  /// A packet the SIP leg received: the packets for the WebRTC leg (none until a 20 ms Opus
  /// frame is complete, or when held or not usable). RFC 4733 events are dropped.
  public mutating func receiveFromSIP(_ bytes: [UInt8]) -> [[UInt8]] {
    guard let packet = try? RTPPacket.parse(bytes), let sipCodec else {
      statistics.packetsDropped += 1
      return []
    }
    guard !holding else {
      statistics.packetsHeld += 1
      return []
    }
    let origin = fromSIPOrigin ?? packet.header.timestamp
    fromSIPOrigin = origin
    switch sipCodec {
    case .opus(let type):
      guard packet.header.payloadType == type, !packet.payload.isEmpty else {
        statistics.packetsDropped += 1
        return []
      }
      return send(
        packet.payload, timestamp: fromSIPBase &+ (packet.header.timestamp &- origin),
        marker: packet.header.marker
      ).map { [$0] } ?? []
    case .g711(let law):
      guard packet.header.payloadType == law.payloadType, var converter = fromSIP else {
        statistics.packetsDropped += 1
        return []
      }
      let frame = converter.decode(packet.payload)
      fromSIP = converter
      if pending.isEmpty {
        pendingTimestamp = fromSIPBase &+ (packet.header.timestamp &- origin) &* 6
      }
      pending.append(contentsOf: frame.samples)
      if pending.count > Self.maxPendingSamples {
        let excess = pending.count - Self.maxPendingSamples
        pending.removeFirst(excess)
        pendingTimestamp &+= UInt32(excess)
      }
      var out: [[UInt8]] = []
      let size = OpusEncoder.frameSize
      while pending.count >= size {
        let frame = PCMAudioFrame(samples: Array(pending[0..<size]), channels: 1)
        pending.removeFirst(size)
        if let payload = try? encoder.encode(frame),
          let bytes = send(payload, timestamp: pendingTimestamp, marker: false)
        {
          out.append(bytes)
        } else {
          statistics.packetsDropped += 1
        }
        pendingTimestamp &+= UInt32(size)
      }
      return out
    }
  }

  private mutating func send(_ payload: [UInt8], timestamp: UInt32, marker: Bool) -> [UInt8]? {
    let header = RTPHeader(
      marker: marker, payloadType: webRTCPayloadType, sequenceNumber: webRTCSequence,
      timestamp: timestamp, ssrc: webRTCSSRC)
    guard let bytes = try? RTPPacket(header: header, payload: payload).serialized() else {
      return nil
    }
    webRTCSequence &+= 1
    statistics.packetsToWebRTC += 1
    return bytes
  }
}

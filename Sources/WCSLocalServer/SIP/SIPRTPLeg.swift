import CSIPGateway
import Dispatch
import Foundation
import Synchronization
import WCSCodecs
import WCSProtocols

#if canImport(Glibc)
  import Glibc
#endif

/// The plain-RTP side of one gateway call (RFC 3550 over UDP): a socket on the gateway's media
/// address, what the far end's SDP says, and what arrived. Received G.711 is kept (the last
/// `keptSamples`) so the gateway can report its level and tone; RFC 4733 DTMF goes out here.
final class SIPRTPLeg: Sendable {
  struct State {
    var remote: SIPMediaDescription?
    var packetsReceived = 0
    var bytesReceived = 0
    var samples: [Int16] = []
    var sequence = UInt16.random(in: 0...UInt16.max)
    var timestamp = UInt32.random(in: 0...UInt32.max)
    var dtmfPacketsSent = 0
    /// RFC 4733 events scheduled and not yet ended: a bridge made meanwhile holds its audio.
    var eventsInProgress = 0
    var sdpVersion = 1
    /// RFC 4733 events from the far end, made once its SDP names their payload type.
    var events: TelephoneEventDecoder?
  }

  /// Samples (8 kHz) of received audio kept for statistics: one second.
  static let keptSamples = 8000
  /// Largest datagram read.
  static let maxDatagram = 2048

  let address: String
  let port: UInt16
  let ssrc = UInt32.random(in: 1...UInt32.max)
  let sessionId = UInt64.random(in: 1...UInt64(Int64.max))
  private let fd: Int32
  private let source: Mutex<(any DispatchSourceRead)?>
  private let queue: DispatchQueue

  /// Binds a UDP socket on `address` (an IPv4 literal), any port.
  /// - Throws: `SIPGatewayError.socket` with errno's text.
  init(address: String, queue: DispatchQueue) throws(SIPGatewayError) {
    let (fd, port) = try SIPUDPSocket.open(address: address)
    self.fd = fd
    self.address = address
    self.port = port
    self.queue = queue
    let reception = Reception()
    self.reception = reception
    let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
    source.setEventHandler { reception.readAvailable(fd) }
    source.setCancelHandler { Glibc.close(fd) }
    source.resume()
    self.source = Mutex(source)
  }

  /// Everything the leg knows and counted; the socket's handler fills it.
  let reception: Reception

  deinit { close() }

  /// Stops reading and closes the socket (once).
  func close() {
    source.withLock { source in
      source?.cancel()
      source = nil
    }
  }

  /// The gateway's SDP for this leg: an offer, or the answer to `remote`.
  func localSDP(answering remote: SIPMediaDescription?, hold: Bool) -> String {
    let version = reception.state.withLock { state -> Int in
      state.sdpVersion += 1
      return state.sdpVersion
    }
    return SIPMediaDescription.localSDP(
      address: address, port: port, sessionId: sessionId, version: version, answering: remote,
      direction: hold ? "sendonly" : "sendrecv")
  }

  /// Sends `digits` as RFC 4733 events, paced on the leg's queue; `false` when the far end
  /// negotiated no telephone-event or gave no address.
  /// The events share the SSRC and numbering of the call's audio toward SIP (RFC 4733 §2.5.1.2:
  /// the audio pauses during them), so the far end sees one stream, also when the bridge to the
  /// WebRTC leg is made while they go out: each packet takes its sequence number when sent.
  func sendDTMF(_ digits: String) -> Bool {
    // Link, then state: the same order as `bridge(to:)`, so a bridge is made either before
    // these events are planned (and numbers them) or after (and continues after them).
    let plan = reception.link.withLock {
      link -> (packets: [TelephoneEventEncoder.Packet], to: SIPMediaDescription)? in
      reception.state.withLock { state in
        guard let remote = state.remote, let pt = remote.telephoneEvent else { return nil }
        let timestamp = link?.bridge.pauseAudioToSIP() ?? state.timestamp
        let result = TelephoneEventEncoder(payloadType: pt).packets(
          for: digits, ssrc: ssrc, sequence: state.sequence, timestamp: timestamp)
        state.sequence = result.nextSequence
        state.timestamp = result.nextTimestamp
        state.eventsInProgress += 1
        return (result.packets, remote)
      }
    }
    guard let plan else { return false }
    let start = DispatchTime.now()
    for (index, packet) in plan.packets.enumerated() {
      let last = index == plan.packets.count - 1
      queue.asyncAfter(deadline: start + .milliseconds(packet.atMillis)) { [weak self] in
        guard let self else { return }
        var bytes = packet.bytes
        self.reception.link.withLock { link in
          link?.bridge.numberForSIP(&bytes)
          if last { link?.bridge.resumeAudioToSIP() }
        }
        if last { self.reception.state.withLock { $0.eventsInProgress -= 1 } }
        guard self.send(bytes, to: plan.to) else { return }
        self.reception.state.withLock { $0.dtmfPacketsSent += 1 }
      }
    }
    return true
  }

  /// Bridges this leg to the call's WebRTC leg `mediaSessionId` on `port` (once; again after a
  /// failed try). `false` when the WebRTC leg is gone or has no Opus, or libopus failed.
  func bridge(to port: any CallMediaPort, mediaSessionId: String) -> Bool {
    guard reception.link.withLock({ $0 == nil }) else { return true }
    let opus = port.openCallMedia(mediaSessionId) { [weak self] packet in
      self?.fromWebRTC(packet)
    }
    guard let opus else { return false }
    let ssrc = ssrc
    // Made inside the lock: the codecs are not Sendable, so the bridge never leaves it.
    return reception.link.withLock { link in
      let (remote, sequence, timestamp, events) = reception.state.withLock {
        ($0.remote, $0.sequence, $0.timestamp, $0.eventsInProgress)
      }
      guard
        var bridge = try? CallMediaBridge(
          webRTCPayloadType: opus, webRTCSSRC: UInt32.random(in: 1...UInt32.max), sipSSRC: ssrc,
          sipSequence: sequence, sipTimestamp: timestamp, eventsInProgress: events)
      else { return false }
      if let remote { bridge.setSIPCodec(remote.bridgeCodec) }
      bridge.holding = remote?.holding ?? false
      link = Reception.Link(bridge: bridge, port: port, mediaSessionId: mediaSessionId)
      return true
    }
  }

  /// What the far end's SDP now says (answer, re-INVITE, incoming offer).
  func setRemote(_ remote: SIPMediaDescription) {
    reception.state.withLock { $0.remote = remote }
    reception.link.withLock { link in
      link?.bridge.setSIPCodec(remote.bridgeCodec)
      if let local = link?.localHold { link?.bridge.holding = local || remote.holding }
    }
  }

  /// Our side holds the call (`hold`/`unhold`): media stops both ways until unhold.
  func setHolding(_ on: Bool) {
    let remoteHolds = reception.state.withLock { $0.remote?.holding ?? false }
    reception.link.withLock { link in
      link?.localHold = on
      link?.bridge.holding = on || remoteHolds
    }
  }

  private func fromWebRTC(_ packet: [UInt8]) {
    guard let out = reception.link.withLock({ $0?.bridge.receiveFromWebRTC(packet) }),
      let remote = reception.state.withLock({ $0.remote })
    else { return }
    _ = send(out, to: remote)
  }

  private func send(_ bytes: [UInt8], to remote: SIPMediaDescription) -> Bool {
    SIPUDPSocket.send(fd, bytes, to: remote.address, port: remote.port)
  }
}

/// What the leg's socket received, filled on the leg's queue.
final class Reception: Sendable {
  /// The bridge to the call's WebRTC leg and where its packets go.
  struct Link {
    var bridge: CallMediaBridge
    let port: any CallMediaPort
    let mediaSessionId: String
    var localHold = false
  }

  let state = Mutex(SIPRTPLeg.State())
  let link = Mutex<Link?>(nil)
  /// Where the far end's DTMF digits go (RFC 4733 events, once per key press).
  let digits = Mutex<(@Sendable (TelephoneEventDecoder.Digit) -> Void)?>(nil)

  func readAvailable(_ fd: Int32) {
    var buffer = [UInt8](repeating: 0, count: SIPRTPLeg.maxDatagram)
    while true {
      let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      guard count > 0 else { return }
      receive(buffer[0..<count])
    }
  }

  private func receive(_ packet: ArraySlice<UInt8>) {
    guard packet.count >= 12, packet[packet.startIndex] >> 6 == 2 else { return }
    let base = packet.startIndex
    let csrcCount = Int(packet[base] & 0x0f)
    let hasExtension = packet[base] & 0x10 != 0
    let payloadType = packet[base + 1] & 0x7f
    var offset = 12 + csrcCount * 4
    if hasExtension {
      guard packet.count >= offset + 4 else { return }
      let words = Int(packet[base + offset + 2]) << 8 | Int(packet[base + offset + 3])
      offset += 4 + words * 4
    }
    guard packet.count > offset else { return }
    let payload = packet[(base + offset)...]
    let pressed = state.withLock { state -> [TelephoneEventDecoder.Digit] in
      state.packetsReceived += 1
      state.bytesReceived += packet.count
      return decodeEvent(packet, payloadType: payloadType, &state)
    }
    if !pressed.isEmpty, let handler = digits.withLock({ $0 }) {
      for digit in pressed { handler(digit) }
    }
    state.withLock { state in
      guard payloadType == 0 || payloadType == 8 else { return }
      state.samples.append(
        contentsOf: payload.map {
          payloadType == 0 ? G711.linear(muLaw: $0) : G711.linear(aLaw: $0)
        })
      if state.samples.count > SIPRTPLeg.keptSamples {
        state.samples.removeFirst(state.samples.count - SIPRTPLeg.keptSamples)
      }
    }
    let forward = link.withLock {
      link -> (packets: [[UInt8]], port: any CallMediaPort, id: String)? in
      guard link != nil, let packets = link?.bridge.receiveFromSIP(Array(packet)),
        let port = link?.port, let id = link?.mediaSessionId
      else { return nil }
      return (packets, port, id)
    }
    guard let forward else { return }
    for bytes in forward.packets { forward.port.sendCallMedia(forward.id, bytes) }
  }

  /// The digits a telephone-event packet completes. Audio ends an event whose end packets
  /// were all lost (RFC 4733 §2.5.1.2: the sender pauses its audio during an event).
  private func decodeEvent(
    _ packet: ArraySlice<UInt8>, payloadType: UInt8, _ state: inout SIPRTPLeg.State
  ) -> [TelephoneEventDecoder.Digit] {
    guard let type = state.remote?.telephoneEvent else { return [] }
    guard type == payloadType else { return state.events?.flush().map { [$0] } ?? [] }
    guard let parsed = try? RTPPacket.parse(Array(packet)) else { return [] }
    if state.events?.payloadType != type {
      state.events = TelephoneEventDecoder(payloadType: type)
    }
    return state.events?.receive(parsed) ?? []
  }

  /// What the bridge passed so far (zeros before it exists).
  var bridgeStatistics: CallMediaBridge.Statistics {
    link.withLock { $0?.bridge.statistics ?? CallMediaBridge.Statistics() }
  }
}

extension SIPMediaDescription {
  /// How the bridge carries the leg's codec.
  var bridgeCodec: CallMediaBridge.SIPCodec {
    switch codec {
    case .pcmu: return .g711(.muLaw)
    case .pcma: return .g711(.aLaw)
    case .opus: return .opus(payloadType)
    }
  }
}

/// Why the gateway could not start or serve a request.
public enum SIPGatewayError: Error, Sendable, Equatable, CustomStringConvertible {
  /// A socket could not be opened or bound.
  case socket(String)
  /// libre refused (errno value and its text).
  case sip(Int32, String)

  /// One line.
  public var description: String {
    switch self {
    case .socket(let text): return "SIP gateway socket: \(text)"
    case .sip(let code, let text): return "SIP gateway: \(text) (errno \(code))"
    }
  }
}

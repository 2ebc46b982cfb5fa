import Dispatch
import Foundation
import Synchronization
import WCSProtocols

#if canImport(Glibc)
  import Glibc
#endif

/// The plain-RTP video side of one gateway call (VP8, RFC 7741): an RTP socket and its RTCP
/// socket on the next port, what the far end's SDP says, and the `CallVideoBridge` to the
/// call's WebRTC leg once that is connected. Key frame requests cross between the two.
final class SIPVideoLeg: Sendable {
  struct Link {
    var bridge: CallVideoBridge
    let port: any CallMediaPort
    let mediaSessionId: String
  }

  struct State {
    var remote: SIPVideoDescription?
    var link: Link?
    var localHold = false
    var packetsReceived = 0
  }

  let address: String
  let port: UInt16
  private let rtp: Int32
  private let rtcp: Int32
  private let inbox = SIPVideoInbox()
  private let sources: Mutex<[any DispatchSourceRead]>

  /// Binds the RTP/RTCP pair on `address`.
  /// - Throws: `SIPGatewayError.socket` when no pair can be bound.
  init(address: String, queue: DispatchQueue) throws(SIPGatewayError) {
    let pair = try SIPUDPSocket.openPair(address: address)
    self.address = address
    rtp = pair.rtp
    rtcp = pair.rtcp
    port = pair.port
    let inbox = inbox
    var made: [any DispatchSourceRead] = []
    for (fd, isRTCP) in [(pair.rtp, false), (pair.rtcp, true)] {
      let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
      source.setEventHandler { SIPUDPSocket.drain(fd) { inbox.received($0, rtcp: isRTCP) } }
      source.setCancelHandler { Glibc.close(fd) }
      source.resume()
      made.append(source)
    }
    sources = Mutex(made)
  }

  deinit { close() }

  /// Stops reading and closes both sockets (once).
  func close() {
    let open = sources.withLock { list -> [any DispatchSourceRead] in
      defer { list = [] }
      return list
    }
    for source in open { source.cancel() }
  }

  /// The gateway's `m=video` section, answering `remote` when given.
  func localSection(answering remote: SIPVideoDescription?, hold: Bool) -> [String] {
    SIPVideoDescription.localSection(
      port: port, answering: remote, direction: hold ? "sendonly" : "sendrecv")
  }

  /// What the far end's SDP now says about video.
  func setRemote(_ remote: SIPVideoDescription) {
    inbox.state.withLock { state in
      state.remote = remote
      state.link?.bridge.holding = state.localHold || remote.holding
    }
  }

  /// Our side holds the call: no video either way until unhold.
  func setHolding(_ on: Bool) {
    inbox.state.withLock { state in
      state.localHold = on
      state.link?.bridge.holding = on || (state.remote?.holding ?? false)
    }
  }

  /// The far end's video, once its SDP is known.
  var remoteDescription: SIPVideoDescription? { inbox.state.withLock { $0.remote } }

  /// RTP packets received from the far end so far.
  var packetsReceived: Int { inbox.state.withLock { $0.packetsReceived } }

  /// What the bridge passed (zeros before it exists).
  var statistics: CallVideoBridge.Statistics {
    inbox.state.withLock { $0.link?.bridge.statistics ?? CallVideoBridge.Statistics() }
  }

  /// Bridges to the call's WebRTC leg `mediaSessionId` (once); `false` when the far end took
  /// no video or the WebRTC leg has no VP8.
  func bridge(to port: any CallMediaPort, mediaSessionId: String) -> Bool {
    guard let remote = inbox.state.withLock({ $0.link == nil ? $0.remote : nil }) else {
      return inbox.state.withLock { $0.link != nil }
    }
    let vp8 = port.openCallVideo(
      mediaSessionId,
      receive: { [weak self] packet in self?.fromWebRTC(packet) },
      keyFrameRequested: { [weak self] in self?.askSIPForKeyFrame() })
    guard let vp8 else { return false }
    var generator = SystemRandomNumberGenerator()
    inbox.state.withLock { state in
      var bridge = CallVideoBridge(webRTCPayloadType: vp8, sip: remote, using: &generator)
      bridge.holding = state.localHold || remote.holding
      state.link = Link(bridge: bridge, port: port, mediaSessionId: mediaSessionId)
    }
    // The far end's decoder starts with a key frame.
    port.requestCallKeyFrame(mediaSessionId)
    return true
  }

  private func fromWebRTC(_ packet: [UInt8]) {
    let out = inbox.state.withLock { state -> ([UInt8], SIPVideoDescription)? in
      guard var link = state.link, let remote = state.remote,
        let out = link.bridge.receiveFromWebRTC(packet, now: MediaInstant.now())
      else { return nil }
      state.link = link
      return (out, remote)
    }
    if let (bytes, remote) = out {
      _ = SIPUDPSocket.send(rtp, bytes, to: remote.address, port: remote.port)
    }
  }

  private func askSIPForKeyFrame() {
    let out = inbox.state.withLock { state -> ([UInt8], SIPVideoDescription)? in
      guard var link = state.link, let remote = state.remote,
        let bytes = link.bridge.keyFrameRequestForSIP()
      else { return nil }
      state.link = link
      return (bytes, remote)
    }
    if let (bytes, remote) = out {
      _ = SIPUDPSocket.send(rtcp, bytes, to: remote.address, port: remote.rtcpPort)
    }
  }
}

/// What a video leg's sockets feed, filled on the gateway's queue.
final class SIPVideoInbox: Sendable {
  let state = Mutex(SIPVideoLeg.State())

  func received(_ datagram: [UInt8], rtcp isRTCP: Bool) {
    guard datagram.count >= 8, datagram[0] >> 6 == 2 else { return }
    // RFC 5761 §4: on a muxed port, RTCP has packet types 200–206 where RTP's marker+PT are.
    let looksRTCP = isRTCP || (200...206).contains(datagram[1])
    if looksRTCP {
      let (asks, id, port) = state.withLock { state -> (Bool, String?, (any CallMediaPort)?) in
        guard var link = state.link else { return (false, nil, nil) }
        let asks = link.bridge.sipAsksForKeyFrame(datagram)
        state.link = link
        return (asks, link.mediaSessionId, link.port)
      }
      if asks, let id, let port { port.requestCallKeyFrame(id) }
      return
    }
    let forward = state.withLock { state -> ([UInt8], String, any CallMediaPort)? in
      state.packetsReceived += 1
      guard var link = state.link,
        let out = link.bridge.receiveFromSIP(datagram, now: MediaInstant.now())
      else { return nil }
      state.link = link
      return (out, link.mediaSessionId, link.port)
    }
    if let (out, id, port) = forward { port.sendCallMedia(id, out) }
  }
}

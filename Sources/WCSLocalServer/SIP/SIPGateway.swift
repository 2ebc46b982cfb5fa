import CSIPGateway
import Dispatch
import Foundation
import Synchronization

/// Settings of the local server's WebRTC–SIP gateway.
public struct SIPGatewayConfiguration: Sendable, Equatable {
  /// IPv4 address the SIP socket (UDP) and the RTP legs bind to.
  public var bindAddress = "127.0.0.1"
  /// SIP port, 0 = any free one (`SIPGateway.port` tells which).
  public var port: UInt16 = 0
  /// User part of the gateway's Contact for calls of sessions that did not register.
  public var user = "wcs"

  /// Defaults: loopback, any port.
  public init() {}
}

/// What one gateway call's RTP leg received (for tests and benchmarks).
public struct SIPLegStatistics: Sendable, Equatable {
  /// The SIP session number (`SIPGatewayCommand` `call`).
  public var call: UInt32
  /// RTP packets received from the far end.
  public var packetsReceived: Int
  /// Bytes of those packets.
  public var bytesReceived: Int
  /// RFC 4733 packets sent.
  public var dtmfPacketsSent: Int
  /// The last second of received G.711 audio, 8 kHz linear PCM.
  public var recentSamples: [Int16]
  /// RTP packets the bridge sent to the SIP far end.
  public var packetsToSIP = 0
  /// RTP packets the bridge sent to the WebRTC client.
  public var packetsToWebRTC = 0
  /// Packets the bridge held back because the call is on hold.
  public var packetsHeld = 0
  /// VP8 RTP packets received from the far end (video calls).
  public var videoPacketsReceived = 0
  /// VP8 RTP packets passed to the WebRTC client.
  public var videoPacketsToWebRTC = 0
  /// VP8 RTP packets passed to the SIP far end.
  public var videoPacketsToSIP = 0
  /// Key frame requests (RTCP PLI or FIR, RFC 4585 §6.3.1, RFC 5104 §4.3.1) from the SIP far end.
  public var keyFrameRequestsFromSIP = 0
  /// Key frame requests (PLI, or FIR for an end that only takes FIR) sent to the SIP far end.
  public var keyFrameRequestsToSIP = 0
}

/// One libre user agent and what its C event handler needs.
final class SIPAgentContext: Sendable {
  struct WeakGateway: Sendable { weak var value: SIPGateway? }

  let session: UInt64?
  /// The `sipgw_ua *` as a bit pattern (0 = none), so it can sit behind a Mutex.
  let pointer = Mutex<UInt>(0)
  let gateway = Mutex(WeakGateway())

  init(session: UInt64?) { self.session = session }

  var raw: OpaquePointer? { OpaquePointer(bitPattern: pointer.withLock { $0 }) }
}

/// The SIP side of the gateway: libre's user agents (through `CSIPGateway`) and one plain-RTP
/// leg per call. `perform` carries out the signalling core's `SIPGatewayCommand`s; the core's
/// inputs come back through `deliver`, on libre's thread or the gateway's queue (the driver hops
/// onto its own queue). Calls go out from one shared user agent, or from the session's own when
/// it registered, so that incoming calls reach that session's Contact.
public final class SIPGateway: Sendable {
  /// The SIP port of the shared user agent.
  public let port: UInt16
  let configuration: SIPGatewayConfiguration
  private let deliver: @Sendable (SIPGatewayEvent) -> Void
  private let queue = DispatchQueue(label: "SIPGateway")
  private let main: SIPAgentContext
  private let state = Mutex(State())
  struct WeakPort: Sendable { weak var value: (any CallMediaPort)? }
  private let callMedia = Mutex(WeakPort())

  struct CallRoute: Sendable {
    let agent: SIPAgentContext
    let call: UInt32
  }

  struct State: Sendable {
    var sessionAgents: [UInt64: SIPAgentContext] = [:]
    /// Gateway call number → user agent and libre's number of the call.
    var routes: [UInt32: CallRoute] = [:]
    var legs: [UInt32: SIPRTPLeg] = [:]
    var videoLegs: [UInt32: SIPVideoLeg] = [:]
    /// Incoming calls whose offer has a video section: its formats, until answered.
    var offeredVideo: [UInt32: String] = [:]
    /// Incoming calls whose offer put video before audio: the gateway's SDPs keep that order.
    var videoFirst: Set<UInt32> = []
    var nextIncoming: UInt32 = 0x8000_0000
    var stopped = false
  }

  /// Opens the SIP socket.
  /// - Throws: `SIPGatewayError.sip` when libre cannot bind it.
  public init(
    _ configuration: SIPGatewayConfiguration,
    deliver: @escaping @Sendable (SIPGatewayEvent) -> Void
  ) throws(SIPGatewayError) {
    self.configuration = configuration
    self.deliver = deliver
    let main = SIPAgentContext(session: nil)
    self.main = main
    self.port = try Self.open(
      main, configuration, port: configuration.port, user: configuration.user)
    main.gateway.withLock { $0.value = self }
  }

  /// Ends every call and registration and closes the sockets; no event follows.
  public func stop() {
    let (agents, legs) = state.withLock { state -> ([SIPAgentContext], [SIPRTPLeg]) in
      guard !state.stopped else { return ([], []) }
      state.stopped = true
      let agents = Array(state.sessionAgents.values)
      let legs = Array(state.legs.values)
      for leg in state.videoLegs.values { leg.close() }
      state.videoLegs = [:]
      state.offeredVideo = [:]
      state.videoFirst = []
      state.sessionAgents = [:]
      state.legs = [:]
      state.routes = [:]
      return (agents, legs)
    }
    guard !agents.isEmpty || !legs.isEmpty || main.raw != nil else { return }
    for agent in agents + [main] { Self.destroy(agent) }
    for leg in legs { leg.close() }
  }

  deinit { stop() }

  /// Statistics of every live call's RTP leg.
  public func legStatistics() -> [SIPLegStatistics] {
    let legs = state.withLock { $0.legs }
    return legs.keys.sorted().compactMap { call in
      guard let leg = legs[call] else { return nil }
      let bridged = leg.reception.bridgeStatistics
      var statistics = leg.reception.state.withLock {
        SIPLegStatistics(
          call: call, packetsReceived: $0.packetsReceived, bytesReceived: $0.bytesReceived,
          dtmfPacketsSent: $0.dtmfPacketsSent, recentSamples: $0.samples)
      }
      statistics.packetsToSIP = bridged.packetsToSIP
      statistics.packetsToWebRTC = bridged.packetsToWebRTC
      statistics.packetsHeld = bridged.packetsHeld
      if let video = state.withLock({ $0.videoLegs[call] }) {
        let passed = video.statistics
        statistics.videoPacketsReceived = video.packetsReceived
        statistics.videoPacketsToWebRTC = passed.packetsToWebRTC
        statistics.videoPacketsToSIP = passed.packetsToSIP
        statistics.keyFrameRequestsFromSIP = passed.keyFrameRequestsFromSIP
        statistics.keyFrameRequestsToSIP = passed.keyFrameRequestsToSIP
      }
      return statistics
    }
  }

  /// Live calls (SIP sessions with an RTP leg).
  public var callCount: Int { state.withLock { $0.legs.count } }

  // MARK: commands

  /// Carries out one command of the signalling core. Failures come back as events
  /// (`closed` for a call, `registration` for a REGISTER).
  public func perform(_ command: SIPGatewayCommand) {
    switch command {
    case .register(let session, let account, let expires): register(session, account, expires)
    case .unregister(let session):
      guard let agent = state.withLock({ $0.sessionAgents.removeValue(forKey: session) }) else {
        return
      }
      Self.destroy(agent)
    case .invite(
      let call, let session, let uri, let account, let visibleName, let headers, let video):
      invite(
        call, session: session, uri: uri, account: account, name: visibleName, headers,
        video: video)
    case .answer(let call, let video):
      guard let route = route(call), let leg = leg(call) else { return }
      let remote = leg.reception.state.withLock { $0.remote }
      let (videoLeg, offeredVideo, videoFirst) = state.withLock { state in
        let formats = state.offeredVideo.removeValue(forKey: call)
        let first = state.videoFirst.contains(call)
        guard !video, let refused = state.videoLegs.removeValue(forKey: call) else {
          return (state.videoLegs[call], formats, first)
        }
        refused.close()
        return (nil, formats, first)
      }
      var section: [String] = []
      if let videoLeg {
        section = videoLeg.localSection(answering: videoLeg.remoteDescription, hold: false)
      } else if let offeredVideo {
        // The client answered without video, or the offer's video has no VP8.
        section = SIPVideoDescription.refusedSection(formats: offeredVideo)
      }
      let sdp = SIPVideoDescription.sessionDescription(
        audio: leg.localSDP(answering: remote, hold: false), video: section,
        videoFirst: videoFirst)
      check(call, sipgw_answer(route.agent.raw, route.call, sdp))
    case .hangup(let call, let code, let reason):
      let (route, leg) = state.withLock {
        $0.videoLegs.removeValue(forKey: call)?.close()
        $0.offeredVideo[call] = nil
        $0.videoFirst.remove(call)
        return ($0.routes.removeValue(forKey: call), $0.legs.removeValue(forKey: call))
      }
      leg?.close()
      if let route { _ = sipgw_hangup(route.agent.raw, route.call, code, reason) }
    case .hold(let call, let on):
      guard let route = route(call), let leg = leg(call) else { return }
      leg.setHolding(on)
      let (video, videoFirst) = state.withLock {
        ($0.videoLegs[call], $0.videoFirst.contains(call))
      }
      video?.setHolding(on)
      let sdp = offer(leg, video, hold: on, videoFirst: videoFirst)
      check(call, sipgw_modify(route.agent.raw, route.call, sdp))
    case .dtmf(let call, let digits, let info):
      guard let route = route(call), let leg = leg(call) else { return }
      if info || !leg.sendDTMF(digits) {
        // RFC 4733 not negotiated: SIP INFO, one request per digit.
        for digit in digits {
          _ = sipgw_info(
            route.agent.raw, route.call, "application/dtmf-relay",
            "Signal=\(digit)\r\nDuration=100\r\n")
        }
      }
    case .refer(let call, let uri):
      guard let route = route(call) else { return }
      check(call, sipgw_refer(route.agent.raw, route.call, uri))
    case .bridge(let call, let mediaSessionId):
      guard let leg = leg(call), let port = callMedia.withLock({ $0.value }) else { return }
      if !leg.bridge(to: port, mediaSessionId: mediaSessionId) {
        deliver(.mediaFailed(call: call, reason: "the WebRTC leg has no Opus to bridge"))
      }
      // Video is bridged when both sides took VP8; an audio call goes on without.
      _ = state.withLock { $0.videoLegs[call] }?.bridge(to: port, mediaSessionId: mediaSessionId)
    }
  }

  /// Where calls' WebRTC legs are (the server's relay engine); without one calls carry no
  /// media between the legs.
  func attach(callMedia port: (any CallMediaPort)?) {
    callMedia.withLock { $0 = WeakPort(value: port) }
  }

  private func register(_ session: UInt64, _ account: SIPAccount, _ expires: UInt32) {
    let agent = SIPAgentContext(session: session)
    do {
      _ = try Self.open(agent, configuration, port: 0, user: account.login)
    } catch {
      deliver(.registration(session: session, code: 0, reason: "\(error)"))
      return
    }
    agent.gateway.withLock { $0.value = self }
    let old = state.withLock { state -> SIPAgentContext? in
      defer { state.sessionAgents[session] = agent }
      return state.sessionAgents[session]
    }
    if let old { Self.destroy(old) }
    _ = sipgw_set_auth(agent.raw, account.authenticationName, account.password)
    let err = sipgw_register(
      agent.raw, account.registrar, account.addressOfRecord, account.visibleName, expires)
    if err != 0 {
      deliver(.registration(session: session, code: 0, reason: String(cString: strerror(err))))
    }
  }

  private func invite(
    _ call: UInt32, session: UInt64, uri: String, account: SIPAccount, name: String,
    _ headers: [String: String], video: Bool
  ) {
    let leg: SIPRTPLeg
    do {
      leg = try SIPRTPLeg(address: configuration.bindAddress, queue: queue)
    } catch {
      deliver(.closed(call: call, code: 0, reason: "\(error)"))
      return
    }
    let agent = state.withLock { $0.sessionAgents[session] } ?? main
    if agent === main, !account.password.isEmpty {
      _ = sipgw_set_auth(agent.raw, account.authenticationName, account.password)
    }
    let videoLeg = video ? try? SIPVideoLeg(address: configuration.bindAddress, queue: queue) : nil
    state.withLock {
      $0.routes[call] = CallRoute(agent: agent, call: call)
      $0.legs[call] = leg
      $0.videoLegs[call] = videoLeg
    }
    forwardDigits(of: leg, call: call)
    let from =
      account.login.isEmpty
      ? "sip:\(configuration.user)@\(configuration.bindAddress)" : account.addressOfRecord
    let extra = headers.keys.sorted().map { "\($0): \(headers[$0] ?? "")\r\n" }.joined()
    let err = sipgw_invite(
      agent.raw, call, uri, from, name, offer(leg, videoLeg, hold: false),
      extra.isEmpty ? nil : extra)
    if err != 0 {
      state.withLock {
        $0.routes[call] = nil
        $0.legs[call] = nil
        $0.videoLegs[call] = nil
      }
      leg.close()
      videoLeg?.close()
      deliver(.closed(call: call, code: 0, reason: String(cString: strerror(err))))
    }
  }

  /// The far end's RFC 4733 digits on `leg` become `dtmf` events of `call`.
  private func forwardDigits(of leg: SIPRTPLeg, call: UInt32) {
    let deliver = deliver
    leg.reception.digits.withLock {
      $0 = { pressed in deliver(.dtmf(call: call, digit: String(pressed.digit), info: false)) }
    }
  }

  /// The gateway's offer: the audio section, and the video one for a video call.
  private func offer(
    _ leg: SIPRTPLeg, _ video: SIPVideoLeg?, hold: Bool, videoFirst: Bool = false
  ) -> String {
    let audio = leg.localSDP(answering: nil, hold: hold)
    guard let video else { return audio }
    let remote = video.remoteDescription
    return SIPVideoDescription.sessionDescription(
      audio: audio, video: video.localSection(answering: remote, hold: hold),
      videoFirst: videoFirst)
  }

  private func route(_ call: UInt32) -> CallRoute? { state.withLock { $0.routes[call] } }
  private func leg(_ call: UInt32) -> SIPRTPLeg? { state.withLock { $0.legs[call] } }

  private func check(_ call: UInt32, _ err: Int32) {
    guard err != 0 else { return }
    deliver(.closed(call: call, code: 0, reason: String(cString: strerror(err))))
  }

  // MARK: libre events (libre's thread)

  fileprivate func handle(_ event: RawEvent, from agent: SIPAgentContext) {
    switch event.kind {
    case Int32(SIPGW_EVENT_REGISTER.rawValue):
      guard let session = agent.session else { return }
      deliver(.registration(session: session, code: Int(event.code), reason: event.reason))
    case Int32(SIPGW_EVENT_PROGRESS.rawValue):
      guard let call = gatewayCall(agent, event.call) else { return }
      deliver(.progress(call: call, code: Int(event.code), reason: event.reason))
    case Int32(SIPGW_EVENT_ESTABLISHED.rawValue):
      guard let call = gatewayCall(agent, event.call), let leg = leg(call) else { return }
      if let sdp = event.sdp {
        // The outgoing call's answer: the leg learns where to send.
        do {
          let remote = try SIPMediaDescription.parse(sdp)
          leg.setRemote(remote)
          if let video = SIPVideoDescription.parse(sdp) {
            state.withLock { $0.videoLegs[call] }?.setRemote(video)
          }
        } catch {
          deliver(.mediaFailed(call: call, reason: "\(error)"))
          return
        }
      }
      deliver(.established(call: call))
    case Int32(SIPGW_EVENT_MODIFIED.rawValue):
      guard let call = gatewayCall(agent, event.call), let leg = leg(call), let sdp = event.sdp,
        let remote = try? SIPMediaDescription.parse(sdp)
      else { return }
      leg.setRemote(remote)
      if let video = SIPVideoDescription.parse(sdp) {
        state.withLock { $0.videoLegs[call] }?.setRemote(video)
      }
    case Int32(SIPGW_EVENT_CLOSED.rawValue):
      guard let call = gatewayCall(agent, event.call) else { return }
      let leg = state.withLock { state -> SIPRTPLeg? in
        state.routes[call] = nil
        state.offeredVideo[call] = nil
        state.videoFirst.remove(call)
        state.videoLegs.removeValue(forKey: call)?.close()
        return state.legs.removeValue(forKey: call)
      }
      leg?.close()
      deliver(.closed(call: call, code: Int(event.code), reason: event.reason))
    case Int32(SIPGW_EVENT_INCOMING.rawValue):
      incoming(event, agent)
    case Int32(SIPGW_EVENT_INFO.rawValue):
      // One INFO per digit (application/dtmf-relay); other INFO bodies are not for the client.
      guard let call = gatewayCall(agent, event.call),
        let digit = SIPInfoDTMF.digit(inBody: event.sdp ?? "")
      else { return }
      deliver(.dtmf(call: call, digit: String(digit), info: true))
    case Int32(SIPGW_EVENT_REFER.rawValue):
      guard let call = gatewayCall(agent, event.call) else { return }
      deliver(.transfer(call: call, code: Int(event.code)))
    default:
      break
    }
  }

  private func incoming(_ event: RawEvent, _ agent: SIPAgentContext) {
    let remote: SIPMediaDescription
    do {
      remote = try SIPMediaDescription.parse(event.sdp ?? "")
    } catch {
      // No usable offer: refuse it here (RFC 3261 §13.3.1.1: 488), the client never hears.
      queue.async { _ = sipgw_hangup(agent.raw, event.call, 488, "Not Acceptable Here") }
      return
    }
    let leg: SIPRTPLeg
    do {
      leg = try SIPRTPLeg(address: configuration.bindAddress, queue: queue)
    } catch {
      queue.async { _ = sipgw_hangup(agent.raw, event.call, 500, "Server Internal Error") }
      return
    }
    leg.setRemote(remote)
    let sdp = event.sdp ?? ""
    // A VP8 offer gets its video leg now; whether it is taken waits for the client's answer.
    var videoLeg: SIPVideoLeg?
    if let video = SIPVideoDescription.parse(sdp) {
      videoLeg = try? SIPVideoLeg(address: configuration.bindAddress, queue: queue)
      videoLeg?.setRemote(video)
    }
    let offeredVideo = SIPVideoDescription.offeredFormats(sdp)
    let call = state.withLock { state -> UInt32 in
      let call = state.nextIncoming
      state.nextIncoming = call == UInt32.max ? 0x8000_0000 : call + 1
      state.routes[call] = CallRoute(agent: agent, call: event.call)
      state.legs[call] = leg
      state.videoLegs[call] = videoLeg
      state.offeredVideo[call] = offeredVideo
      if SIPVideoDescription.videoFirst(sdp) { state.videoFirst.insert(call) }
      return call
    }
    forwardDigits(of: leg, call: call)
    deliver(
      .incoming(
        call: call, user: WCSServerCore.userPart(event.to ?? ""), from: event.from ?? "",
        displayName: event.fromName ?? "", video: videoLeg != nil))
  }

  /// The gateway's number of libre's call `call` on `agent`.
  private func gatewayCall(_ agent: SIPAgentContext, _ call: UInt32) -> UInt32? {
    if call < 0x8000_0000 { return state.withLock { $0.routes[call] != nil } ? call : nil }
    return state.withLock { state in
      state.routes.first { $0.value.agent === agent && $0.value.call == call }?.key
    }
  }

  // MARK: libre user agents

  private static func open(
    _ agent: SIPAgentContext, _ configuration: SIPGatewayConfiguration, port: UInt16, user: String
  ) throws(SIPGatewayError) -> UInt16 {
    var pointer: OpaquePointer?
    var bound: UInt16 = 0
    let context = Unmanaged.passUnretained(agent).toOpaque()
    let err = sipgw_ua_create(
      &pointer, configuration.bindAddress, port, user, sipEventHandler, context, &bound)
    guard err == 0, let pointer else {
      throw .sip(err, String(cString: strerror(err)))
    }
    // The context must outlive the user agent: it is released in `destroy`.
    _ = Unmanaged.passRetained(agent)
    agent.pointer.withLock { $0 = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(pointer))) }
    return bound
  }

  private static func destroy(_ agent: SIPAgentContext) {
    let bits = agent.pointer.withLock { p -> UInt in
      defer { p = 0 }
      return p
    }
    guard let pointer = OpaquePointer(bitPattern: bits) else { return }
    sipgw_ua_destroy(pointer)
    Unmanaged.passUnretained(agent).release()
  }
}

/// An event copied out of libre's buffers.
private struct RawEvent: Sendable {
  let kind: Int32
  let call: UInt32
  let code: UInt16
  let reason: String
  let sdp: String?
  let from: String?
  let fromName: String?
  let to: String?
}

private let sipEventHandler: sipgw_event_h = { event, arg in
  guard let event, let arg else { return }
  let agent = Unmanaged<SIPAgentContext>.fromOpaque(arg).takeUnretainedValue()
  let e = event.pointee
  let raw = RawEvent(
    kind: Int32(e.kind), call: e.call, code: e.code,
    reason: e.reason.map { String(cString: $0) } ?? "", sdp: e.sdp.map { String(cString: $0) },
    from: e.from.map { String(cString: $0) }, fromName: e.from_name.map { String(cString: $0) },
    to: e.to.map { String(cString: $0) })
  agent.gateway.withLock { $0.value }?.handle(raw, from: agent)
}

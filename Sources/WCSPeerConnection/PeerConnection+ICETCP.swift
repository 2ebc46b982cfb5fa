import Glibc
import WCSEventLoop
import WCSProtocols

/// One ICE-TCP connection (RFC 6544): STUN, DTLS and SRTP datagrams on it RFC 4571 framed,
/// each frame at most `ICEStreamFramer.maximumFrameLength` bytes.
final class PeerConnectionICETCPStream {
  let socket: EventLoopTCPSocket
  /// The peer: the pair's remote address.
  let remote: ICETransportAddress
  var framer = ICEStreamFramer(framing: .rfc4571)

  init(socket: EventLoopTCPSocket, remote: ICETransportAddress) {
    self.socket = socket
    self.remote = remote
  }

  /// Writes one datagram after its length; `false` when the connection is gone or its queue
  /// cannot take the whole frame (nothing is written then, so the framing holds).
  func send(_ datagram: some Collection<UInt8>) -> Bool {
    let count = datagram.count
    guard count > 0, count <= 65535,
      socket.queuedBytes + 2 + count <= socket.maximumQueuedBytes
    else { return false }
    do {
      try socket.write([UInt8(count >> 8), UInt8(count & 0xFF)])
      try socket.write(datagram)
      return true
    } catch {
      return false
    }
  }
}

/// The ICE-TCP side of a connection (`PeerConnectionConfiguration.iceCandidateProtocol`
/// `.tcp`): the listeners of passive candidates and the connections by agent socket ID.
final class PeerConnectionICETCP {
  /// Listeners of passive candidates; a listener's index is its base socket ID.
  var listeners: [EventLoopTCPListener] = []
  var streams: [ICESocketID: PeerConnectionICETCPStream] = [:]
  /// Connections accepted so far; their socket IDs count up from
  /// `firstAcceptedConnection`, apart from those the agent makes for active pairs.
  var accepted = 0

  static let firstAcceptedConnection = 2 * ICEAgent.firstTCPConnectionSocket
  /// Most connections a passive side accepts over its life: a peer makes one per pair, so
  /// more is a flood, refused (closed at once).
  static let maximumAccepted = 16
  /// How long an active connection may take to come up.
  static let connectTimeout = Duration.seconds(10)

  func close() {
    for listener in listeners { listener.close() }
    for stream in streams.values { stream.socket.close() }
    listeners = []
    streams = [:]
  }
}

extension PeerConnection {
  /// TCP host candidates instead of UDP sockets: an active one per host address for a full
  /// agent (connections opened as the agent checks pairs), a listener and passive candidate
  /// per host address for a lite one.
  func startICETCP(agent: ICEAgent, lite: Bool, now: MediaInstant) throws(PeerConnectionError) {
    let addresses = hostIPs()
    var lastError = EventLoopError.bindFailed(
      address: ICETransportAddress(ip: .loopbackV4, port: 0), errno: EADDRNOTAVAIL)
    for (index, ip) in addresses.enumerated() {
      guard lite else {
        // After the UDP sockets' IDs: those are the relays' bases (TURN over TCP/TLS).
        agent.addLocalTCPCandidate(
          sockets.count + index, address: ICETransportAddress(ip: ip, port: 0), tcpType: .active,
          now: now)
        continue
      }
      let base = iceTCP.listeners.count
      do {
        let listener = try EventLoopTCPListener(
          loop: loop, bindingTo: ICETransportAddress(ip: ip, port: 0)
        ) { [reference = WeakReference(self)] socket in
          reference.object?.acceptICETCP(socket, base: base)
        }
        iceTCP.listeners.append(listener)
        agent.addLocalTCPCandidate(
          base, address: listener.localAddress, tcpType: .passive, now: now)
      } catch {
        var code = EADDRNOTAVAIL
        if case .bindFailed(_, let failed) = error { code = failed }
        lastError = .bindFailed(address: ICETransportAddress(ip: ip, port: 0), errno: code)
      }
    }
    if lite && iceTCP.listeners.isEmpty { throw .socket(lastError) }
    if addresses.isEmpty { throw .socket(lastError) }
  }

  private func acceptICETCP(_ socket: EventLoopTCPSocket, base: ICESocketID) {
    guard !state.isFinal, let agent, iceTCP.accepted < PeerConnectionICETCP.maximumAccepted
    else {
      socket.close()
      return
    }
    let id = PeerConnectionICETCP.firstAcceptedConnection + iceTCP.accepted
    iceTCP.accepted += 1
    guard agent.addTCPConnection(id, base: base, remote: socket.remoteAddress) else {
      socket.close()
      return
    }
    attachICETCP(socket, id: id)
  }

  private func attachICETCP(_ socket: EventLoopTCPSocket, id: ICESocketID) {
    let stream = PeerConnectionICETCPStream(socket: socket, remote: socket.remoteAddress)
    iceTCP.streams[id] = stream
    socket.setEventHandler { [reference = WeakReference(self)] event in
      reference.object?.iceTCPEvent(event, id: id)
    }
  }

  /// Sends a datagram on ICE-TCP connection `socket`; the first one on a connection the agent
  /// made for an active pair opens it to `destination` (queued until it is up). `false` when
  /// the connection is unknown, gone or full.
  @discardableResult
  func sendICETCP(
    _ bytes: some Collection<UInt8>, socket id: ICESocketID, to destination: ICETransportAddress
  ) -> Bool {
    if let stream = iceTCP.streams[id] {
      return stream.remote == destination && stream.send(bytes)
    }
    guard id < PeerConnectionICETCP.firstAcceptedConnection, !state.isFinal else { return false }
    do {
      let socket = try EventLoopTCPSocket.connect(
        loop: loop, to: destination, timeout: PeerConnectionICETCP.connectTimeout
      ) { [reference = WeakReference(self)] event in
        reference.object?.iceTCPEvent(event, id: id)
      }
      let stream = PeerConnectionICETCPStream(socket: socket, remote: destination)
      iceTCP.streams[id] = stream
      return stream.send(bytes)
    } catch {
      // Reported after this send returns, outside the agent's output loop.
      _ = loop.schedule(after: .zero) { [reference = WeakReference(self)] in
        reference.object?.iceTCPClosed(id)
      }
      return false
    }
  }

  private func iceTCPEvent(_ event: EventLoopTCPEvent, id: ICESocketID) {
    guard !state.isFinal, let stream = iceTCP.streams[id] else { return }
    switch event {
    case .connected:
      break
    case .received(let bytes):
      var frames: [[UInt8]]
      do {
        frames = try stream.framer.receive(bytes)
      } catch {
        // A stream cannot resynchronise after a bad length (zero, past the bound).
        stream.socket.close()
        iceTCPClosed(id)
        return
      }
      for index in frames.indices {
        // SRTP is unprotected in place, as in the loop's receive buffer.
        frames[index].withUnsafeMutableBytes {
          receive(UnsafeRawBufferPointer($0), from: stream.remote, socket: id)
        }
        if state.isFinal { return }
      }
    case .closed:
      iceTCPClosed(id)
    }
  }

  private func iceTCPClosed(_ id: ICESocketID) {
    iceTCP.streams[id] = nil
    guard !state.isFinal, let agent else { return }
    agent.tcpConnectionClosed(id, now: loop.mediaNow())
    serviceICE()
  }
}

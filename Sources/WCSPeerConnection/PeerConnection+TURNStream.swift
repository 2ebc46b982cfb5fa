import WCSEventLoop
import WCSProtocols

/// The TCP connection from one driver socket's relay to a TURN server reached over TCP or TLS
/// (`ICETURNTransport.tcp`/`.tls`, RFC 8656 §3.1): the TURN client's datagrams for that server
/// go on it, framed by their own headers (inside TLS records for `.tls`), and the frames read
/// from it go back to the ICE agent as datagrams from the server on that driver socket.
final class PeerConnectionTURNStream {
  let server: ICETURNServer
  /// The driver socket whose relay this connection carries.
  let baseSocket: ICESocketID
  let socket: EventLoopTCPSocket
  /// The TLS session over `socket` for `.tls`; `nil` for plain TCP.
  let tls: TLSClientStream?
  var framer = ICEStreamFramer(framing: .turn)
  /// Frames refused because the write queue was full (the server reads too slowly) or the
  /// TLS session had ended.
  var writeFailures = 0

  init(
    server: ICETURNServer, baseSocket: ICESocketID, socket: EventLoopTCPSocket,
    tls: TLSClientStream?
  ) {
    self.server = server
    self.baseSocket = baseSocket
    self.socket = socket
    self.tls = tls
  }

  /// The most a TLS record adds to its plaintext, bytes (5 header, 16 tag, up to 8 explicit
  /// nonce or content type, with room to spare).
  static let tlsRecordOverhead = 64

  /// Writes one TURN message (STUN, or ChannelData padded to 4); `false` when the connection
  /// is gone or its queue full.
  func send(_ datagram: [UInt8]) -> Bool {
    do {
      let framed = try ICEStreamFramer.frame(datagram, framing: .turn)
      if let tls {
        // A record encrypted and then refused by a full queue would break the TLS stream
        // (its sequence numbers): the frame is refused before it is encrypted instead.
        guard
          socket.queuedBytes + framed.count + Self.tlsRecordOverhead <= socket.maximumQueuedBytes
        else {
          writeFailures += 1
          return false
        }
        try tls.write(framed)
        try socket.write(tls.takeOutput())
      } else {
        try socket.write(framed)
      }
      return true
    } catch {
      writeFailures += 1
      return false
    }
  }

  /// The TURN messages completed by `bytes` read from the connection (decrypted first for
  /// TLS); the TLS answers they call for are written.
  func receive(_ bytes: UnsafeRawBufferPointer) throws -> [[UInt8]] {
    guard let tls else { return try framer.receive(bytes) }
    let plaintext = try tls.receive(bytes)
    try socket.write(tls.takeOutput())
    return try framer.receive(plaintext)
  }

  /// Starts the TLS handshake once TCP is up.
  func connected() throws {
    guard let tls else { return }
    try tls.start()
    try socket.write(tls.takeOutput())
  }
}

extension PeerConnection {
  /// How long a TURN server has to accept the TCP connection.
  static let turnConnectTimeout = Duration.seconds(10)

  /// Connects to every TURN server reached over TCP, once per driver socket of its family (the
  /// agent makes one relay per such pair). Writes made before the connection is up are queued
  /// by the socket, so the agent's first Allocate waits there. A server that cannot be
  /// reached fails its relay at once (`ICEAgent.turnConnectionClosed`).
  func openTURNStreams() {
    for server in configuration.turnServers where server.transport.isStream {
      for (index, socket) in sockets.enumerated()
      where socket.localAddress.ip.isIPv6 == server.address.ip.isIPv6 {
        let reference = WeakReference(self)
        do {
          let tls =
            server.transport == .tls
            ? try TLSClientStream(
              serverName: server.serverName ?? "\(server.address.ip)",
              options: configuration.turnTLSOptions) : nil
          let tcp = try EventLoopTCPSocket.connect(
            loop: loop, to: server.address, timeout: Self.turnConnectTimeout
          ) { event in
            reference.object?.turnStreamEvent(event, server: server.address, socket: index)
          }
          turnStreams.append(
            PeerConnectionTURNStream(server: server, baseSocket: index, socket: tcp, tls: tls))
        } catch {
          // Reported once gathering started, when the agent has the relay.
          _ = loop.schedule(after: .zero) {
            reference.object?.turnStreamFailed("\(error)", server: server.address, socket: index)
          }
        }
      }
    }
  }

  /// The stream for datagrams from driver socket `socket` to `destination`, if that is a
  /// TURN server reached over TCP.
  func turnStream(socket: ICESocketID, to destination: ICETransportAddress)
    -> PeerConnectionTURNStream?
  {
    guard !turnStreams.isEmpty else { return nil }
    return turnStreams.first { $0.baseSocket == socket && $0.server.address == destination }
  }

  func closeTURNStreams() {
    for stream in turnStreams { stream.socket.close() }
  }

  private func turnStreamEvent(
    _ event: EventLoopTCPEvent, server: ICETransportAddress, socket: ICESocketID
  ) {
    guard !state.isFinal, let stream = turnStream(socket: socket, to: server) else { return }
    switch event {
    case .connected:
      do {
        try stream.connected()
      } catch {
        stream.socket.close()
        turnStreamFailed("\(error)", server: server, socket: socket)
      }
    case .received(let bytes):
      let frames: [[UInt8]]
      do {
        frames = try stream.receive(bytes)
      } catch {
        // A stream cannot resynchronise after bad framing or a broken TLS record.
        stream.socket.close()
        turnStreamFailed("\(error)", server: server, socket: socket)
        return
      }
      for frame in frames {
        frame.withUnsafeBytes { receive($0, from: server, socket: socket) }
      }
    case .closed(let error):
      turnStreamFailed(
        error.map { "\($0)" } ?? "closed by the server", server: server, socket: socket)
    }
  }

  private func turnStreamFailed(_ reason: String, server: ICETransportAddress, socket: ICESocketID)
  {
    guard !state.isFinal, let agent else { return }
    agent.turnConnectionClosed(socket: socket, server: server, reason: reason, now: loop.mediaNow())
    serviceICE()
  }
}

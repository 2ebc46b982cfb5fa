import WCSEventLoop
import WCSProtocols

/// The TCP connection from one driver socket's relay to a TURN server reached over TCP
/// (`ICETURNTransport.tcp`, RFC 8656 §3.1): the TURN client's datagrams for that server go on
/// it, framed by their own headers, and the frames read from it go back to the ICE agent as
/// datagrams from the server on that driver socket.
final class PeerConnectionTURNStream {
  let server: ICETURNServer
  /// The driver socket whose relay this connection carries.
  let baseSocket: ICESocketID
  let socket: EventLoopTCPSocket
  var framer = ICEStreamFramer(framing: .turn)
  /// Frames refused because the write queue was full (the server reads too slowly).
  var writeFailures = 0

  init(server: ICETURNServer, baseSocket: ICESocketID, socket: EventLoopTCPSocket) {
    self.server = server
    self.baseSocket = baseSocket
    self.socket = socket
  }

  /// Writes one TURN message (STUN, or ChannelData padded to 4); `false` when the connection
  /// is gone or its queue full.
  func send(_ datagram: [UInt8]) -> Bool {
    do {
      try socket.write(try ICEStreamFramer.frame(datagram, framing: .turn))
      return true
    } catch {
      writeFailures += 1
      return false
    }
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
    for server in configuration.turnServers where server.transport == .tcp {
      for (index, socket) in sockets.enumerated()
      where socket.localAddress.ip.isIPv6 == server.address.ip.isIPv6 {
        let reference = WeakReference(self)
        do {
          let tcp = try EventLoopTCPSocket.connect(
            loop: loop, to: server.address, timeout: Self.turnConnectTimeout
          ) { event in
            reference.object?.turnStreamEvent(event, server: server.address, socket: index)
          }
          turnStreams.append(
            PeerConnectionTURNStream(server: server, baseSocket: index, socket: tcp))
        } catch {
          // Reported once gathering started, when the agent has the relay.
          _ = loop.schedule(after: .zero) {
            reference.object?.turnStreamEvent(
              .closed(error), server: server.address, socket: index)
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
    guard !state.isFinal, let agent else { return }
    switch event {
    case .connected:
      break
    case .received(let bytes):
      guard let stream = turnStream(socket: socket, to: server) else { return }
      let frames: [[UInt8]]
      do throws(ICEStreamFramingError) {
        frames = try stream.framer.receive(bytes)
      } catch {
        stream.socket.close()
        agent.turnConnectionClosed(
          socket: socket, server: server, reason: "bad framing: \(error)", now: iceNow())
        serviceICE()
        return
      }
      for frame in frames {
        frame.withUnsafeBytes { receive($0, from: server, socket: socket) }
      }
    case .closed(let error):
      let reason = error.map { "\($0)" } ?? "closed by the server"
      agent.turnConnectionClosed(socket: socket, server: server, reason: reason, now: iceNow())
      serviceICE()
    }
  }
}

import WCSEventLoop
import WCSProtocols

extension PeerConnection {
  /// Sends one outgoing application datagram (a DTLS record flight or an SRTP/SRTCP packet)
  /// from the local candidate `socket` to `destination`. The only path application bytes take.
  ///
  /// - A driver socket (≥ 0, a host or server-reflexive local candidate): sent as is, straight
  ///   from `bytes` (no copy: the SRTP hot path protects in `sendBuffer` and sends from there).
  /// - A TURN relay's pseudo socket (< 0, a relayed local candidate, RFC 8656): wrapped by the
  ///   ICE agent in a Send indication to the TURN server, preceded by a CreatePermission
  ///   request when the peer's IP has none (`ICEAgent.relayDatagrams`); every datagram the
  ///   TURN client produced is sent, and the timer re-armed for a new transaction. Counted in
  ///   `PeerConnectionStats.relayedDatagramsSent` / `relayedSendFailures`.
  ///
  /// - An ICE-TCP connection (`ICEAgent.isTCPConnection`): RFC 4571 framed on it.
  ///
  /// - Throws: `.notConnected` when `socket` names no open socket or no usable relay (unknown,
  ///   or its allocation failed); `.socket` when the kernel refused the send. A full send
  ///   buffer drops the datagram silently (UDP).
  func sendApplicationDatagram(
    _ bytes: UnsafeRawBufferPointer, socket: ICESocketID, to destination: ICETransportAddress
  ) throws(PeerConnectionError) {
    if ICEAgent.isTCPConnection(socket) {
      guard sendICETCP(bytes, socket: socket, to: destination) else { throw .notConnected }
      return
    }
    if socket >= 0 {
      guard socket < sockets.count else { throw .notConnected }
      do {
        try sockets[socket].send(bytes, to: destination)
      } catch {
        throw .socket(error)
      }
      return
    }
    guard let agent else { throw .notConnected }
    let datagrams = agent.relayDatagrams(
      Array(bytes), relay: socket, to: destination, now: loop.mediaNow())
    guard !datagrams.isEmpty else {
      counters.relayedSendFailures += 1
      throw .notConnected
    }
    var failure: EventLoopError?
    var streamFailed = false
    for datagram in datagrams {
      if let stream = turnStream(socket: datagram.socket, to: datagram.destination) {
        if !stream.send(datagram.bytes) { streamFailed = true }
        continue
      }
      guard sockets.indices.contains(datagram.socket) else { continue }
      do {
        try sockets[datagram.socket].send(datagram.bytes, to: datagram.destination)
      } catch {
        failure = error
      }
    }
    // More than the Send indication: a permission request started a transaction.
    if datagrams.count > 1 { rearmTimer() }
    if let failure {
      counters.relayedSendFailures += 1
      throw .socket(failure)
    }
    if streamFailed {
      counters.relayedSendFailures += 1
      throw .notConnected
    }
    counters.relayedDatagramsSent += 1
  }
}

import CSIPGateway
import Dispatch
import Foundation
import Synchronization

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
    var sdpVersion = 1
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
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    guard fd >= 0 else { throw .socket(String(cString: strerror(errno))) }
    var sin = sockaddr_in()
    sin.sin_family = sa_family_t(AF_INET)
    sin.sin_port = 0
    guard inet_pton(AF_INET, address, &sin.sin_addr) == 1 else {
      Glibc.close(fd)
      throw .socket("not an IPv4 address: \(address)")
    }
    let bound = withUnsafePointer(to: &sin) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &sin) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard bound == 0, named == 0 else {
      let text = String(cString: strerror(errno))
      Glibc.close(fd)
      throw .socket(text)
    }
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    self.fd = fd
    self.address = address
    self.port = UInt16(bigEndian: sin.sin_port)
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
  func sendDTMF(_ digits: String) -> Bool {
    let plan = reception.state.withLock {
      state -> (packets: [TelephoneEventEncoder.Packet], to: SIPMediaDescription)? in
      guard let remote = state.remote, let pt = remote.telephoneEvent else { return nil }
      let result = TelephoneEventEncoder(payloadType: pt).packets(
        for: digits, ssrc: ssrc, sequence: state.sequence, timestamp: state.timestamp)
      state.sequence = result.nextSequence
      state.timestamp = result.nextTimestamp
      return (result.packets, remote)
    }
    guard let plan else { return false }
    let start = DispatchTime.now()
    for packet in plan.packets {
      queue.asyncAfter(deadline: start + .milliseconds(packet.atMillis)) { [weak self] in
        self?.send(packet.bytes, to: plan.to)
      }
    }
    return true
  }

  private func send(_ bytes: [UInt8], to remote: SIPMediaDescription) {
    var sin = sockaddr_in()
    sin.sin_family = sa_family_t(AF_INET)
    sin.sin_port = remote.port.bigEndian
    guard inet_pton(AF_INET, remote.address, &sin.sin_addr) == 1 else { return }
    let sent = bytes.withUnsafeBytes { buffer in
      withUnsafePointer(to: &sin) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          sendto(
            fd, buffer.baseAddress, buffer.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
    }
    if sent > 0 { reception.state.withLock { $0.dtmfPacketsSent += 1 } }
  }
}

/// What the leg's socket received, filled on the leg's queue.
final class Reception: Sendable {
  let state = Mutex(SIPRTPLeg.State())

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
    state.withLock { state in
      state.packetsReceived += 1
      state.bytesReceived += packet.count
      guard payloadType == 0 || payloadType == 8 else { return }
      let decode = payloadType == 0 ? G711.ulawToLinear : G711.alawToLinear
      state.samples.append(contentsOf: payload.map(decode))
      if state.samples.count > SIPRTPLeg.keptSamples {
        state.samples.removeFirst(state.samples.count - SIPRTPLeg.keptSamples)
      }
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

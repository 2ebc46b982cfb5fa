import CWebRTCCore
import Foundation
import XCTest

/// usrsctp through CWebRTCCore: an association between two in-process endpoints over AF_CONN,
/// driven by hand (no usrsctp threads, virtual time through `usrsctp_handle_timers`).
final class SCTPBindingTests: XCTestCase {
  /// WebRTC string and binary PPIDs (RFC 8831 §8).
  private let ppidString: UInt32 = 51
  private let ppidBinary: UInt32 = 53

  func testAssociationCarriesMessagesBothWays() throws {
    let client = try SCTPTestEndpoint(port: 5000)
    let server = try SCTPTestEndpoint(port: 5001)
    try server.listen()
    try client.connect(to: server)

    var accepted: OpaquePointer?
    for _ in 0..<50 where accepted == nil {
      pump(client, server)
      accepted = try server.accept()
    }
    guard let accepted, let clientSocket = client.socket else {
      XCTFail("the association was not established")
      return
    }
    // Abortive closes (SO_LINGER 0) while both endpoints are alive, so no packet for a freed
    // endpoint is left in usrsctp; the defer also keeps `client` and `server` alive until then.
    defer {
      usrsctp_close(accepted)
      client.close()
      server.close()
      pump(client, server)
    }
    // The COOKIE-ACK still has to reach the client.
    pump(client, server)

    let hello = Array("hello over SCTP".utf8)
    XCTAssertEqual(try send(hello, on: clientSocket, stream: 1, ppid: ppidString), hello.count)
    pump(client, server)
    let received = try receive(on: accepted)
    XCTAssertEqual(received.bytes, hello)
    XCTAssertEqual(received.stream, 1)
    XCTAssertEqual(received.ppid, ppidString)

    // Larger than one DATA chunk: usrsctp fragments and the receiver reassembles.
    let large = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
    XCTAssertEqual(try send(large, on: accepted, stream: 2, ppid: ppidBinary), large.count)
    var echoed: (bytes: [UInt8], stream: UInt16, ppid: UInt32) = ([], 0, 0)
    for _ in 0..<50 where echoed.bytes.count < large.count {
      pump(client, server)
      let part = try receive(on: clientSocket)
      echoed.bytes += part.bytes
      if !part.bytes.isEmpty { echoed.stream = part.stream; echoed.ppid = part.ppid }
    }
    XCTAssertEqual(echoed.bytes.count, large.count)
    XCTAssertEqual(echoed.bytes, large)
    XCTAssertEqual(echoed.stream, 2)
    XCTAssertEqual(echoed.ppid, ppidBinary)
  }

  // MARK: Helpers

  /// Hands every queued packet to the other side and advances usrsctp's timers by 10 ms,
  /// until both outboxes stay empty.
  private func pump(_ client: SCTPTestEndpoint, _ server: SCTPTestEndpoint) {
    for _ in 0..<20 {
      let fromClient = client.outbox
      let fromServer = server.outbox
      client.outbox = []
      server.outbox = []
      for packet in fromClient { usrsctp_conninput(server.address, packet, packet.count, 0) }
      for packet in fromServer { usrsctp_conninput(client.address, packet, packet.count, 0) }
      usrsctp_handle_timers(10)
      if client.outbox.isEmpty && server.outbox.isEmpty { return }
    }
  }

  private func send(_ bytes: [UInt8], on socket: OpaquePointer, stream: UInt16, ppid: UInt32)
    throws -> Int
  {
    var info = sctp_sndinfo()
    info.snd_sid = stream
    // usrsctp passes the PPID through as is; on the wire it is network byte order.
    info.snd_ppid = ppid.bigEndian
    let sent = usrsctp_sendv(
      socket, bytes, bytes.count, nil, 0, &info, socklen_t(MemoryLayout<sctp_sndinfo>.size),
      UInt32(SCTP_SENDV_SNDINFO), 0)
    guard sent >= 0 else { throw BindingTestError.cCall("usrsctp_sendv", code: Int(errno)) }
    return sent
  }

  /// Reads what is queued on `socket` (possibly part of a message); empty when nothing is.
  private func receive(on socket: OpaquePointer) throws -> (
    bytes: [UInt8], stream: UInt16, ppid: UInt32
  ) {
    var bytes: [UInt8] = []
    var stream: UInt16 = 0
    var ppid: UInt32 = 0
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
      var from = sockaddr_conn()
      var fromLength = socklen_t(MemoryLayout<sockaddr_conn>.size)
      var info = sctp_rcvinfo()
      var infoLength = socklen_t(MemoryLayout<sctp_rcvinfo>.size)
      var infoType: UInt32 = 0
      var flags: Int32 = 0
      let count = withUnsafeMutablePointer(to: &from) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { fromPointer in
          usrsctp_recvv(
            socket, &buffer, buffer.count, fromPointer, &fromLength, &info, &infoLength,
            &infoType, &flags)
        }
      }
      if count < 0 {
        guard errno == EWOULDBLOCK || errno == EAGAIN else {
          throw BindingTestError.cCall("usrsctp_recvv", code: Int(errno))
        }
        return (bytes, stream, ppid)
      }
      guard count > 0 else { return (bytes, stream, ppid) }
      guard flags & MSG_NOTIFICATION == 0 else { continue }
      bytes += buffer.prefix(count)
      if infoType == UInt32(SCTP_RECVV_RCVINFO) {
        stream = info.rcv_sid
        ppid = UInt32(bigEndian: info.rcv_ppid)
      }
    }
  }
}

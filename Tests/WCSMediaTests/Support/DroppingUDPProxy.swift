import Foundation

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSProtocols

/// A UDP forwarder on loopback between a client and one server address that drops chosen SRTP
/// packets on their way to the server, before the server's SRTP sees them: a lost packet as on
/// a real link, so a plain resend of it is the first copy the server's replay window gets.
///
/// The client talks to `address` (put it in the server's candidates for the client); the
/// server sees every datagram from the proxy's second socket, as a peer-reflexive address
/// (ICE-lite answers it). The RTP header is in clear in SRTP (RFC 3711 §3.1), so `drop` gets
/// the payload type and sequence number. Loop only.
final class DroppingUDPProxy {
  /// The sockets and the client's address, shared with the sockets' handlers.
  private final class Link {
    var client: ICETransportAddress?
    var clientSide: EventLoopUDPSocket?
    var serverSide: EventLoopUDPSocket?
  }

  private let link: Link
  /// The address the client sends to.
  let address: ICETransportAddress

  /// Forwards between the client and `server`; `drop(payloadType, sequenceNumber)` is asked
  /// for each client SRTP packet (true: it is lost). Call on `loop`.
  init(
    loop: EventLoop, server: ICETransportAddress,
    drop: @escaping (_ payloadType: UInt8, _ sequenceNumber: UInt16) -> Bool
  ) throws {
    let loopback = ICETransportAddress(ip: .loopbackV4, port: 0)
    let link = Link()
    let fromClient = try EventLoopUDPSocket(loop: loop, bindingTo: loopback) { bytes, source in
      link.client = source
      // SRTP: version 2 and not RTCP (payload types 64...95 with the marker, RFC 5761 §4).
      if bytes.count >= 12, bytes[0] >> 6 == 2, !(192...223).contains(bytes[1]),
        drop(bytes[1] & 0x7F, UInt16(bytes[2]) << 8 | UInt16(bytes[3]))
      {
        return
      }
      _ = try? link.serverSide?.send(bytes, to: server)
    }
    let toServer = try EventLoopUDPSocket(loop: loop, bindingTo: loopback) { bytes, _ in
      guard let client = link.client else { return }
      _ = try? link.clientSide?.send(bytes, to: client)
    }
    link.clientSide = fromClient
    link.serverSide = toServer
    self.link = link
    address = fromClient.localAddress
  }

  /// `sdp` with every candidate's address and port replaced by the proxy's.
  func rewritingCandidates(of sdp: String) throws -> String {
    var description = try SDPParser.parse(sdp).description
    for index in description.media.indices {
      description.media[index].attributes = description.media[index].attributes.map {
        guard case .candidate(var candidate) = $0 else { return $0 }
        candidate.address = "\(address.ip)"
        candidate.port = Int(address.port)
        return .candidate(candidate)
      }
    }
    return SDPWriter.write(description)
  }

  /// Closes both sockets (and so frees the handlers that hold `link`).
  func close() {
    link.clientSide?.close()
    link.serverSide?.close()
    link.clientSide = nil
    link.serverSide = nil
  }
}

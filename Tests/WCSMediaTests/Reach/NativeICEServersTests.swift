import XCTest

@testable import WCSEngine
@testable import WCSMedia
@testable import WCSMediaSeam
@testable import WCSPeerConnection
@testable import WCSProtocols

/// A request's ICE servers become the PeerConnection's STUN and TURN entries: names resolved,
/// transports carried, and what the UDP-only TURN client cannot use left out with a note.
final class NativeICEServersTests: XCTestCase {
  private func request(
    _ servers: [MediaICEServer]?, policy: MediaICETransportPolicy? = nil
  ) -> MediaConnectionRequest {
    var request = MediaConnectionRequest(direction: .publish, audio: .init(), video: nil)
    request.iceServers = servers
    request.iceTransportPolicy = policy
    return request
  }

  func testServersReplaceTheEnginesWithEachTURNTransportKept() {
    var base = PeerConnectionConfiguration.loopback
    base.stunServers = [ICETransportAddress(ip: .v4(0x0A00_0001), port: 3478)]
    let servers = [
      MediaICEServer(scheme: .stun, host: "127.0.0.1", port: 19302, transport: .udp),
      MediaICEServer(
        scheme: .turn, host: "turn.test", port: 3478, transport: .udp, username: "u",
        credential: "p"),
      MediaICEServer(
        scheme: .turn, host: "127.0.0.1", port: 80, transport: .tcp, username: "u",
        credential: "p"),
      MediaICEServer(
        scheme: .turns, host: "turn.test", port: 443, transport: .tls, username: "u",
        credential: "p"),
      MediaICEServer(scheme: .stun, host: "nowhere.invalid", port: 3478, transport: .udp),
    ]
    let lookup: (String) -> [ICEIPAddress] = { host in
      switch host {
      case "turn.test": return [.v4(0xC000_0207)]
      case "nowhere.invalid": return []
      default: return ICEIPAddress(host).map { [$0] } ?? []
      }
    }
    let resolution = NativeICEServers.resolve(
      request(servers, policy: .relay), base: base, lookup: lookup)
    XCTAssertEqual(
      resolution.configuration.stunServers, [ICETransportAddress(ip: .loopbackV4, port: 19302)])
    XCTAssertEqual(
      resolution.configuration.turnServers,
      [
        ICETURNServer(
          address: ICETransportAddress(ip: .v4(0xC000_0207), port: 3478), username: "u",
          password: "p", transport: .udp, serverName: "turn.test"),
        ICETURNServer(
          address: ICETransportAddress(ip: .loopbackV4, port: 80), username: "u",
          password: "p", transport: .tcp, serverName: nil),
        ICETURNServer(
          address: ICETransportAddress(ip: .v4(0xC000_0207), port: 443), username: "u",
          password: "p", transport: .tls, serverName: "turn.test"),
      ])
    XCTAssertEqual(resolution.configuration.iceTransportPolicy, .relay)
    XCTAssertEqual(
      resolution.notes,
      ["stun:nowhere.invalid:3478: host 'nowhere.invalid' did not resolve"])
  }

  func testWithoutRequestServersTheEngineConfigurationStays() {
    var base = PeerConnectionConfiguration.loopback
    base.stunServers = [ICETransportAddress(ip: .v4(0x0A00_0001), port: 3478)]
    let resolution = NativeICEServers.resolve(request(nil), base: base)
    XCTAssertEqual(resolution.configuration.stunServers, base.stunServers)
    XCTAssertEqual(resolution.configuration.iceTransportPolicy, .all)
    XCTAssertEqual(resolution.notes, [])
  }

  func testRelayPolicyWithoutUsableTURNIsANote() {
    let servers = [
      MediaICEServer(
        scheme: .turn, host: "nowhere.invalid", port: 80, transport: .tcp, username: "u",
        credential: "p")
    ]
    let resolution = NativeICEServers.resolve(
      request(servers, policy: .relay), base: .loopback, lookup: { _ in [] })
    XCTAssertEqual(resolution.configuration.turnServers, [])
    XCTAssertEqual(
      resolution.notes.last,
      "iceTransportPolicy relay without a usable TURN server: nothing to gather")
  }

  func testLocalhostResolvesThroughTheSystemResolver() {
    XCTAssertEqual(NativeICEServers.resolveHost("127.0.0.1"), [.loopbackV4])
    XCTAssertTrue(NativeICEServers.resolveHost("localhost").contains { $0.isLoopback })
  }

  func testTCPTransportKeepsTURNOverTCPAndTLSAndLeavesUDPServersOut() {
    let servers = [(3478, .udp), (3479, .tcp), (5349, .tls)].map {
      (port: UInt16, transport: MediaICEServer.Transport) in
      MediaICEServer(
        scheme: transport == .tls ? .turns : .turn, host: "127.0.0.1", port: port,
        transport: transport, username: "u", credential: "p")
    }
    var tcp = request(
      [MediaICEServer(scheme: .stun, host: "127.0.0.1", port: 3478, transport: .udp)] + servers)
    tcp.transport = .tcp
    let resolution = NativeICEServers.resolve(tcp, base: .loopback)
    XCTAssertEqual(resolution.configuration.iceCandidateProtocol, .tcp)
    XCTAssertEqual(resolution.configuration.stunServers, [])
    XCTAssertEqual(
      resolution.configuration.turnServers.map { "\($0.address.port) \($0.transport)" },
      ["3479 tcp", "5349 tls"])
    XCTAssertEqual(
      resolution.notes, ["transport TCP: STUN and TURN over UDP unused (TURN over TCP/TLS kept)"])

    var relayWithoutStreams = request(
      [MediaICEServer(scheme: .stun, host: "127.0.0.1", port: 3478, transport: .udp)],
      policy: .relay)
    relayWithoutStreams.transport = .tcp
    XCTAssertEqual(
      NativeICEServers.resolve(relayWithoutStreams, base: .loopback).notes.last,
      "iceTransportPolicy relay with transport TCP needs TURN over TCP or TLS")
    let udp = NativeICEServers.resolve(request(nil), base: .loopback)
    XCTAssertEqual(udp.configuration.iceCandidateProtocol, .udp)
    XCTAssertEqual(udp.notes, [])
  }

  func testCandidateProtocolIsTheCandidatesTransport() {
    let tcp = ICECandidate(
      foundation: "t1", priority: 1, address: ICETransportAddress(ip: .loopbackV4, port: 9),
      type: .host, transport: .tcp, tcpType: .active)
    XCTAssertEqual(NativeICEServers.candidateProtocol(tcp), "tcp")
    let udp = ICECandidate(
      foundation: "1", priority: 1, address: ICETransportAddress(ip: .loopbackV4, port: 5000),
      type: .host)
    XCTAssertEqual(NativeICEServers.candidateProtocol(udp), "udp")
  }
}

import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSPeerConnection
@testable import WCSProtocols

extension PeerConnectionConfiguration {
  /// `.loopback` gathering only a relayed candidate from `coturn` (ICE transport policy relay).
  static func relayOnly(through coturn: CoturnTestServer) -> PeerConnectionConfiguration {
    var configuration = PeerConnectionConfiguration.loopback
    configuration.turnServers = [coturn.server]
    configuration.iceTransportPolicy = .relay
    return configuration
  }
}

/// A relay-only `PeerConnection` through coturn on 127.0.0.1, answering a far side driven by
/// hand on the test thread: a plain socket with full ICE and a DTLS client, which validates the
/// relayed candidate but never nominates, so DTLS runs on the connection's fallback destination.
final class RelayedFarSide {
  /// What the far side saw while it ran ICE and DTLS.
  struct Handshake {
    /// Where every datagram the far side received came from.
    var sources: [ICETransportAddress] = []
    /// Where every DTLS record the far side received came from.
    var dtlsSources: [ICETransportAddress] = []
    /// Binding requests that reached the far side (through the relay).
    var checksFromRelay = 0
    /// Whether the far side's own check was answered with valid integrity.
    var validated = false
    /// The far side's SRTP keys, once its DTLS client connected.
    var keys: (profile: DTLSSRTPProfile, material: [UInt8])?
    /// The far side's DTLS failures, in order.
    var dtlsFailures: [DTLSError] = []
  }

  let coturn: CoturnTestServer
  let loop: EventLoop
  let connection: PeerConnection
  let recorder = PeerRecorder()
  let peer: UDPSocket
  let peerCredentials: ICECredentials
  let peerCertificate: DTLSCertificate

  init(label: String, peerCredentials: ICECredentials) throws {
    peer = try UDPSocket(bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0))
    peerCertificate = try DTLSCertificate()
    self.peerCredentials = peerCredentials
    coturn = try CoturnTestServer()
    loop = EventLoop(label: label)
    connection = PeerConnection(configuration: .relayOnly(through: coturn), loop: loop)
    loop.submit { [recorder, connection] in recorder.attach(to: connection) }
  }

  /// Closes the connection, then the loop, then coturn.
  func shutdown() {
    loop.submit { connection.close() }
    loop.shutdown()
    coturn.stop()
  }

  /// The far side's offer: its one host candidate, DTLS client (`setup: .active`).
  var offer: PeerConnectionTransportDescription {
    PeerConnectionTransportDescription(
      iceCredentials: peerCredentials,
      candidates: [
        ICECandidate(
          foundation: "1", priority: ICECandidate.priority(type: .host, localPreference: 65535),
          address: peer.localAddress, type: .host)
      ],
      endOfCandidates: false, fingerprint: peerCertificate.fingerprint, setup: .active)
  }

  /// The connection's relayed candidate, once gathering completed (asserted, with coturn's log).
  func relayedCandidate(file: StaticString = #filePath, line: UInt = #line) throws -> ICECandidate {
    XCTAssertTrue(
      eventually { recorder.events.value.contains(.gatheringComplete) },
      "no allocation: \(coturn.log)", file: file, line: line)
    return try XCTUnwrap(loop.submit { connection.localCandidates.first }, file: file, line: line)
  }

  /// Whether the connection reported `.dtlsConnected` (in `role`, when given).
  func localDTLSConnected(role: DTLSRole? = nil) -> Bool {
    recorder.events.value.contains {
      event in
      guard case .dtlsConnected(let connectedRole, _) = event else { return false }
      return role == nil || role == connectedRole
    }
  }

  /// Answers the relay's checks and sends the far side's own (once the relay's permission for it
  /// exists: its first check came through) until answered; then starts DTLS through the relay.
  /// Returns when both DTLS sides connected (the local one in `localRole`, when given) or after
  /// 15 seconds.
  func runICEAndDTLS(
    answer: PeerConnectionTransportDescription, relayed: ICECandidate, localRole: DTLSRole? = nil
  ) throws -> Handshake {
    let localKey = STUNIntegrityKey(shortTermPassword: answer.iceCredentials.pwd)
    let peerKey = STUNIntegrityKey(shortTermPassword: peerCredentials.pwd)
    let request = STUNMessage(
      type: .bindingRequest,
      attributes: [
        .username("\(answer.iceCredentials.ufrag):\(peerCredentials.ufrag)"),
        .priority(0x6E00_1EFF), .iceControlling(0x0123_4567_89AB_CDEF),
      ])
    let requestBytes = try request.encode(key: localKey, fingerprint: true)
    let dtls = try DTLSEndpoint(
      role: .client, certificate: peerCertificate, remoteFingerprint: answer.fingerprint)
    let clock = ContinuousClock()
    var handshake = Handshake()
    var lastRequest: ContinuousClock.Instant?
    func sendDTLS(_ output: DTLSOutput) throws {
      for datagram in output.datagrams { try peer.send(datagram, to: relayed.address) }
      for event in output.events {
        if case .connected(let profile, let material) = event {
          handshake.keys = (profile, material)
        }
        if case .failed(let error) = event { handshake.dtlsFailures.append(error) }
      }
    }
    let limit = clock.now + .seconds(15)
    while clock.now < limit && !(handshake.keys != nil && localDTLSConnected(role: localRole)) {
      if handshake.checksFromRelay > 0 && !handshake.validated
        && lastRequest.map({ $0.duration(to: clock.now) > .milliseconds(200) }) ?? true
      {
        try peer.send(requestBytes, to: relayed.address)
        lastRequest = clock.now
      }
      if let deadline = dtls.nextDeadline, deadline <= MediaInstant.now() {
        try sendDTLS(dtls.handleTimeout(now: .now()))
      }
      guard let (bytes, source) = try peer.receive(timeout: 0.02) else { continue }
      handshake.sources.append(source)
      guard STUNMessage.looksLikeSTUN(bytes) else {
        handshake.dtlsSources.append(source)
        try sendDTLS(dtls.receive(bytes, now: .now()))
        continue
      }
      let message = try STUNMessage.decode(bytes)
      if message.type == .bindingRequest {
        handshake.checksFromRelay += 1
        let response = STUNMessage(
          type: .bindingSuccess, transactionID: message.transactionID,
          attributes: [.xorMappedAddress(source)])
        try peer.send(try response.encode(key: peerKey, fingerprint: true), to: source)
      } else if message.type == .bindingSuccess, message.transactionID == request.transactionID,
        !handshake.validated
      {
        try message.verifyIntegrity(key: localKey)
        handshake.validated = true
        // Validated through the relay, and no pair nominated: DTLS starts now.
        try sendDTLS(dtls.start(now: .now()))
      }
    }
    return handshake
  }
}

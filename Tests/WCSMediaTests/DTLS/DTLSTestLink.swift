import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// Two DTLS endpoints wired to each other in memory, with a virtual clock and a hook to drop
/// datagrams in flight.
final class DTLSTestLink {
  enum Side { case client, server }

  let client: DTLSEndpoint
  let server: DTLSEndpoint
  var now = MediaInstant.now()
  private(set) var clientEvents: [DTLSEvent] = []
  private(set) var serverEvents: [DTLSEvent] = []
  /// Every datagram either side emitted (dropped ones included).
  private(set) var emitted: [[UInt8]] = []
  /// Return true to lose a datagram; gets the sender and a running count of its datagrams.
  var shouldDrop: (Side, Int, [UInt8]) -> Bool = { _, _, _ in false }
  private var sentCount: [Side: Int] = [.client: 0, .server: 0]
  private var inFlight: [(to: Side, datagram: [UInt8])] = []

  init(client: DTLSEndpoint, server: DTLSEndpoint) {
    self.client = client
    self.server = server
  }

  static func make(
    clientProfiles: [DTLSSRTPProfile] = DTLSSRTPProfile.defaultOffer,
    serverProfiles: [DTLSSRTPProfile] = DTLSSRTPProfile.defaultOffer,
    mtu: Int = 1200,
    initialRetransmissionTimeout: Duration = .seconds(1)
  ) throws -> (DTLSTestLink, clientCertificate: DTLSCertificate, serverCertificate: DTLSCertificate)
  {
    let clientCertificate = try DTLSCertificate()
    let serverCertificate = try DTLSCertificate()
    let client = try DTLSEndpoint(
      role: .client, certificate: clientCertificate,
      remoteFingerprint: serverCertificate.fingerprint, profiles: clientProfiles, mtu: mtu,
      initialRetransmissionTimeout: initialRetransmissionTimeout)
    let server = try DTLSEndpoint(
      role: .server, certificate: serverCertificate,
      remoteFingerprint: clientCertificate.fingerprint, profiles: serverProfiles, mtu: mtu,
      initialRetransmissionTimeout: initialRetransmissionTimeout)
    return (DTLSTestLink(client: client, server: server), clientCertificate, serverCertificate)
  }

  func endpoint(_ side: Side) -> DTLSEndpoint { side == .client ? client : server }

  func events(_ side: Side) -> [DTLSEvent] { side == .client ? clientEvents : serverEvents }

  /// Starts both endpoints and delivers everything until no datagram is in flight.
  func start() {
    take(server.start(now: now), from: .server)
    take(client.start(now: now), from: .client)
    deliver()
  }

  /// Records an output of `side` and queues its datagrams for the other side.
  func take(_ output: DTLSOutput, from side: Side) {
    switch side {
    case .client: clientEvents += output.events
    case .server: serverEvents += output.events
    }
    for datagram in output.datagrams {
      emitted.append(datagram)
      let index = sentCount[side, default: 0]
      sentCount[side] = index + 1
      if !shouldDrop(side, index, datagram) {
        inFlight.append((side == .client ? .server : .client, datagram))
      }
    }
  }

  /// Delivers queued datagrams (and whatever they trigger) until none is left.
  func deliver(limit: Int = 500) {
    var steps = 0
    while !inFlight.isEmpty && steps < limit {
      steps += 1
      let (to, datagram) = inFlight.removeFirst()
      take(endpoint(to).receive(datagram, now: now), from: to)
    }
  }

  /// Injects a datagram as if the other side had sent it.
  func inject(_ datagram: [UInt8], to side: Side) {
    take(endpoint(side).receive(datagram, now: now), from: side)
    deliver()
  }

  /// Advances the virtual clock and runs both endpoints' timers.
  func advance(by duration: Duration) {
    now = now + MediaDuration(duration)
    take(client.handleTimeout(now: now), from: .client)
    take(server.handleTimeout(now: now), from: .server)
    deliver()
  }

  func connectedEvent(_ side: Side) -> (profile: DTLSSRTPProfile, keyingMaterial: [UInt8])? {
    for case .connected(let profile, let material) in events(side) {
      return (profile, material)
    }
    return nil
  }

  func failures(_ side: Side) -> [DTLSError] {
    events(side).compactMap { event in
      if case .failed(let error) = event { return error }
      return nil
    }
  }
}

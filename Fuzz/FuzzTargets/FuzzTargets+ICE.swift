import Foundation

@testable import WCSProtocols

extension FuzzTarget {
  static let iceLocal = ICECredentials(ufrag: "aaaa", pwd: "aaaaaaaaaaaaaaaaaaaaaa")
  static let iceRemote = ICECredentials(ufrag: "bbbb", pwd: "bbbbbbbbbbbbbbbbbbbbbb")

  /// Datagrams split at "\n\n\n\n" into a full, controlling ICE agent with one host socket and
  /// one remote candidate, checks running. The first byte of each says how it is sent: bit 0
  /// decodes it and signs it again with the key a real peer has (our password for a request,
  /// the remote's for a response), so the fuzzer gets past MESSAGE-INTEGRITY; bit 1 patches in
  /// the transaction ID of our last check; bit 2 sends it from an unknown address (a peer-
  /// reflexive candidate). Checks that the remote candidates stay within their limit.
  static func ice(_ bytes: [UInt8]) throws(Violation) -> Bool {
    var configuration = ICEAgentConfiguration(
      localCredentials: iceLocal, tieBreaker: 1, randomSeed: 3)
    configuration.maximumRemoteCandidates = 8
    configuration.maximumPairs = 16
    let agent = ICEAgent(configuration: configuration)
    let remote = ICETransportAddress(ip: .v4(0x7F00_0002), port: 6000)
    agent.addLocalSocket(
      0, address: ICETransportAddress(ip: .loopbackV4, port: 5000),
      now: MediaInstant(nanoseconds: 0))
    agent.setRemoteCredentials(iceRemote, now: MediaInstant(nanoseconds: 0))
    agent.addRemoteCandidate(
      ICECandidate(foundation: "1", priority: 100, address: remote, type: .host),
      now: MediaInstant(nanoseconds: 0))
    agent.startGathering(now: MediaInstant(nanoseconds: 0))
    var lastRequest: [UInt8]?
    func drain() {
      for case .send(let datagram) in agent.takeOutputs()
      where STUNMessage.looksLikeSTUN(datagram.bytes) && datagram.bytes.count >= 20 {
        lastRequest = datagram.bytes
      }
    }
    drain()
    var accepted = false
    var now = MediaInstant(nanoseconds: 0)
    var strangers: UInt16 = 0
    for piece in split(bytes, separator: [0x0A, 0x0A, 0x0A, 0x0A]).prefix(64) {
      guard let flags = piece.first else { continue }
      var datagram = Array(piece.dropFirst())
      if flags & 2 != 0, let lastRequest, datagram.count >= 20 {
        datagram.replaceSubrange(8..<20, with: lastRequest[8..<20])
      }
      if flags & 1 != 0, let message = try? STUNMessage.decode(datagram) {
        let key = message.type.messageClass == .request ? iceLocal.pwd : iceRemote.pwd
        if let signed = try? message.encode(
          key: STUNIntegrityKey(bytes: Array(key.utf8)), fingerprint: true)
        {
          datagram = signed
        }
      }
      var source = remote
      if flags & 4 != 0 {
        strangers &+= 1
        source = ICETransportAddress(ip: .v4(0x7F00_0003), port: 7000 &+ strangers)
      }
      now += .milliseconds(20)
      if agent.receive(datagram, from: source, socket: 0, now: now) == .handled {
        accepted = true
      }
      agent.handleTimeout(now: now)
      drain()
    }
    for _ in 0..<4 {
      now += .seconds(15)
      agent.handleTimeout(now: now)
      drain()
    }
    try check(
      agent.remoteCandidates.count <= configuration.maximumRemoteCandidates,
      "\(agent.remoteCandidates.count) remote candidates, over the limit")
    agent.close()
    return accepted
  }
}

import XCTest

@testable import WCSProtocols

/// The relay installs permissions for the peers it is paired with as soon as the pair exists,
/// before its candidate is signalled (RFC 8656 §9): a peer's first check to the relayed
/// address must not be dropped by the server for want of a permission.
final class ICEAgentRelayPermissionTests: XCTestCase {
  private let turnAddress = ICETransportAddress(ip: .v4(0xC000_0264), port: 3478)
  private let key = try! STUNIntegrityKey.longTerm(
    username: "user", realm: "wcs.test", password: "secret")

  private func stun(_ outputs: [ICEOutput]) -> [STUNMessage] {
    outputs.compactMap {
      guard case .send(let datagram) = $0 else { return nil }
      return try? STUNMessage.decode(datagram.bytes)
    }
  }

  private func answer(_ request: STUNMessage, _ attributes: [STUNAttribute], _ error: Bool)
    throws -> [UInt8]
  {
    try STUNMessage(
      type: STUNMessageType(
        method: request.type.method, messageClass: error ? .errorResponse : .successResponse),
      transactionID: request.transactionID, attributes: attributes
    ).encode(key: error ? nil : key, fingerprint: true)
  }

  func testPermissionsGoOutBeforeTheRelayedCandidateAndForLaterPeers() throws {
    var configuration = ICEAgentConfiguration(
      localCredentials: ICECredentials(ufrag: "aaaa", pwd: "aaaaaaaaaaaaaaaaaaaaaa"),
      tieBreaker: 1, randomSeed: 3)
    configuration.turnServers = [
      ICETURNServer(address: turnAddress, username: "user", password: "secret", transport: .tcp)
    ]
    configuration.transportPolicy = .relay
    let agent = ICEAgent(configuration: configuration)
    agent.addLocalSocket(
      0, address: ICETransportAddress(ip: .v4(0x0A00_0001), port: 5000), now: virtualTime(0))
    agent.setRemoteCredentials(
      ICECredentials(ufrag: "bbbb", pwd: "bbbbbbbbbbbbbbbbbbbbbb"), now: virtualTime(0))
    let first = ICETransportAddress(ip: .v4(0x0A00_0002), port: 6000)
    agent.addRemoteCandidate(
      ICECandidate(foundation: "1", priority: 100, address: first, type: .host), now: virtualTime(0)
    )
    agent.startGathering(now: virtualTime(0))
    let allocate = try XCTUnwrap(stun(agent.takeOutputs()).first)
    agent.receive(
      try answer(
        allocate,
        [.errorCode(code: 401, reason: "Unauthorized"), .realm("wcs.test"), .nonce("n")], true),
      from: turnAddress, socket: 0, now: virtualTime(0.01))
    let signed = try XCTUnwrap(stun(agent.takeOutputs()).first)
    agent.receive(
      try answer(
        signed,
        [
          .xorRelayedAddress(ICETransportAddress(ip: .v4(0xC000_0264), port: 50_000)),
          .lifetime(600),
        ],
        false), from: turnAddress, socket: 0, now: virtualTime(0.02))
    let outputs = agent.takeOutputs()
    let permissionIndex = try XCTUnwrap(
      outputs.firstIndex {
        guard case .send(let datagram) = $0, let message = try? STUNMessage.decode(datagram.bytes)
        else { return false }
        return message.type.method == .createPermission && message.xorPeerAddress?.ip == first.ip
      }, "\(outputs)")
    let candidateIndex = try XCTUnwrap(
      outputs.firstIndex {
        if case .localCandidate = $0 { return true }
        return false
      })
    XCTAssertLessThan(permissionIndex, candidateIndex)

    // A peer learnt later gets its permission when it is paired, before any check to it.
    let later = ICETransportAddress(ip: .v4(0x0A00_0003), port: 6000)
    agent.addRemoteCandidate(
      ICECandidate(foundation: "2", priority: 90, address: later, type: .host),
      now: virtualTime(0.03))
    let methods = stun(agent.takeOutputs()).filter { $0.xorPeerAddress?.ip == later.ip }
      .map(\.type.method)
    XCTAssertEqual(methods.first, .createPermission)
  }
}

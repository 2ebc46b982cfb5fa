import XCTest

@testable import WCSMedia
@testable import WCSProtocols

final class ICEAgentCandidateLimitTests: XCTestCase {
  let credentials = ICECredentials(ufrag: "ufA1", pwd: "passwordA-0123456789abcd")

  func makeAgent(maximumRemoteCandidates: Int? = nil) -> ICEAgent {
    var configuration = ICEAgentConfiguration(
      role: .controlled, localCredentials: credentials, tieBreaker: 1, randomSeed: 7)
    if let maximumRemoteCandidates {
      configuration.maximumRemoteCandidates = maximumRemoteCandidates
    }
    let agent = ICEAgent(configuration: configuration)
    agent.addLocalSocket(
      0, address: ICETransportAddress(ip: .v4(0x7F00_0001), port: 4000), now: virtualTime(0))
    return agent
  }

  func candidate(_ index: Int, component: UInt8 = 1) -> ICECandidate {
    ICECandidate(
      foundation: "f\(index % 7)", component: component, priority: UInt32(1000 + index),
      address: ICETransportAddress(ip: .v4(0x0A00_0000 + UInt32(index)), port: 9),
      type: .host)
  }

  func testHundredThousandCandidatesAreRefusedPastTheCap() {
    let agent = makeAgent()
    var outcomes: [ICERemoteCandidateIntake: Int] = [:]
    for index in 0..<100_000 {
      outcomes[agent.addRemoteCandidate(candidate(index), now: virtualTime(0)), default: 0] += 1
    }
    XCTAssertEqual(agent.remoteCandidates.count, 100)
    XCTAssertEqual(agent.refusedRemoteCandidates, 99_900)
    XCTAssertEqual(outcomes, [.added: 100, .limitReached: 99_900])
    XCTAssertEqual(agent.pairs.count, 100)
    // The kept ones are the first signalled, in order.
    XCTAssertEqual(agent.remoteCandidates.last?.address, candidate(99).address)
  }

  func testDuplicateAndSecondComponentCandidatesAreNotKept() {
    let agent = makeAgent(maximumRemoteCandidates: 3)
    XCTAssertEqual(agent.addRemoteCandidate(candidate(1), now: virtualTime(0)), .added)
    XCTAssertEqual(agent.addRemoteCandidate(candidate(1), now: virtualTime(0)), .duplicate)
    XCTAssertEqual(
      agent.addRemoteCandidate(candidate(2, component: 2), now: virtualTime(0)),
      .unsupportedComponent)
    XCTAssertEqual(agent.addRemoteCandidate(candidate(2), now: virtualTime(0)), .added)
    XCTAssertEqual(agent.addRemoteCandidate(candidate(3), now: virtualTime(0)), .added)
    XCTAssertEqual(agent.addRemoteCandidate(candidate(4), now: virtualTime(0)), .limitReached)
    XCTAssertEqual(agent.remoteCandidates.map(\.address), [1, 2, 3].map { candidate($0).address })
    XCTAssertEqual(agent.refusedRemoteCandidates, 2)
    XCTAssertEqual(agent.pairs.count, 3)
  }
}

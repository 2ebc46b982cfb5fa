import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSProtocols

/// Our ICE agent against aioice (aiortc's ICE agent) on 127.0.0.1, over real UDP sockets.
final class ICEInteropTests: XCTestCase {
  static let scriptPath = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Interop/aioice_peer.py").path

  func testOurControllingAgentWithAioiceControlled() throws {
    try runInterop(ourRole: .controlling)
  }

  func testOurControlledAgentWithAioiceControlling() throws {
    try runInterop(ourRole: .controlled)
  }

  func testOurLiteAgentWithAioiceControlling() throws {
    try runInterop(ourRole: .controlled, mode: .lite)
  }

  private func runInterop(ourRole: ICERole, mode: ICEMode = .full) throws {
    try skipUnlessAioiceIsInstalled()
    let peerRole =
      mode == .lite ? "controlling-lite" : ourRole == .controlling ? "controlled" : "controlling"
    let peer = try JSONLinesProcess(script: Self.scriptPath, arguments: [peerRole])
    defer { peer.stop() }
    func now() -> MediaInstant { MediaInstant.now() }

    let socket = try UDPSocket(bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0))
    let credentials = ICECredentials(ufrag: "wcsI", pwd: "wcs-interop-password-0123")
    let agent = ICEAgent(
      configuration: ICEAgentConfiguration(
        mode: mode, role: ourRole, localCredentials: credentials))
    agent.addLocalSocket(0, address: socket.localAddress, now: now())

    let offer = try XCTUnwrap(try peer.readLine(timeout: 10), "aioice sent no candidates")
    let ufrag = try XCTUnwrap(offer["ufrag"] as? String)
    let pwd = try XCTUnwrap(offer["pwd"] as? String)
    let candidates = try XCTUnwrap(offer["candidates"] as? [[String: Any]])
    XCTAssertFalse(candidates.isEmpty)
    try peer.writeLine([
      "ufrag": credentials.ufrag, "pwd": credentials.pwd,
      "candidates": agent.localCandidates.map {
        [
          "foundation": $0.foundation, "component": Int($0.component), "priority": Int($0.priority),
          "host": "\($0.address.ip)", "port": Int($0.address.port), "type": $0.type.rawValue,
        ] as [String: Any]
      },
    ])
    agent.setRemoteCredentials(ICECredentials(ufrag: ufrag, pwd: pwd), now: now())
    for candidate in candidates {
      guard let host = candidate["host"] as? String, let port = candidate["port"] as? Int,
        let priority = candidate["priority"] as? Int,
        let address = ICETransportAddress(host, port: UInt16(clamping: port))
      else { continue }
      agent.addRemoteCandidate(
        ICECandidate(
          foundation: candidate["foundation"] as? String ?? "1",
          priority: UInt32(clamping: priority),
          address: address,
          type: ICECandidateType(rawValue: candidate["type"] as? String ?? "") ?? .host
        ), now: now())
    }
    agent.setRemoteGatheringComplete(now: now())

    var peerConnected = false
    var sentTypes: [STUNMessageType] = []
    var applicationData: [[UInt8]] = []
    var peerEvents: [[String: Any]] = []
    func pump(until done: () -> Bool, timeout: Double) throws {
      let limit = now() + .seconds(timeout)
      while !done() && now() < limit {
        for output in agent.takeOutputs() {
          if case .send(let datagram) = output {
            try socket.send(datagram.bytes, to: datagram.destination)
            sentTypes.append(try STUNMessage.decode(datagram.bytes).type)
          }
        }
        if let deadline = agent.nextDeadline, deadline <= now() {
          agent.handleTimeout(now: now())
          continue
        }
        let wait = min(0.01, max(0, ((agent.nextDeadline ?? .distantFuture) - now()).seconds))
        if let (bytes, source) = try socket.receive(timeout: wait) {
          if agent.receive(bytes, from: source, socket: 0, now: now()) == .notSTUN {
            applicationData.append(bytes)
          }
        }
        while let event = try peer.readLine(timeout: 0) {
          peerEvents.append(event)
          if event["event"] as? String == "connected" { peerConnected = true }
          if event["event"] as? String == "failed" {
            XCTFail("aioice failed: \(event["reason"] ?? "?")")
            return
          }
        }
      }
    }

    try pump(until: { peerConnected && agent.selectedPair != nil }, timeout: 10)
    XCTAssertTrue(peerConnected, "aioice did not connect")
    let selected = try XCTUnwrap(agent.selectedPair, "our agent selected no pair")
    XCTAssertTrue([.connected, .completed].contains(agent.state))
    XCTAssertEqual(agent.role, ourRole)
    if mode == .lite {
      // A lite agent only answers.
      XCTAssertFalse(sentTypes.isEmpty)
      XCTAssertTrue(sentTypes.allSatisfy { $0 == .bindingSuccess })
    } else {
      XCTAssertTrue(sentTypes.contains(.bindingRequest))
    }
    XCTAssertEqual(selected.local.address, socket.localAddress)
    XCTAssertTrue(candidates.contains { $0["port"] as? Int == Int(selected.remote.address.port) })

    // One application datagram each way on the selected pair.
    try socket.send(Array("ping".utf8), to: selected.remote.address)
    try pump(
      until: {
        !applicationData.isEmpty && peerEvents.contains { $0["event"] as? String == "received" }
      }, timeout: 10)
    XCTAssertEqual(applicationData.first.map { String(decoding: $0, as: UTF8.self) }, "pong:ping")
    XCTAssertEqual(
      peerEvents.first { $0["event"] as? String == "received" }?["data"] as? String, "ping")
    try peer.writeLine(["done": true])
    XCTAssertEqual(try peer.readLine(timeout: 5)?["event"] as? String, "closed")
  }

  private func skipUnlessAioiceIsInstalled() throws { try skipUnlessPythonImports("aioice") }
}

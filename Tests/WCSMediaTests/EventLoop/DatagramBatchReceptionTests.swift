import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSPeerConnection
@testable import WCSProtocols

/// Hostile timing on the datagram path: `EventLoopUDPSocket` reading its handler once per
/// batch and clearing the loop's `datagramArrival` once after it, the `WeakReference` its
/// watch closure captures (sockets closed or released while datagrams wait in the kernel, or
/// released by their own handler), and `PeerConnection.Reception`, the copy of the state, the
/// selected and DTLS peer addresses and the peer's close that each datagram is checked against,
/// kept in step by the owning properties.
final class DatagramBatchReceptionTests: XCTestCase {
  private var loop = EventLoop(label: "DatagramBatchReceptionTests")

  override func tearDown() {
    loop.shutdown()
    super.tearDown()
  }

  /// What one handler call saw.
  private struct Seen: Sendable, Equatable {
    var first: UInt8
    var arrivalSet: Bool
  }

  /// `count` datagrams queued at `target` before the loop can read any (sent from the loop).
  private func queue(_ count: Int, to target: ICETransportAddress, from sender: EventLoopUDPSocket)
    throws
  {
    try loop.submit { () throws -> Void in
      for index in 0..<count { try sender.send([UInt8(index), 0xAB, 0xCD], to: target) }
    }
  }

  private func makeSender() throws -> EventLoopUDPSocket {
    try loop.submit {
      try EventLoopUDPSocket(loop: loop, bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0)) {
        _, _ in
      }
    }
  }

  /// A new socket on the loop gets the one datagram `sender` sends it (the loop still serves),
  /// then closes.
  private func assertASecondSocketReceives(
    from sender: EventLoopUDPSocket, file: StaticString = #filePath, line: UInt = #line
  ) throws {
    let other = LoopShared<Int>(0)
    let second = try loop.submit { [loop] in
      try EventLoopUDPSocket(loop: loop, bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0)) {
        _, _ in other.mutate { $0 += 1 }
      }
    }
    try queue(1, to: second.localAddress, from: sender)
    XCTAssertTrue(eventually { other.value == 1 }, file: file, line: line)
    loop.submit { second.close() }
  }

  /// A handler that closes its socket on the third of ten queued datagrams: exactly three are
  /// handed over and counted, each while the loop's `datagramArrival` is set, and it is clear
  /// after the batch that ended early.
  func testHandlerClosingItsSocketEndsTheBatchAndClearsTheArrival() throws {
    let seen = LoopShared<[Seen]>([])
    let box = LoopShared<EventLoopUDPSocket?>(nil)
    let socket = try loop.submit { [loop] in
      try EventLoopUDPSocket(loop: loop, bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0)) {
        bytes, _ in
        let count = seen.mutate {
          $0.append(Seen(first: bytes.first ?? 0xFF, arrivalSet: loop.datagramArrival != nil))
          return $0.count
        }
        if count == 3 { box.value?.close() }
      }
    }
    box.mutate { $0 = socket }
    let sender = try makeSender()
    try queue(10, to: socket.localAddress, from: sender)
    XCTAssertTrue(eventually { seen.value.count >= 3 })
    // Whatever else the loop had to do is done: nothing more came.
    let (received, closed, arrival) = loop.submit {
      (socket.datagramsReceived, socket.isClosed, loop.datagramArrival)
    }
    XCTAssertEqual(seen.value, (0..<3).map { Seen(first: UInt8($0), arrivalSet: true) })
    XCTAssertEqual(received, 3)
    XCTAssertTrue(closed)
    XCTAssertNil(arrival)
    loop.submit { sender.close() }
  }

  /// Ten datagrams in one batch, each counted once with its bytes; the arrival is set during
  /// every call and cleared after the batch.
  func testBatchCountsEveryDatagramAndClearsTheArrivalOnce() throws {
    let seen = LoopShared<[Seen]>([])
    let socket = try loop.submit { [loop] in
      try EventLoopUDPSocket(loop: loop, bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0)) {
        bytes, _ in
        seen.mutate {
          $0.append(Seen(first: bytes.first ?? 0xFF, arrivalSet: loop.datagramArrival != nil))
        }
      }
    }
    let sender = try makeSender()
    try queue(10, to: socket.localAddress, from: sender)
    XCTAssertTrue(eventually { seen.value.count == 10 })
    let (received, bytes, arrival) = loop.submit {
      (socket.datagramsReceived, socket.bytesReceived, loop.datagramArrival)
    }
    XCTAssertEqual(seen.value, (0..<10).map { Seen(first: UInt8($0), arrivalSet: true) })
    XCTAssertEqual(received, 10)
    XCTAssertEqual(bytes, 30)
    XCTAssertNil(arrival)
    loop.submit {
      socket.close()
      sender.close()
    }
  }

  /// A socket whose last reference goes while datagrams wait for it: none is handed over, and
  /// the loop goes on serving another socket.
  func testSocketReleasedWithDatagramsInFlightHandsNoneOver() throws {
    let seen = LoopShared<Int>(0)
    let weakSocket = LoopShared<Bool>(false)
    let sender = try makeSender()
    try loop.submit { () throws -> Void in
      var socket: EventLoopUDPSocket? = try EventLoopUDPSocket(
        loop: loop, bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0)
      ) { _, _ in seen.mutate { $0 += 1 } }
      guard let target = socket?.localAddress else { return XCTFail("no socket") }
      for index in 0..<5 { try sender.send([UInt8(index)], to: target) }
      weak let released = socket
      socket = nil
      weakSocket.mutate { $0 = released == nil }
    }
    XCTAssertTrue(weakSocket.value)
    // The loop still serves: a second socket gets its datagram.
    try assertASecondSocketReceives(from: sender)
    XCTAssertEqual(seen.value, 0)
    loop.submit { sender.close() }
  }

  /// A handler that drops the last reference to its own socket (without closing it) on the
  /// first datagram: the batch under way finishes as it did with `[weak self]`, the socket is
  /// gone after it, and what comes later is not handed to anyone.
  func testHandlerReleasingItsOwnSocketDoesNotCrashAndEndsDelivery() throws {
    let seen = LoopShared<Int>(0)
    let box = LoopShared<EventLoopUDPSocket?>(nil)
    let socket = try loop.submit { [loop] in
      try EventLoopUDPSocket(loop: loop, bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0)) {
        _, _ in
        seen.mutate { $0 += 1 }
        box.mutate { $0 = nil }
      }
    }
    let target = socket.localAddress
    box.mutate { $0 = socket }
    weak let released = socket
    _ = consume socket
    let sender = try makeSender()
    try queue(10, to: target, from: sender)
    XCTAssertTrue(eventually { seen.value == 10 })
    XCTAssertTrue(loop.submit { released == nil })
    try queue(3, to: target, from: sender)
    // One more turn of the loop for the late datagrams, through a socket that does receive.
    try assertASecondSocketReceives(from: sender)
    XCTAssertEqual(seen.value, 10)
    loop.submit { sender.close() }
  }
}

/// `PeerConnection.Reception` against the properties it copies, at every step of a connection's
/// life: made, negotiated, connected (selected pair; the DTLS fallback on the lite side),
/// media exchanged, the peer's DTLS close, closed.
final class ReceptionInStepTests: XCTestCase {
  /// The differences between `connection.reception` and what its properties say (empty when in
  /// step). On the loop.
  static func mismatches(_ connection: PeerConnection) -> [String] {
    let reception = connection.reception
    var found: [String] = []
    if reception.isFinal != connection.state.isFinal { found.append("isFinal") }
    if reception.selectedRemoteAddress != connection.selectedPair?.remote.address {
      found.append("selectedRemoteAddress")
    }
    if reception.dtlsFallbackAddress != connection.dtlsFallbackDestination?.address {
      found.append("dtlsFallbackAddress")
    }
    if reception.peerClosedDTLS != connection.peerClosedDTLS { found.append("peerClosedDTLS") }
    return found
  }

  private static func check(_ peers: LoopbackPeers, _ step: String) {
    let (offerer, answerer) = peers.loop.submit {
      (mismatches(peers.offerer), mismatches(peers.answerer))
    }
    XCTAssertEqual(offerer, [], "offerer, \(step)")
    XCTAssertEqual(answerer, [], "answerer, \(step)")
  }

  func testReceptionStaysInStepThroughAConnectionsLife() throws {
    for lite in [false, true] {
      let peers = LoopbackPeers(answererLite: lite)
      Self.check(peers, "new")
      try peers.negotiate()
      Self.check(peers, "negotiated")
      XCTAssertTrue(peers.waitForBoth { $0 == .connected })
      Self.check(peers, "connected")
      let (selected, fallback) = peers.loop.submit {
        (
          peers.answerer.reception.selectedRemoteAddress,
          peers.answerer.reception.dtlsFallbackAddress
        )
      }
      XCTAssertTrue(selected != nil || fallback != nil, "lite \(lite)")

      let media = TestMedia.packets(ssrc: 0x00C0_FFEE, count: 20, seed: 3)
      try peers.send(media, from: peers.offerer)
      XCTAssertTrue(eventually { peers.answererRecorder.rtp.value.count == media.count })
      Self.check(peers, "media")

      // The offerer closes: its close_notify reaches the answerer.
      peers.loop.submit { peers.offerer.close() }
      XCTAssertTrue(eventually { peers.loop.submit { peers.answerer.peerClosedDTLS } })
      Self.check(peers, "peer closed")
      XCTAssertTrue(peers.loop.submit { peers.offerer.reception.isFinal })
      // Every packet counted once.
      let before = peers.loop.submit { peers.answerer.stats.rtpPacketsReceived }
      XCTAssertEqual(before, media.count)

      peers.loop.submit { peers.answerer.close() }
      Self.check(peers, "closed")
      XCTAssertTrue(peers.loop.submit { peers.answerer.reception.isFinal })
      peers.shutdown()
    }
  }

  /// The same through coturn on 127.0.0.1 (a relay-only offerer): media the answerer sends
  /// comes to the offerer unwrapped from the relay, checked against the copy, which stays in
  /// step with the selected pair (the relayed one) until both sides closed.
  func testReceptionStaysInStepThroughARelay() throws {
    let coturn = try CoturnTestServer()
    defer { coturn.stop() }
    let peers = LoopbackPeers(offererConfiguration: .relayOnly(through: coturn))
    defer { peers.shutdown() }
    Self.check(peers, "new")
    let offer = try peers.loop.submit { try peers.offerer.localDescriptionForOffer() }
    try peers.loop.submit {
      let answer = try peers.answerer.setRemoteOffer(offer)
      try peers.offerer.setRemoteAnswer(answer)
    }
    XCTAssertTrue(
      eventually { peers.offererRecorder.events.value.contains(.gatheringComplete) },
      "no allocation: \(coturn.log)")
    peers.loop.submit {
      for candidate in peers.offerer.localCandidates {
        peers.answerer.addRemoteCandidate(candidate)
      }
      peers.answerer.setRemoteEndOfCandidates()
    }
    XCTAssertTrue(peers.waitForBoth { $0 == .connected })
    Self.check(peers, "connected")
    let media = TestMedia.packets(ssrc: 0x00C0_FFEF, count: 20, seed: 4)
    try peers.send(media, from: peers.answerer)
    XCTAssertTrue(eventually { peers.offererRecorder.rtp.value.count == media.count })
    XCTAssertEqual(peers.offererRecorder.rtp.value.map(\.packet), media)
    Self.check(peers, "media through the relay")
    peers.loop.submit { peers.answerer.close() }
    XCTAssertTrue(eventually { peers.loop.submit { peers.offerer.peerClosedDTLS } })
    Self.check(peers, "peer closed")
  }

  /// Media before any pair is selected, through a relay: a far side by hand (full ICE, DTLS
  /// client) validates the relayed candidate but never nominates, runs DTLS through the relay
  /// (our fallback destination), then sends SRTP. Every packet is taken, from the DTLS peer's
  /// address alone (`Reception.dtlsFallbackAddress`, kept by `dtlsFallbackDestination`), with
  /// no pair ever selected; the copy is in step before and after.
  func testMediaFromTheDTLSPeerBeforeNominationIsTakenThroughTheRelay() throws {
    let farSide = try RelayedFarSide(
      label: "ReceptionDTLSFallback",
      peerCredentials: ICECredentials(ufrag: "r3fs", pwd: "roundthreefarsidepasswd1"))
    defer { farSide.shutdown() }
    let (loop, connection, recorder, peer) = (
      farSide.loop, farSide.connection, farSide.recorder, farSide.peer
    )
    let answer = try loop.submit { try connection.setRemoteOffer(farSide.offer) }
    let relayed = try farSide.relayedCandidate()
    let keys = try farSide.runICEAndDTLS(answer: answer, relayed: relayed).keys
    let (profile, material) = try XCTUnwrap(keys, "far side DTLS did not connect")
    XCTAssertTrue(farSide.localDTLSConnected())
    let before = loop.submit {
      (Self.mismatches(connection), connection.reception, connection.stats.selectedPair)
    }
    XCTAssertEqual(before.0, [])
    XCTAssertNil(before.2, "a pair was selected: the fallback is not what is attacked")
    XCTAssertNil(before.1.selectedRemoteAddress)
    XCTAssertEqual(before.1.dtlsFallbackAddress, peer.localAddress)

    let keying = try DTLSSRTPKeyingMaterial(profile: profile, bytes: material)
    let outbound = keying.outbound(for: .client)
    let srtp = try SRTPSession(
      profile: profile.srtpProfile,
      masterKey: SRTPMasterKey(key: outbound.key, salt: outbound.salt), direction: .outbound)
    let media = TestMedia.packets(ssrc: 0x0F00_BAC4, count: 12, seed: 12)
    for packet in media {
      var bytes = try packet.serialized()
      try srtp.protectRTP(&bytes)
      try peer.send(bytes, to: relayed.address)
    }
    XCTAssertTrue(
      eventually { recorder.rtp.value.count == media.count },
      "taken \(recorder.rtp.value.count); stats \(loop.submit { connection.stats })")
    XCTAssertEqual(recorder.rtp.value.map(\.packet), media)
    let after = loop.submit { (Self.mismatches(connection), connection.stats) }
    XCTAssertEqual(after.0, [])
    XCTAssertNil(after.1.selectedPair)
    XCTAssertEqual(after.1.unexpectedDatagrams, 0)
  }

  /// `Reception.acceptsMedia(from:)` against the formula it replaced on every combination of
  /// a selected address, a DTLS peer address and a source among a few addresses.
  func testAcceptsMediaMatchesTheSelectedOrDTLSPeerFormula() {
    let addresses: [ICETransportAddress?] = [
      nil, ICETransportAddress(ip: .loopbackV4, port: 5000),
      ICETransportAddress(ip: .loopbackV4, port: 5001),
    ]
    var accepted = 0
    for selected in addresses {
      for fallback in addresses {
        for case let source? in addresses {
          var reception = PeerConnection.Reception()
          reception.selectedRemoteAddress = selected
          reception.dtlsFallbackAddress = fallback
          let fromSelectedPair = selected == source
          let fromDTLSPeer = selected == nil && fallback == source
          XCTAssertEqual(
            reception.acceptsMedia(from: source), fromSelectedPair || fromDTLSPeer,
            "\(String(describing: selected)) \(String(describing: fallback)) \(source)")
          if reception.acceptsMedia(from: source) { accepted += 1 }
        }
      }
    }
    XCTAssertEqual(accepted, 8)
  }
}

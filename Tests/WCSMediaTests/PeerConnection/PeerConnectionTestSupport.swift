import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSPeerConnection
@testable import WCSProtocols

/// What the test sees of one PeerConnection: its events and the RTP/RTCP it delivered,
/// recorded on the loop and read on the test thread.
final class PeerRecorder: Sendable {
  struct Delivered: Equatable, Sendable {
    var ssrc: UInt32
    var packet: RTPPacket
  }

  let events = LoopShared<[PeerConnectionEvent]>([])
  let rtp = LoopShared<[Delivered]>([])
  let rtcp = LoopShared<[[UInt8]]>([])
  let offLoopCallbacks = LoopShared(0)

  var states: [PeerConnectionState] {
    events.value.compactMap {
      if case .stateChanged(let state) = $0 { return state }
      return nil
    }
  }

  var lastState: PeerConnectionState? { states.last }

  /// Installs the handlers; call on the loop.
  func attach(to connection: PeerConnection) {
    let loop = connection.loop
    connection.onEvent = { [self] event in
      if !loop.inEventLoop { offLoopCallbacks.mutate { $0 += 1 } }
      events.mutate { $0.append(event) }
    }
    connection.onRTP = { [self] ssrc, bytes in
      if !loop.inEventLoop { offLoopCallbacks.mutate { $0 += 1 } }
      guard let packet = try? RTPPacket.parse(Array(bytes)) else { return }
      rtp.mutate { $0.append(Delivered(ssrc: ssrc, packet: packet)) }
    }
    connection.onRTCP = { [self] bytes in
      rtcp.mutate { $0.append(Array(bytes)) }
    }
  }
}

enum TestMedia {
  /// `count` RTP packets of SSRC `ssrc`, payload type 111, sequence 1000..., payloads of
  /// varied sizes and contents (so a wrong key or offset cannot pass).
  static func packets(ssrc: UInt32, count: Int, seed: UInt8) -> [RTPPacket] {
    (0..<count).map { index in
      let size = 20 + (index * 37) % 1000
      let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index &+ Int(seed)) }
      return RTPPacket(
        header: RTPHeader(
          marker: index == count - 1, payloadType: 111, sequenceNumber: UInt16(1000 + index),
          timestamp: UInt32(960 * index), ssrc: ssrc),
        payload: payload)
    }
  }
}

/// Two PeerConnections on one private loop, wired by handing transport descriptions across.
final class LoopbackPeers {
  let loop = EventLoop(label: "PeerConnectionTests")
  let offerer: PeerConnection
  let answerer: PeerConnection
  let offererRecorder = PeerRecorder()
  let answererRecorder = PeerRecorder()

  init(
    answererLite: Bool = false, offererConfiguration: PeerConnectionConfiguration = .loopback,
    answererConfiguration: PeerConnectionConfiguration = .loopback
  ) {
    offerer = PeerConnection(configuration: offererConfiguration, loop: loop)
    var answerConfiguration = answererConfiguration
    answerConfiguration.iceLite = answererLite
    answerer = PeerConnection(configuration: answerConfiguration, loop: loop)
    loop.submit {
      offererRecorder.attach(to: offerer)
      answererRecorder.attach(to: answerer)
    }
  }

  /// Offer → answer exchange; `tamperAnswer` may change the answer the offerer sees.
  func negotiate(
    tamperAnswer: (inout PeerConnectionTransportDescription) -> Void = { _ in }
  ) throws {
    try loop.submit {
      let offer = try offerer.localDescriptionForOffer()
      var answer = try answerer.setRemoteOffer(offer)
      tamperAnswer(&answer)
      try offerer.setRemoteAnswer(answer)
    }
  }

  func waitForBoth(_ predicate: @escaping (PeerConnectionState?) -> Bool, timeout: Double = 10)
    -> Bool
  {
    eventually(timeout: timeout) {
      predicate(offererRecorder.lastState) && predicate(answererRecorder.lastState)
    }
  }

  func send(_ packets: [RTPPacket], from connection: PeerConnection) throws {
    try loop.submit {
      for packet in packets { try connection.sendRTP(try packet.serialized()) }
    }
  }

  /// Sends `toAnswerer` and `toOfferer` both ways at once and checks each side received its
  /// packets byte-identical and in order.
  func exchangeRTP(
    toAnswerer: [RTPPacket], toOfferer: [RTPPacket], file: StaticString = #filePath,
    line: UInt = #line
  ) throws {
    try send(toAnswerer, from: offerer)
    try send(toOfferer, from: answerer)
    XCTAssertTrue(
      eventually {
        self.answererRecorder.rtp.value.count == toAnswerer.count
          && self.offererRecorder.rtp.value.count == toOfferer.count
      }, file: file, line: line)
    XCTAssertEqual(answererRecorder.rtp.value.map(\.packet), toAnswerer, file: file, line: line)
    XCTAssertEqual(offererRecorder.rtp.value.map(\.packet), toOfferer, file: file, line: line)
  }

  func shutdown() {
    loop.submit {
      offerer.close()
      answerer.close()
    }
    loop.shutdown()
  }
}

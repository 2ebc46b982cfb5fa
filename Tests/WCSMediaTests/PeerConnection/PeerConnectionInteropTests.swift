import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSPeerConnection
@testable import WCSProtocols

/// Our PeerConnection (offerer, full ICE, controlling) against aiortc (answerer) on
/// 127.0.0.1: SDP over stdin/stdout of `Tests/Interop/aiortc_peer.py` as JSON lines.
final class PeerConnectionInteropTests: XCTestCase {
  static let scriptPath = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Interop/aiortc_peer.py").path
  static let audio = SDPOfferParameters.Audio(
    direction: .sendrecv, ssrc: 0x5EED_0001, trackId: "wcs-audio", includeG711: false)

  func testConnectsToAiortcAndRTPFlowsBothWaysIntact() throws {
    try skipUnlessAiortcIsInstalled()
    let peer = try JSONLinesProcess(script: Self.scriptPath)
    defer { peer.stop() }
    let loop = EventLoop(label: "aiortc-interop")
    defer { loop.shutdown() }
    let connection = PeerConnection(configuration: .loopback, loop: loop)
    let recorder = PeerRecorder()
    defer { loop.submit { connection.close() } }

    let offer = try loop.submit {
      recorder.attach(to: connection)
      return try connection.createOffer(audio: Self.audio, video: nil)
    }
    try peer.writeLine(["offer": offer])
    let reply = try XCTUnwrap(try peer.readLine(timeout: 20), "aiortc sent no answer")
    let answer = try XCTUnwrap(reply["answer"] as? String, "\(reply)")
    try loop.submit { try connection.setRemoteDescription(answer: answer) }

    XCTAssertTrue(
      eventually(timeout: 20) { recorder.lastState == .connected }, "\(recorder.states)")
    var aiortcStates: [String] = []
    while !aiortcStates.contains("connected"), let line = try peer.readLine(timeout: 20) {
      if let state = line["state"] as? String { aiortcStates.append(state) }
    }
    XCTAssertEqual(aiortcStates.last, "connected")
    let stats = loop.submit { connection.stats }
    XCTAssertEqual(stats.dtlsRole, .server, "aiortc answers a=setup:active")
    XCTAssertNotNil(stats.protectionProfile)

    // Opus silence frames (RFC 6716 TOC 0xF8, one 20 ms CELT frame), distinct headers.
    let ours = (0..<30).map { index in
      RTPPacket(
        header: RTPHeader(
          payloadType: 111, sequenceNumber: UInt16(5000 + index), timestamp: UInt32(960 * index),
          ssrc: Self.audio.ssrc),
        payload: [0xF8, 0xFF, 0xFE])
    }
    for packet in ours {
      try loop.submit { try connection.sendRTP(try packet.serialized()) }
      usleep(2000)
    }
    XCTAssertTrue(eventually(timeout: 20) { recorder.rtp.value.count >= 20 }, "no RTP from aiortc")
    // Taken before the report, so every packet in it was sent before aiortc's list was.
    let delivered = recorder.rtp.value
    let (received, sent) = try report(from: peer, expectingReceived: ours.count)
    XCTAssertEqual(received, try ours.map { try Self.hex($0.serialized()) })
    // Every packet we delivered is byte-identical to one aiortc sent (before SRTP protect).
    let sentSet = Set(sent)
    XCTAssertGreaterThanOrEqual(delivered.count, 20)
    for item in delivered {
      XCTAssertTrue(
        sentSet.contains(Self.hex(try item.packet.serialized())), "\(item.packet.header)")
    }
    XCTAssertEqual(Set(delivered.map(\.packet.header.payloadType)).count, 1)
    try peer.writeLine(["cmd": "close"])
  }

  func testFingerprintMismatchAgainstAiortcFailsAndNoMediaFlows() throws {
    try skipUnlessAiortcIsInstalled()
    let peer = try JSONLinesProcess(script: Self.scriptPath)
    defer { peer.stop() }
    let loop = EventLoop(label: "aiortc-mismatch")
    defer { loop.shutdown() }
    let connection = PeerConnection(configuration: .loopback, loop: loop)
    let recorder = PeerRecorder()
    defer { loop.submit { connection.close() } }
    let offer = try loop.submit {
      recorder.attach(to: connection)
      return try connection.createOffer(audio: Self.audio, video: nil)
    }
    try peer.writeLine(["offer": offer])
    let reply = try XCTUnwrap(try peer.readLine(timeout: 20), "aiortc sent no answer")
    let answer = try XCTUnwrap(reply["answer"] as? String)
    try loop.submit {
      try connection.setRemoteDescription(answer: SDPTampering.flipFingerprints(answer))
    }
    XCTAssertTrue(
      eventually(timeout: 20) {
        if case .failed(.dtls(.fingerprintMismatch)) = recorder.lastState { return true }
        return false
      }, "\(recorder.states)")
    var aiortcStates: [String] = []
    while !aiortcStates.contains("failed"), let line = try peer.readLine(timeout: 20) {
      if let state = line["state"] as? String { aiortcStates.append(state) }
    }
    XCTAssertEqual(aiortcStates.last, "failed")
    XCTAssertFalse(aiortcStates.contains("connected"))
    try peer.writeLine(["cmd": "report"])
    let report = try XCTUnwrap(try peer.readLine(until: "report", timeout: 20))
    XCTAssertEqual((report["received"] as? [String])?.count, 0)
    XCTAssertEqual(recorder.rtp.value.count, 0)
    try loop.submit {
      XCTAssertThrowsError(try connection.sendRTP([0x80, 111, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]))
    }
    try peer.writeLine(["cmd": "close"])
  }

  /// aiortc offers (full ICE, controlling); we answer as the local server does: ICE-lite,
  /// `a=setup:active` (DTLS client). RTP flows both ways intact.
  func testICELiteAnswererToAnAiortcOffer() throws {
    try skipUnlessAiortcIsInstalled()
    let peer = try JSONLinesProcess(script: Self.scriptPath, arguments: ["offerer"])
    defer { peer.stop() }
    let loop = EventLoop(label: "aiortc-offerer")
    defer { loop.shutdown() }
    var configuration = PeerConnectionConfiguration.loopback
    configuration.iceLite = true
    let connection = PeerConnection(configuration: configuration, loop: loop)
    let recorder = PeerRecorder()
    defer { loop.submit { connection.close() } }
    let reply = try XCTUnwrap(try peer.readLine(timeout: 20), "aiortc sent no offer")
    let offer = try XCTUnwrap(reply["offer"] as? String, "\(reply)")
    let answer = try loop.submit {
      recorder.attach(to: connection)
      try connection.setRemoteDescription(offer: offer)
      return try connection.createAnswer()
    }
    XCTAssertTrue(answer.contains("a=ice-lite"))
    XCTAssertTrue(answer.contains("a=setup:active"))
    try peer.writeLine(["answer": answer])
    XCTAssertTrue(
      eventually(timeout: 20) { recorder.lastState == .connected }, "\(recorder.states)")
    let stats = loop.submit { connection.stats }
    XCTAssertEqual(stats.dtlsRole, .client)
    XCTAssertEqual(stats.iceRole, .controlled)

    let payloadType = try XCTUnwrap(
      loop.submit { connection.remoteOffer?.media.first?.payloadTypes.first })
    let ours = (0..<20).map { index in
      RTPPacket(
        header: RTPHeader(
          payloadType: UInt8(payloadType), sequenceNumber: UInt16(100 + index),
          timestamp: UInt32(960 * index), ssrc: 0x1234_5678),
        payload: [0xF8, 0xFF, 0xFE])
    }
    for packet in ours {
      try loop.submit { try connection.sendRTP(try packet.serialized()) }
      usleep(2000)
    }
    XCTAssertTrue(eventually(timeout: 20) { recorder.rtp.value.count >= 10 }, "no RTP from aiortc")
    let delivered = recorder.rtp.value
    let (received, sent) = try report(from: peer, expectingReceived: ours.count)
    XCTAssertEqual(received, try ours.map { try Self.hex($0.serialized()) })
    let sentSet = Set(sent)
    for item in delivered {
      XCTAssertTrue(sentSet.contains(Self.hex(try item.packet.serialized())))
    }
    try peer.writeLine(["cmd": "close"])
  }

  /// Asks aiortc for its report until it received `count` RTP packets (at most ~20 s):
  /// the plain RTP packets it received and sent, as hex.
  func report(from peer: JSONLinesProcess, expectingReceived count: Int) throws
    -> (received: [String], sent: [String])
  {
    var received: [String] = []
    var sent: [String] = []
    for _ in 0..<20 where received.count < count {
      try peer.writeLine(["cmd": "report"])
      let report = try XCTUnwrap(try peer.readLine(until: "report", timeout: 20))
      received = report["received"] as? [String] ?? []
      sent = report["sent"] as? [String] ?? []
      if received.count < count { usleep(100_000) }
    }
    return (received, sent)
  }

  static func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
  }

  func skipUnlessAiortcIsInstalled() throws { try skipUnlessPythonImports("aiortc") }
}

import Foundation
import Synchronization
import TestSupport
import WCSLocalServer
import WCSMedia
import XCTest

@testable import WCSApi2

/// The SDK calls a real SIP user agent (Debian's baresip, auto-answering, an 880 Hz tone as its
/// microphone) through the local server's SIP gateway, everything on 127.0.0.1. Skipped when
/// baresip is not installed (`scripts/install-deps.sh test` installs it).
final class SIPCallEndToEndTests: XCTestCase {
  /// Both directions carry their tone (baresip's 880 Hz to the SDK, the SDK's virtual 440 Hz
  /// microphone to baresip, transcoded Opus ↔ PCMU), DTMF arrives, hold stops media both ways
  /// and unhold brings it back.
  func testCallToBaresipCarriesBothTonesSendsDTMFHoldsAndFinishes() async throws {
    let peer = try BaresipPeer.start(answer: true, recording: true)
    defer { peer.stop() }
    let server = try startServer()
    defer { server.stop() }
    let (session, call, seen) = try await dial(server, "sip:baresip@127.0.0.1:\(peer.port)")
    defer { session.disconnect() }
    try await call.connect()
    XCTAssertEqual(call.getStatus(), .fpwcsCallStatusEstablished)
    XCTAssertEqual(call.getSipStatus(), 200)
    let heard = try playedAudio(session, call)
    try await waitFor("baresip's tone reaches the gateway", timeout: 10) {
      server.sipLegStatistics().first.map { $0.recentSamples.count >= 4000 } ?? false
    }
    let samples = try XCTUnwrap(server.sipLegStatistics().first).recentSamples
    XCTAssertEqual(Tone.dominantFrequency(samples, rate: 8000), 880, accuracy: 20)
    // G.711 to the gateway, Opus to the SDK, played here at 48 kHz.
    try await assertPlaysBaresipsTone(heard)
    let flowing = try XCTUnwrap(server.sipLegStatistics().first)
    XCTAssertGreaterThan(flowing.packetsToSIP, 25, "the SDK's Opus reaches baresip as G.711")
    XCTAssertGreaterThan(flowing.packetsToWebRTC, 25)

    try call.sendDTMF("19#", type: .fpwcsCallDTMFRFC2833)
    try await waitFor("baresip reports the digits", timeout: 10) {
      peer.receivedDigits == "19#"
    }
    XCTAssertGreaterThanOrEqual(server.sipLegStatistics().first?.dtmfPacketsSent ?? 0, 3 * 6)

    try call.hold()
    try await waitFor("HOLD") { call.getStatus() == .fpwcsCallStatusHold }
    try await Task.sleep(for: .milliseconds(300))
    let held = try XCTUnwrap(server.sipLegStatistics().first)
    try await Task.sleep(for: .seconds(1))
    let stillHeld = try XCTUnwrap(server.sipLegStatistics().first)
    XCTAssertEqual(stillHeld.packetsToSIP, held.packetsToSIP, "no media to baresip on hold")
    XCTAssertEqual(stillHeld.packetsToWebRTC, held.packetsToWebRTC, "no media to the SDK on hold")
    try call.unhold()
    try await waitFor("ESTABLISHED again") { call.getStatus() == .fpwcsCallStatusEstablished }
    try await waitFor("media again after unhold", timeout: 10) {
      guard let now = server.sipLegStatistics().first else { return false }
      return now.packetsToSIP > stillHeld.packetsToSIP + 25
        && now.packetsToWebRTC > stillHeld.packetsToWebRTC + 25
    }

    call.hangup()
    try await waitFor("FINISH") { call.getStatus() == .fpwcsCallStatusFinish }
    try await waitFor("baresip saw the BYE") {
      peer.output.contains("Call terminated") || peer.output.contains("closed")
    }
    XCTAssertEqual(
      seen.value,
      [
        .fpwcsCallStatusPending, .fpwcsCallStatusTrying, .fpwcsCallStatusRing,
        .fpwcsCallStatusEstablished, .fpwcsCallStatusHold, .fpwcsCallStatusEstablished,
        .fpwcsCallStatusFinish,
      ].filter { seen.value.contains($0) })
    XCTAssertTrue(seen.value.contains(.fpwcsCallStatusTrying))
    XCTAssertEqual(server.sipLegStatistics().count, 0, "the RTP leg is closed")
    try await assertBaresipHeardTheSDKsTone(peer)
  }

  /// Keys pressed on baresip (`sndcode`: RFC 4733 telephone-events, the end packet sent three
  /// times) reach the SDK's DTMF callback once per press, in order, a repeated key included.
  func testDigitsPressedOnBaresipReachTheCallOncePerPressInOrder() async throws {
    let peer = try BaresipPeer.start(answer: true)
    defer { peer.stop() }
    let server = try startServer()
    defer { server.stop() }
    let (session, call, _) = try await dial(server, "sip:baresip@127.0.0.1:\(peer.port)")
    defer { session.disconnect() }
    let heard = Locked<[String]>([])
    call.onDTMF { _, digits, type in
      heard.withLock { $0.append(digits + (type == .fpwcsCallDTMFRFC2833 ? "" : "?")) }
    }
    try await call.connect()
    try await waitFor("baresip's audio reaches the gateway", timeout: 10) {
      (server.sipLegStatistics().first?.packetsReceived ?? 0) > 10
    }
    for digit in ["4", "2", "#", "2", "2", "*"] {
      try peer.command("sndcode", params: digit)
    }
    try await waitFor("six digits", timeout: 10) { heard.value.count >= 6 }
    try await Task.sleep(for: .milliseconds(300))
    XCTAssertEqual(heard.value, ["4", "2", "#", "2", "2", "*"])
    XCTAssertEqual(call.getReceivedDTMF(), "42#22*")
    call.hangup()
    try await waitFor("FINISH") { call.getStatus() == .fpwcsCallStatusFinish }
  }

  /// A call from one SDK session to another through the gateway itself (its INVITE comes back
  /// to its own SIP port): DTMF sent as SIP INFO and as RFC 4733 by one side reaches the
  /// other's callback with its type.
  func testDTMFBetweenTwoSessionsArrivesAsInfoAndAsTelephoneEvents() async throws {
    let server = try startServer()
    defer { server.stop() }
    let sipPort = try XCTUnwrap(server.sipPort)
    let callee = try gatewaySession(server, login: "1002", sipPort: sipPort)
    defer { callee.disconnect() }
    let incoming = Locked<[FPWCSApi2Call]>([])
    let heard = Locked<[String]>([])
    callee.onIncomingCallCallback { call in
      guard let call else { return }
      call.onDTMF { _, digits, type in
        heard.withLock { $0.append(digits + (type == .fpwcsCallDTMFInfo ? "i" : "r")) }
      }
      incoming.withLock { $0.append(call) }
    }
    try await callee.connect()
    let (caller, call, _) = try await dial(server, "sip:1002@127.0.0.1:\(sipPort)")
    defer { caller.disconnect() }
    let connected = Task { try await call.connect() }
    try await waitFor("the incoming call", timeout: 15) { !incoming.value.isEmpty }
    let answered = try XCTUnwrap(incoming.value.first)
    answered.setLocalConstraints(virtualMicrophone())
    try await answered.connect()
    try await connected.value
    try call.sendDTMF("7", type: .fpwcsCallDTMFInfo)
    try await waitFor("the INFO digit", timeout: 10) { heard.value.count >= 1 }
    try call.sendDTMF("38", type: .fpwcsCallDTMFRFC2833)
    try await waitFor("three digits", timeout: 10) { heard.value.count >= 3 }
    try await Task.sleep(for: .milliseconds(300))
    XCTAssertEqual(heard.value, ["7i", "3r", "8r"])
    call.hangup()
    try await waitFor("FINISH on both sides") {
      call.getStatus() == .fpwcsCallStatusFinish && answered.getStatus().isTerminal
    }
  }

  /// baresip with Opus takes the gateway's Opus offer: no transcoding, both tones arrive.
  func testOpusOnTheSIPSideIsPassedThroughBothWays() async throws {
    let peer = try BaresipPeer.start(answer: true, recording: true, modules: "module opus.so")
    defer { peer.stop() }
    let server = try startServer()
    defer { server.stop() }
    let (session, call, _) = try await dial(server, "sip:baresip@127.0.0.1:\(peer.port)")
    defer { session.disconnect() }
    try await call.connect()
    let heard = try playedAudio(session, call)
    try await assertPlaysBaresipsTone(heard)
    XCTAssertTrue(peer.output.contains("Set audio encoder: opus"), peer.output)
    let leg = try XCTUnwrap(server.sipLegStatistics().first)
    XCTAssertGreaterThan(leg.packetsToSIP, 25)
    XCTAssertTrue(leg.recentSamples.isEmpty, "no G.711 arrived")
    call.hangup()
    try await waitFor("FINISH") { call.getStatus() == .fpwcsCallStatusFinish }
    try await assertBaresipHeardTheSDKsTone(peer)
  }

  func testNoAnswerUnreachableHostAndUnknownUserFail() async throws {
    let peer = try BaresipPeer.start(answer: false)
    defer { peer.stop() }
    let server = try startServer(noAnswerMillis: 1500)
    defer { server.stop() }

    let (session, ringing, _) = try await dial(server, "sip:baresip@127.0.0.1:\(peer.port)")
    defer { session.disconnect() }
    await assertCallEnds(ringing, .fpwcsCallStatusFailed, info: "Failed by request timeout")

    let unreachable = try makeCall(session, "sip:nobody@127.0.0.1:\(BaresipPeer.freePort())")
    await assertCallEnds(unreachable, .fpwcsCallStatusFailed, info: nil)

    let unknown = try makeCall(session, "sip:someoneelse@127.0.0.1:\(peer.port)")
    await assertCallEnds(unknown, .fpwcsCallStatusFailed, info: nil)
    XCTAssertTrue(unknown.getSipStatus() >= 400 || unknown.getInfo() != nil)
    try await waitFor("no leg left") { server.sipLegStatistics().isEmpty }
  }

  func testBaresipRejectingAfterRingingEndsTheCallWithBusy() async throws {
    let peer = try BaresipPeer.start(answer: false)
    defer { peer.stop() }
    let server = try startServer()
    defer { server.stop() }
    let (session, call, seen) = try await dial(server, "sip:baresip@127.0.0.1:\(peer.port)")
    defer { session.disconnect() }
    try call.call()
    try await waitFor("RING", timeout: 10) { call.getStatus() == .fpwcsCallStatusRing }
    try peer.command("hangup")
    try await waitFor("BUSY", timeout: 10) { call.getStatus().isTerminal }
    XCTAssertEqual(call.getStatus(), .fpwcsCallStatusBusy, "\(call.getInfo() ?? "")")
    XCTAssertEqual(call.getSipStatus(), 486)
    XCTAssertEqual(seen.value.last, .fpwcsCallStatusBusy)
    try await waitFor("no leg left") { server.sipLegStatistics().isEmpty }
  }

  func testHangupFromBaresipEndsTheCallWithFinish() async throws {
    let peer = try BaresipPeer.start(answer: true, hangupAfterSeconds: 2)
    defer { peer.stop() }
    let server = try startServer()
    defer { server.stop() }
    let (session, call, _) = try await dial(server, "sip:baresip@127.0.0.1:\(peer.port)")
    defer { session.disconnect() }
    try await call.connect()
    try await waitFor("FINISH from the far end", timeout: 15) {
      call.getStatus() == .fpwcsCallStatusFinish
    }
    XCTAssertEqual(call.getInfo(), "Normal call clearing")
  }

  func testBaresipCallsTheSessionsLoginAndTheAnsweredCallIsEstablished() async throws {
    let server = try startServer()
    defer { server.stop() }
    let sipPort = try XCTUnwrap(server.sipPort)
    let session = try gatewaySession(server, login: "1001", sipPort: sipPort)
    defer { session.disconnect() }
    let incoming = Locked<[FPWCSApi2Call]>([])
    session.onIncomingCallCallback { call in
      if let call { incoming.withLock { $0.append(call) } }
    }
    try await session.connect()
    let peer = try BaresipPeer.start(answer: true, dial: "sip:1001@127.0.0.1:\(sipPort)")
    defer { peer.stop() }
    try await waitFor("the incoming call", timeout: 15) { !incoming.value.isEmpty }
    let call = try XCTUnwrap(incoming.value.first)
    XCTAssertTrue(call.isIncoming())
    XCTAssertEqual(call.getCaller(), "baresip")
    XCTAssertEqual(call.getStatus(), .fpwcsCallStatusRing)
    XCTAssertFalse(call.hasVideo(), "baresip offered audio only")
    XCTAssertNil(call.getRemoteConstraints()?.video)
    try await call.connect()
    XCTAssertEqual(call.getStatus(), .fpwcsCallStatusEstablished)
    try await waitFor("baresip's tone reaches the gateway", timeout: 10) {
      server.sipLegStatistics().first.map { $0.recentSamples.count >= 4000 } ?? false
    }
    let samples = try XCTUnwrap(server.sipLegStatistics().first).recentSamples
    XCTAssertEqual(Tone.dominantFrequency(samples, rate: 8000), 880, accuracy: 20)
    try await waitFor("audio is bridged both ways", timeout: 10) {
      guard let leg = server.sipLegStatistics().first else { return false }
      return leg.packetsToSIP > 25 && leg.packetsToWebRTC > 25
    }
    call.hangup()
    try await waitFor("FINISH") { call.getStatus() == .fpwcsCallStatusFinish }
  }

  func testFiftyCallsLeaveNoSocketThreadOrLegBehind() async throws {
    let peer = try BaresipPeer.start(answer: true)
    defer { peer.stop() }
    let server = try startServer()
    defer { server.stop() }
    let (session, first, _) = try await dial(server, "sip:baresip@127.0.0.1:\(peer.port)")
    defer { session.disconnect() }
    // The first call opens what stays for the process (libre's thread, the engine's loops).
    try await first.connect()
    first.hangup()
    try await waitFor("first FINISH") { first.getStatus() == .fpwcsCallStatusFinish }
    try await waitFor("no leg") { server.sipLegStatistics().isEmpty }
    let descriptors = ProcessCounters.fileDescriptors
    let threads = ProcessCounters.threads
    for index in 0..<50 {
      let call = try makeCall(session, "sip:baresip@127.0.0.1:\(peer.port)")
      try await call.connect()
      call.hangup()
      try await waitFor("FINISH of call \(index)") { call.getStatus() == .fpwcsCallStatusFinish }
    }
    try await waitFor("no leg left") { server.sipLegStatistics().isEmpty }
    try await waitFor("descriptors back", timeout: 10) {
      ProcessCounters.fileDescriptors <= descriptors + 2
    }
    // Idle dispatch worker threads linger a few seconds after the calls' media work.
    try? await waitFor("threads back", timeout: 15) { ProcessCounters.threads <= threads + 4 }
    XCTAssertLessThanOrEqual(ProcessCounters.threads, threads + 4)
    XCTAssertTrue(session.getCalls().isEmpty)
  }

  /// 50 calls of five outcomes in turn: answered then hung up, rejected with 486 (BUSY),
  /// unanswered until the gateway's 1 s no-answer timeout (FAILED), to a host where nothing
  /// listens (FAILED), and hung up by the SDK while ringing or before any answer (CANCEL,
  /// FINISH). Afterwards no UDP port, descriptor, thread or gateway call leg is left over.
  func testFiftyCallsOfMixedOutcomesLeaveNoPortSocketThreadOrLegBehind() async throws {
    let answering = try BaresipPeer.start(answer: true)
    defer { answering.stop() }
    let ringing = try BaresipPeer.start(answer: false)
    defer { ringing.stop() }
    let server = try startServer(noAnswerMillis: 1000)
    defer { server.stop() }
    let (session, first, _) = try await dial(server, "sip:baresip@127.0.0.1:\(answering.port)")
    defer { session.disconnect() }
    // The first call opens what stays for the process (libre's thread, the engine's loops).
    try await first.connect()
    first.hangup()
    try await waitFor("first FINISH") { first.getStatus() == .fpwcsCallStatusFinish }
    try await waitFor("no leg") { server.sipLegStatistics().isEmpty }
    let ports = ProcessCounters.udpPorts
    XCTAssertTrue(ports.contains(Int(try XCTUnwrap(server.sipPort))), "UDP sockets are seen")
    let descriptors = ProcessCounters.fileDescriptors
    let threads = ProcessCounters.threads
    let nowhere = BaresipPeer.freePort()
    var outcomes: [String: Int] = [:]
    for index in 0..<50 {
      let kind = index % 5
      let target = [answering.port, ringing.port, ringing.port, nowhere, ringing.port][kind]
      let call = try makeCall(session, "sip:baresip@127.0.0.1:\(target)")
      switch kind {
      case 0:
        try await call.connect()
        call.hangup()
      case 1:
        try call.call()
        try await waitFor("RING \(index)", timeout: 10) { call.getStatus() == .fpwcsCallStatusRing }
        try ringing.command("hangup")
      case 4 where index % 2 == 0:
        try call.call()
        try await waitFor("RING \(index)", timeout: 10) { call.getStatus() == .fpwcsCallStatusRing }
        call.hangup()
      case 4:
        // Hung up before baresip's 180: the gateway cancels an INVITE still in progress.
        try call.call()
        call.hangup()
      default:
        try call.call()
      }
      try await waitFor("call \(index) ends", timeout: 10) { call.getStatus().isTerminal }
      outcomes["\(kind) \(call.getStatus())", default: 0] += 1
    }
    XCTAssertEqual(
      outcomes,
      [
        "0 \(kFPWCSCallStatus.fpwcsCallStatusFinish)": 10,
        "1 \(kFPWCSCallStatus.fpwcsCallStatusBusy)": 10,
        "2 \(kFPWCSCallStatus.fpwcsCallStatusFailed)": 10,
        "3 \(kFPWCSCallStatus.fpwcsCallStatusFailed)": 10,
        "4 \(kFPWCSCallStatus.fpwcsCallStatusFinish)": 10,
      ])
    try await waitFor("no leg left") { server.sipLegStatistics().isEmpty }
    try await waitFor("UDP ports back", timeout: 10) { ProcessCounters.udpPorts == ports }
    try await waitFor("descriptors back", timeout: 10) {
      ProcessCounters.fileDescriptors <= descriptors + 2
    }
    // Idle dispatch worker threads linger a few seconds after the calls' media work.
    try? await waitFor("threads back", timeout: 15) { ProcessCounters.threads <= threads + 4 }
    XCTAssertLessThanOrEqual(ProcessCounters.threads, threads + 4)
    XCTAssertTrue(session.getCalls().isEmpty)
    // Every call that rang at baresip ended there: rejected by it, or closed by the gateway's
    // CANCEL (baresip says "session closed").
    try await waitFor("baresip idle", timeout: 10) {
      let output = ringing.output
      func count(_ text: String) -> Int { output.components(separatedBy: text).count - 1 }
      return count("Incoming call from") >= 20
        && count("Incoming call from")
          == count("session closed") + count("rejecting incoming call")
    }
  }

  // MARK: helpers

  /// What the call's connection plays from now on (first channel, the last second at 48 kHz).
  private func playedAudio(_ session: FPWCSApi2Session, _ call: FPWCSApi2Call) throws -> Locked<
    [Int16]
  > {
    let heard = Locked<[Int16]>([])
    let connection = try XCTUnwrap(session.callConnection(call) as? NativeMediaConnection)
    connection.setPlayoutSink(
      PlayoutAudioCallbackSink { frame in
        let mono = stride(from: 0, to: frame.samples.count, by: max(1, frame.channels)).map {
          frame.samples[$0]
        }
        heard.withLock {
          $0 += mono
          if $0.count > 48_000 { $0.removeFirst($0.count - 48_000) }
        }
      })
    return heard
  }

  /// baresip's 880 Hz is what the SDK plays.
  private func assertPlaysBaresipsTone(_ heard: Locked<[Int16]>) async throws {
    try await waitFor("the SDK plays baresip's tone", timeout: 15) {
      let samples = heard.value
      return samples.count >= 24_000
        && Tone.dominantFrequency(Array(samples.suffix(24_000)), rate: 48_000) == 880
    }
    XCTAssertGreaterThan(
      Tone.share(of: 880, in: Array(heard.value.suffix(24_000)), rate: 48_000), 0.5)
  }

  /// What baresip decoded and wrote down (its sndfile module) is the SDK's 440 Hz.
  private func assertBaresipHeardTheSDKsTone(_ peer: BaresipPeer) async throws {
    // libsndfile may hold the last writes until baresip closes the file at the call's end.
    let deadline = Date().addingTimeInterval(5)
    while peer.decodedAudio().samples.count < 8000, Date() < deadline {
      try await Task.sleep(for: .milliseconds(100))
    }
    let decoded = peer.decodedAudio()
    XCTAssertGreaterThanOrEqual(decoded.samples.count, 4000, "half a second at 8 kHz at least")
    let tail = Array(decoded.samples.suffix(Int(decoded.rate)))
    XCTAssertEqual(Tone.dominantFrequency(tail, rate: decoded.rate), 440, accuracy: 20)
  }

  private func assertCallEnds(
    _ call: FPWCSApi2Call, _ status: kFPWCSCallStatus, info: String?,
    file: StaticString = #filePath, line: UInt = #line
  ) async {
    do {
      try await call.connect()
      XCTFail("connect() returned for a call that should fail", file: file, line: line)
    } catch let error as WCSError {
      guard case .callEnded(let ended, let reason) = error else {
        return XCTFail("unexpected \(error)", file: file, line: line)
      }
      XCTAssertEqual(ended, status, "\(reason ?? "")", file: file, line: line)
      if let info { XCTAssertEqual(reason, info, file: file, line: line) }
      XCTAssertFalse((reason ?? "").isEmpty, "a reason is given", file: file, line: line)
    } catch {
      XCTFail("unexpected \(error)", file: file, line: line)
    }
  }

  private func dial(_ server: WCSLocalServer, _ callee: String) async throws -> (
    FPWCSApi2Session, FPWCSApi2Call, Locked<[kFPWCSCallStatus]>
  ) {
    let options = FPWCSApi2SessionOptions()
    options.urlServer = server.wsURL
    options.sipLogin = "1001"
    options.sipDomain = "127.0.0.1"
    options.sipOutboundProxy = "127.0.0.1"
    options.sipPort = 5060
    let session = try FPWCSApi2.createSession(options)
    try await session.connect()
    let call = try makeCall(session, callee)
    let seen = Locked<[kFPWCSCallStatus]>([])
    for status in kFPWCSCallStatus.allCases {
      call.on(status) { _ in seen.withLock { $0.append(status) } }
    }
    return (session, call, seen)
  }

  func makeCall(_ session: FPWCSApi2Session, _ callee: String) throws -> FPWCSApi2Call {
    let options = FPWCSApi2CallOptions()
    options.callee = callee
    options.localConstraints = virtualMicrophone()
    return try session.createCall(options)
  }

  /// Audio only, from the virtual microphone (a 440 Hz tone).
  func virtualMicrophone() -> FPWCSApi2MediaConstraints {
    let constraints = FPWCSApi2MediaConstraints()
    let audio = FPWCSApi2AudioConstraints()
    audio.deviceID = NativeMediaDevices.virtualMicrophoneID
    constraints.audio = audio
    return constraints
  }

  /// A session of SIP user `login` (domain 127.0.0.1) whose calls go to `sipPort` on
  /// 127.0.0.1 (the gateway's own, or a registrar's); with a `password` it registers there.
  func gatewaySession(
    _ server: WCSLocalServer, login: String, sipPort: UInt16, password: String? = nil
  ) throws -> FPWCSApi2Session {
    let options = FPWCSApi2SessionOptions()
    options.urlServer = server.wsURL
    options.sipLogin = login
    options.sipDomain = "127.0.0.1"
    options.sipOutboundProxy = "127.0.0.1"
    options.sipPort = Int(sipPort)
    if let password {
      options.sipAuthenticationName = login
      options.sipPassword = password
      options.sipRegisterRequired = true
    }
    return try FPWCSApi2.createSession(options)
  }

  func startServer(noAnswerMillis: Int64 = 20_000) throws -> WCSLocalServer {
    var configuration = WCSLocalServer.Configuration()
    configuration.wsPort = 0
    configuration.httpPort = 0
    configuration.recordsDirectory =
      FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-sip-\(UUID().uuidString.prefix(8))").path
    configuration.signaling.calls.noAnswerTimeoutMillis = noAnswerMillis
    configuration.sipGateway = SIPGatewayConfiguration()
    let verbose = ProcessInfo.processInfo.environment["WCS_TEST_LOG"] != nil
    configuration.logSink = { line in
      if verbose { FileHandle.standardError.write(Data((line + "\n").utf8)) }
    }
    return try WCSLocalServer.start(configuration)
  }
}

/// A `BaresipProcess` for the call tests: user `baresip`, optionally recording what it decodes.
final class BaresipPeer: Sendable {
  private let process: BaresipProcess

  var port: Int { process.port }

  /// A UDP and TCP port nothing listens on right now.
  static func freePort() -> Int { BaresipProcess.freePort() }

  /// Starts baresip; with `dial`, it calls that URI once ready. With `recording`, baresip's
  /// `sndfile` module writes what it decodes (what the gateway sends it) to `dump-*-dec.wav`
  /// in `recordingDirectory`; with `sipTrace`, its output shows the SIP messages.
  static func start(
    answer: Bool, hangupAfterSeconds: Int? = nil, dial: String? = nil, recording: Bool = false,
    modules: String = "", sipTrace: Bool = false
  ) throws -> BaresipPeer {
    guard BaresipProcess.isInstalled else { throw XCTSkip("baresip is not installed") }
    // `-s` prints every SIP message baresip sends and receives, bodies included.
    var arguments: [String] = sipTrace ? ["-s"] : []
    if let hangupAfterSeconds { arguments += ["-t", "\(hangupAfterSeconds + 2)"] }
    if let dial { arguments += ["-e", "/dial \(dial)"] }
    let sound = FileManager.default.temporaryDirectory
      .appendingPathComponent("baresip-sound-\(UUID().uuidString.prefix(8))")
    let recorder = (recording ? "module sndfile.so\nsnd_path \(sound.path)\n" : "") + modules
    if recording {
      try FileManager.default.createDirectory(at: sound, withIntermediateDirectories: true)
    }
    do {
      return BaresipPeer(
        try BaresipProcess(
          user: "baresip", answer: answer, extraConfig: recorder, arguments: arguments),
        recordingDirectory: sound)
    } catch let failure as BaresipProcess.StartFailure {
      throw XCTSkip(failure.description)
    }
  }

  /// Where `sndfile` writes.
  let recordingDirectory: URL

  private init(_ process: BaresipProcess, recordingDirectory: URL) {
    self.process = process
    self.recordingDirectory = recordingDirectory
  }

  var output: String { process.output }

  /// DTMF digits baresip reported receiving (the start of each event), in order.
  var receivedDigits: String {
    var digits = ""
    for line in output.split(whereSeparator: \.isNewline) {
      guard let range = line.range(of: "received event: '"), line.contains("(end=0)"),
        range.upperBound < line.endIndex
      else { continue }
      digits.append(line[range.upperBound])
    }
    return digits
  }

  /// The audio baresip decoded, from the newest `dump-*-dec.wav` (16-bit PCM, first channel),
  /// and its sample rate; empty when there is none.
  func decodedAudio() -> (samples: [Int16], rate: Double) {
    let names =
      (try? FileManager.default.contentsOfDirectory(atPath: recordingDirectory.path)) ?? []
    guard let name = names.filter({ $0.hasSuffix("-dec.wav") }).sorted().last,
      let data = FileManager.default.contents(
        atPath: recordingDirectory.appendingPathComponent(name).path),
      data.count > 44
    else { return ([], 0) }
    let bytes = [UInt8](data)
    func word(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
    let channels = max(1, word(22))
    let rate = Double(word(24) | word(26) << 16)
    // The data chunk follows the fmt chunk; libsndfile may write others between.
    var offset = 12
    while offset + 8 <= bytes.count,
      String(decoding: bytes[offset..<offset + 4], as: UTF8.self) != "data"
    {
      offset += 8 + (word(offset + 4) | word(offset + 6) << 16)
    }
    offset += 8
    var samples: [Int16] = []
    while offset + 2 * channels <= bytes.count {
      samples.append(Int16(bitPattern: UInt16(word(offset))))
      offset += 2 * channels
    }
    return (samples, rate)
  }

  /// Runs one baresip command (`hangup`, `accept`, `sndcode` with `params` "5", ...) through
  /// `ctrl_tcp`.
  func command(_ name: String, params: String? = nil) throws {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var sin = sockaddr_in()
    sin.sin_family = sa_family_t(AF_INET)
    sin.sin_port = UInt16(process.controlPort).bigEndian
    sin.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &sin) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else { throw XCTSkip("baresip's ctrl_tcp is not reachable") }
    let parameters = params.map { ",\"params\":\"\($0)\"" } ?? ""
    let json = "{\"command\":\"\(name)\"\(parameters),\"token\":\"t\"}"
    let frame = Array("\(json.utf8.count):\(json),".utf8)
    _ = frame.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
    usleep(200_000)
  }

  func stop() {
    if ProcessInfo.processInfo.environment["WCS_TEST_LOG"] != nil {
      FileHandle.standardError.write(Data(("baresip output:\n" + output).utf8))
    }
    process.stop()
    try? FileManager.default.removeItem(at: recordingDirectory)
  }
}

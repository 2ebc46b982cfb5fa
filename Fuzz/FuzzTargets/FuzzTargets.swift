import Foundation
import WCSLocalServer

@testable import WCSApi2
@testable import WCSCodecs
@testable import WCSMedia
@testable import WCSProtocols
@testable import WCSTransport

/// The parsers and state machines fed by the network, one entry per fuzz target: the
/// libFuzzer executables (`Fuzz/Fuzz<Name>`, `scripts/fuzz.sh`) and the crash-regression
/// corpus replay (`FuzzCorpusTests`) call the same code. Each entry takes any bytes, must not
/// crash, and checks a property of what it parsed.
public enum FuzzTarget: String, CaseIterable, Sendable {
  case sdp, stun, turn, rtp, rtcp, vp8, wcsClient = "wcs-client", wcsServer = "wcs-server"
  case webSocket = "websocket"
  case h264, stream, callMedia = "call-media", vp8Decoder = "vp8-decoder", ice, pull

  /// A property that did not hold for an input (a finding, like a crash).
  public struct Violation: Error, CustomStringConvertible {
    /// What did not hold.
    public var description: String
  }

  /// Runs the target on `bytes`. Returns true when the input was accepted (parsed into
  /// something) rather than refused as malformed.
  /// - Throws: `Violation` when a property of the parsed input does not hold.
  public func run(_ bytes: [UInt8]) throws(Violation) -> Bool {
    switch self {
    case .sdp: return try Self.sdp(bytes)
    case .stun: return Self.stun(bytes)
    case .turn: return Self.turn(bytes)
    case .rtp: return try Self.rtp(bytes)
    case .rtcp: return try Self.rtcp(bytes)
    case .vp8: return Self.vp8(bytes)
    case .wcsClient: return try Self.wcsClient(bytes)
    case .wcsServer: return Self.wcsServer(bytes)
    case .webSocket: return try Self.webSocket(bytes)
    case .h264: return try Self.h264(bytes)
    case .stream: return try Self.stream(bytes)
    case .callMedia: return try Self.callMedia(bytes)
    case .vp8Decoder: return try Self.vp8Decoder(bytes)
    case .ice: return try Self.ice(bytes)
    case .pull: return try Self.pull(bytes)
    }
  }

  /// The libFuzzer entry: a violation is a crash, so libFuzzer keeps the input.
  public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
      _ = try run(bytes)
    } catch {
      fatalError("\(rawValue): \(error)")
    }
    return 0
  }

  static func check(_ condition: Bool, _ what: @autoclosure () -> String) throws(Violation) {
    if !condition { throw Violation(description: what()) }
  }

  // MARK: - Targets

  /// Lenient parse, write, parse again: the second write equals the first.
  static func sdp(_ bytes: [UInt8]) throws(Violation) -> Bool {
    let text = String(decoding: bytes, as: UTF8.self)
    guard let first = try? SDPParser.parse(text).description else { return false }
    let written = SDPWriter.write(first)
    guard let second = try? SDPParser.parse(written).description else {
      throw Violation(description: "our own SDP does not parse:\n\(written)")
    }
    let again = SDPWriter.write(second)
    guard again == written else {
      let lines = (written.split(separator: "\r\n"), again.split(separator: "\r\n"))
      let index =
        Array(zip(lines.0, lines.1)).firstIndex { $0 != $1 } ?? min(lines.0.count, lines.1.count)
      let first = index < lines.0.count ? String(lines.0[index]) : "(end)"
      let second = index < lines.1.count ? String(lines.1[index]) : "(end)"
      throw Violation(
        description: "write(parse(write(x))) != write(x) at line \(index + 1): \(first) → \(second)"
          + (ProcessInfo.processInfo.environment["FUZZ_VERBOSE"] != nil
            ? "\n--- first\n\(written)\n--- second\n\(again)" : ""))
    }
    return true
  }

  /// Decode, then every accessor and the integrity and fingerprint checks.
  static func stun(_ bytes: [UInt8]) -> Bool {
    _ = STUNMessage.looksLikeSTUN(bytes)
    guard let message = try? STUNMessage.decode(bytes) else { return false }
    _ = (message.username, message.realm, message.nonce, message.xorPeerAddress, message.data)
    _ = message.messageIntegrity
    try? message.verifyIntegrity(key: stunKey)
    return true
  }

  static let stunKey = STUNIntegrityKey(bytes: Array("password".utf8))

  /// A TURN client's Allocate answered by the input, its transaction ID patched in so the
  /// response reaches the handlers; then the refreshes it schedules.
  static func turn(_ bytes: [UInt8]) -> Bool {
    let server = ICETURNServer(
      address: ICETransportAddress(ip: .loopbackV4, port: 3478), username: "user",
      password: "secret")
    let client = TURNClient(server: server, socket: 1, randomSeed: 7)
    client.start(now: MediaInstant(nanoseconds: 0))
    var accepted = false
    var now = MediaInstant(nanoseconds: 0)
    // Up to 4 responses, split at "\n\n\n\n" so one input can walk the challenge and success.
    for piece in split(bytes, separator: [0x0A, 0x0A, 0x0A, 0x0A]).prefix(4) {
      var response = Array(piece)
      // The request's transaction ID sits at bytes 8..<20 of its header (RFC 8489 §5).
      if let request = client.takeDatagrams().last, request.bytes.count >= 20,
        response.count >= 20
      {
        response.replaceSubrange(8..<20, with: request.bytes[8..<20])
      }
      now += .milliseconds(50)
      accepted = client.receive(response, now: now) || accepted
      _ = client.takeEvents()
    }
    for _ in 0..<3 {
      now += .seconds(600)
      client.handleTimeout(now: now)
      _ = client.takeDatagrams()
    }
    return accepted
  }

  /// Parse (copying and in place), with the header extension elements; serialize and parse
  /// again gives the same packet.
  static func rtp(_ bytes: [UInt8]) throws(Violation) -> Bool {
    let parsed = bytes.withUnsafeBytes { try? RTPHeader.parse($0) }
    _ = parsed?.header.headerExtension?.elements
    guard let packet = try? RTPPacket.parse(bytes) else {
      try check(parsed == nil, "RTPHeader.parse accepts what RTPPacket.parse refuses")
      return false
    }
    try check(parsed != nil, "RTPPacket.parse accepts what RTPHeader.parse refuses")
    _ = packet.header.headerExtension?.elements
    guard let serialized = try? packet.serialized() else { return true }
    guard let again = try? RTPPacket.parse(serialized) else {
      throw Violation(description: "our own RTP packet does not parse: \(serialized)")
    }
    try check(again == packet, "parse(serialize(p)) != p")
    return true
  }

  /// Strict and lenient compound parse agree; serialize → parse keeps every packet.
  static func rtcp(_ bytes: [UInt8]) throws(Violation) -> Bool {
    let lenient = RTCPPacket.parseCompoundLeniently(bytes)
    guard let packets = try? RTCPPacket.parseCompound(bytes) else { return false }
    try check(
      lenient.packets == packets && lenient.skipped.isEmpty && lenient.stoppedBy == nil,
      "the lenient parse differs from a strict parse that succeeded")
    guard let serialized = try? RTCPPacket.serializeCompound(packets) else { return true }
    guard let again = try? RTCPPacket.parseCompound(serialized) else {
      throw Violation(description: "our own RTCP does not parse: \(serialized)")
    }
    try check(again == packets, "parse(serialize(c)) != c")
    return true
  }

  /// Packets split at "\n\n" (2 bytes of sequence number delta, 1 byte flags, payload) into
  /// the depacketizer and a frame assembler; each frame's size read as the recorder does.
  static func vp8(_ bytes: [UInt8]) -> Bool {
    var assembler = VP8FrameAssembler(reorderWindow: 64, maxBufferedPackets: 256)
    var accepted = false
    for packet in videoPackets(bytes) {
      if (try? VP8Depacketizer.parse(packet.payload)) != nil { accepted = true }
      let output = assembler.insert(packet)
      for frame in output.frames {
        _ = frame.frame.data.withUnsafeBufferPointer { VP8KeyFrameHeader.pictureSize($0) }
      }
    }
    return accepted
  }

  /// Each line a WCS message: codec round trip, then into a connected `SessionCore`.
  static func wcsClient(_ bytes: [UInt8]) throws(Violation) -> Bool {
    let core = SessionCore(config: SessionConnectionConfig())
    _ = core.connect()
    _ = core.transportOpened()
    var accepted = false
    for line in split(bytes, separator: [0x0A]).prefix(256) {
      let text = String(decoding: line, as: UTF8.self)
      if let message = try? WCSMessageCodec.decode(text) {
        accepted = true
        let again = try? WCSMessageCodec.decode(WCSMessageCodec.encode(message))
        try check(again == message, "decode(encode(m)) != m for \(text)")
      }
      _ = core.receive(text)
    }
    _ = core.disconnect()
    return accepted
  }

  /// Each line a client message to a `WCSServerCore` with two sessions (the second plays),
  /// media answered at once; then time passes and both close.
  static func wcsServer(_ bytes: [UInt8]) -> Bool {
    var configuration = WCSServerConfiguration()
    configuration.maxStreamsPerSession = 8
    let core = WCSServerCore(configuration: configuration)
    var now: Int64 = 1_700_000_000_000
    var accepted = false
    func run(_ actions: [WCSServerAction]) {
      for case .media(let request) in actions {
        switch request {
        case .createPublisher(let publisher):
          run(core.answerReady(mediaSessionId: publisher.mediaSessionId, sdp: "v=0", now: now))
          run(core.mediaConnected(mediaSessionId: publisher.mediaSessionId, now: now))
        case .createPlayer(let player):
          run(core.answerReady(mediaSessionId: player.mediaSessionId, sdp: "v=0", now: now))
          run(core.mediaConnected(mediaSessionId: player.mediaSessionId, now: now))
        case .releaseMedia(let id, let recordName?):
          run(core.recordingFinished(mediaSessionId: id, recordName: recordName, now: now))
        default: break
        }
      }
      if actions.contains(where: { if case .send = $0 { true } else { false } }) {
        accepted = true
      }
    }
    run(core.connectionOpened(1, remoteAddress: "127.0.0.1:1000", now: now))
    run(core.connectionOpened(2, remoteAddress: "127.0.0.1:1001", now: now))
    for (index, line) in split(bytes, separator: [0x0A]).prefix(256).enumerated() {
      now += 10
      // A leading 0x02 sends the line from the second session.
      let second = line.first == 0x02
      let text = String(decoding: second ? line.dropFirst() : line, as: UTF8.self)
      run(core.textReceived(second ? 2 : 1, text, now: now))
      if index % 16 == 15 { run(core.tick(now: now)) }
    }
    now += 600_000
    run(core.tick(now: now))
    run(core.connectionClosed(1, now: now))
    run(core.connectionClosed(2, now: now))
    return accepted
  }

  /// Pieces split at "\n\n" (first byte flags: 1 first, 2 last, 4 binary) into an assembler
  /// with a 4 KiB limit: a message is never over it and is the pieces joined.
  static func webSocket(_ bytes: [UInt8]) throws(Violation) -> Bool {
    var assembler = WebSocketMessageAssembler(maximumSize: 4096)
    var expected: [UInt8] = []
    var accepted = false
    for piece in split(bytes, separator: [0x0A, 0x0A]).prefix(1024) {
      guard let flags = piece.first else { continue }
      let body = Array(piece.dropFirst())
      if flags & 1 != 0 { expected = [] }
      expected += body
      do {
        let message = try body.withUnsafeBytes {
          (raw) throws(WebSocketMessageAssembler.Failure) in
          try assembler.append(
            raw, first: flags & 1 != 0, last: flags & 2 != 0, binary: flags & 4 != 0)
        }
        if let message {
          accepted = true
          try check(message.bytes.count <= 4096, "message over the limit")
          try check(message.bytes == expected, "message is not its pieces joined")
          expected = []
        }
      } catch let failure as Violation {
        throw failure
      } catch {
        try check(expected.count > 4096, "refused a message within the limit")
        expected = []
      }
    }
    return accepted
  }

  /// Packets split at "\n\n" (1 byte of sequence number delta plus 2, 1 byte flags: 1 marker,
  /// 2 next timestamp, then the payload), the input of the `vp8` and `h264` targets.
  static func videoPackets(_ bytes: [UInt8]) -> [VP8FrameAssembler.Packet] {
    var sequence: UInt16 = 65_500
    var timestamp: UInt32 = 0
    var packets: [VP8FrameAssembler.Packet] = []
    for piece in split(bytes, separator: [0x0A, 0x0A]).prefix(512) {
      guard piece.count >= 3 else { continue }
      let start = piece.startIndex
      sequence &+= UInt16(piece[start]) &- 2
      let flags = piece[start + 1]
      if flags & 0x02 != 0 { timestamp &+= 3000 }
      packets.append(
        VP8FrameAssembler.Packet(
          sequenceNumber: sequence, timestamp: timestamp, marker: flags & 0x01 != 0,
          payload: Array(piece.dropFirst(2))))
    }
    return packets
  }

  /// `bytes` split at every occurrence of `separator` (an input without one is one piece).
  public static func split(_ bytes: [UInt8], separator: [UInt8]) -> [ArraySlice<UInt8>] {
    var pieces: [ArraySlice<UInt8>] = []
    var start = 0
    var index = 0
    while index + separator.count <= bytes.count {
      if bytes[index..<index + separator.count].elementsEqual(separator) {
        pieces.append(bytes[start..<index])
        index += separator.count
        start = index
      } else {
        index += 1
      }
    }
    pieces.append(bytes[start...])
    return pieces
  }
}

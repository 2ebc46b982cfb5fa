import WCSLocalServer

/// A media engine that answers every offer with `answerSDP` and, when `autoConnect` is on,
/// reports the stream connected right away (opus + VP8).
final class FakeMediaEngine: LocalServerMediaEngine {
  static let answerSDP =
    "v=0\r\no=Flashphoner 0 1 IN IP4 127.0.0.1\r\ns=Flashphoner/1.0\r\nt=0 0\r\n"
    + "a=ice-lite\r\nm=audio 31004 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 127.0.0.1\r\n"
    + "a=candidate:1 1 udp 2130706431 127.0.0.1 31004 typ host\r\na=end-of-candidates\r\n"
  static let codecs = LocalServerMediaCodecs(audioCodec: "opus", videoCodec: "VP8")

  var autoConnect = true
  /// The codecs reported when a stream connects.
  var codecs = FakeMediaEngine.codecs
  /// What a `snapshot` request gets: these bytes as its PNG, or (nil) a failure.
  var snapshotPNG: [UInt8]?
  private(set) var requests: [LocalServerMediaRequest] = []
  /// Ids with media the engine holds (created, not yet released).
  private(set) var live: Set<String> = []
  private var events: [LocalServerMediaEvent] = []

  func perform(_ request: LocalServerMediaRequest) {
    requests.append(request)
    switch request {
    case .createPublisher(let publisher): start(publisher.mediaSessionId)
    case .createPlayer(let player): start(player.mediaSessionId)
    case .releaseMedia(let id, let recordName):
      live.remove(id)
      if let recordName {
        events.append(.recordingFinished(mediaSessionId: id, recordName: recordName))
      }
    case .requestKeyFrame: break
    case .snapshot(_, let requestId):
      if let snapshotPNG {
        events.append(.snapshotTaken(requestId: requestId, png: snapshotPNG))
      } else {
        events.append(.snapshotFailed(requestId: requestId, reason: "fake engine"))
      }
    }
  }

  func takeEvents() -> [LocalServerMediaEvent] {
    defer { events.removeAll() }
    return events
  }

  private func start(_ id: String) {
    live.insert(id)
    events.append(.answerReady(mediaSessionId: id, sdp: Self.answerSDP))
    if autoConnect { events.append(.connected(mediaSessionId: id, codecs: codecs)) }
  }
}

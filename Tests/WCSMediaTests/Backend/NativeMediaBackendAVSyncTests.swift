import Foundation
import XCTest

@testable import WCSDevices
@testable import WCSEngine
@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSMediaSeam

/// Lip sync end to end: the virtual camera and a chirping virtual microphone published and played
/// through two `NativeMediaConnection`s and a loopback relay on 127.0.0.1, with and without
/// `synchronizesPlayout`. The played offset is measured from what came out, not from the
/// synchronizer: each rendered picture's capture time from its RTP timestamp on the publisher's
/// media clock, and the played sound's capture time by cross-correlating it with the chirp the
/// microphone generated on that clock.
final class NativeMediaBackendAVSyncTests: XCTestCase {
  /// 200 → 1800 Hz over 2 s: a 0.5 s window matches one place within any 2 s.
  static let chirp = VirtualMicrophone.Signal.chirp(from: 200, to: 1800, period: 2)

  struct RenderedPicture: Sendable {
    var rtpTimestamp: UInt32
    var at: ContinuousClock.Instant
  }

  struct PlayedBlock: Sendable {
    var samples: [Int16]
    var at: ContinuousClock.Instant
  }

  /// One publisher → relay → player call, recording when each picture and audio block came out.
  final class Call: Sendable {
    let loop: EventLoop
    let publisher: NativeMediaConnection
    let player: NativeMediaConnection
    let relay: LoopbackRelay
    let pictures = BackendTestBox<[RenderedPicture]>([])
    let blocks = BackendTestBox<[PlayedBlock]>([])
    let states = BackendTestBox<[MediaConnectionState]>([])

    init(synchronizes: Bool, label: String) throws {
      loop = EventLoop(label: label)
      var configuration = NativeMediaBackend.Configuration(loop: loop, peerConnection: .loopback)
      configuration.synchronizesPlayout = synchronizes
      configuration.virtualMicrophoneSignal = NativeMediaBackendAVSyncTests.chirp
      let backend = NativeMediaBackend(configuration: configuration)
      let pictures = pictures
      let blocks = blocks
      let states = states
      guard
        let publisher = try backend.makeConnection(
          MediaConnectionRequest(
            direction: .publish, audio: .init(),
            video: .init(maxWidth: 320, maxHeight: 240, maxFrameRate: 30)),
          onStateChange: { state in states.mutate { $0.append(state) } })
          as? NativeMediaConnection,
        let player = try backend.makeConnection(
          MediaConnectionRequest(
            direction: .play, audio: .init(), video: .init(),
            renderer: VideoFrameCallbackRenderer { frame in
              let at = ContinuousClock.now
              let rtp = UInt32(truncatingIfNeeded: (frame.timestampNs * 9 + 50_000) / 100_000)
              pictures.mutate { $0.append(RenderedPicture(rtpTimestamp: rtp, at: at)) }
            }), onStateChange: { state in states.mutate { $0.append(state) } })
          as? NativeMediaConnection
      else { throw MediaBackendError.unavailable("not a NativeMediaConnection") }
      self.publisher = publisher
      self.player = player
      relay = LoopbackRelay(loop: loop)
      // Video (VP8 96, its RTX 97 in our offer) takes a 150 ms longer path: without sync the
      // streams then differ by more than the loopback's own, run-dependent difference.
      relay.rtpDelay = { payloadType in [96, 97].contains(payloadType) ? .milliseconds(150) : nil }
      player.setPlayoutSink(
        PlayoutAudioCallbackSink { frame in
          let at = ContinuousClock.now
          blocks.mutate { $0.append(PlayedBlock(samples: frame.samples, at: at)) }
        })
    }

    func connect(_ test: XCTestCase) throws {
      try test.apply(
        answer: try relay.answerPublisher(try test.offer(of: publisher)), to: publisher)
      try test.apply(answer: try relay.answerPlayer(try test.offer(of: player)), to: player)
    }

    func close() {
      publisher.close()
      player.close()
      relay.close()
    }
  }

  /// What came out of one call in its last second.
  struct Measurement {
    /// Median capture-to-render delay of the pictures, seconds.
    var videoDelay: Double
    /// Capture-to-play delay of the sound, seconds.
    var audioDelay: Double
    /// Normalised correlation of the played sound with the chirp at the match.
    var correlation: Double
    /// Video later than audio, seconds (positive: audio ahead).
    var offset: Double { videoDelay - audioDelay }
  }

  func measure(_ call: Call) throws -> Measurement {
    let origin = call.publisher.mediaClock.origin
    let videoOffset = try XCTUnwrap(
      call.publisher.loop.submit { call.publisher.publishSession?.videoSend?.timestampOffset })
    func seconds(_ instant: ContinuousClock.Instant) -> Double {
      (MediaInstant(instant) - origin).seconds
    }

    // Sound: 0.5 s windows (25 blocks) in the last 1.5 s; the best-matching one counts (a
    // window where the sync delay moved a step matches the chirp less well).
    let blocks = call.blocks.value
    XCTAssertGreaterThanOrEqual(blocks.count, 100)
    let microphone = VirtualMicrophone(signal: Self.chirp)
    var best: (playedAt: Double, delay: Double, score: Double)?
    for first in [blocks.count - 75, blocks.count - 50, blocks.count - 25] {
      let window = Array(blocks[first..<first + 25])
      // Blocks handed over together play back to back: the window starts at the median of each
      // block's hand-over time less its place in the window.
      let starts = window.enumerated().map { seconds($0.element.at) - Double($0.offset) * 0.02 }
        .sorted()
      let playedAt = starts[starts.count / 2]
      let played = decimate(window.flatMap(\.samples))
      // The chirp from 1.2 s before that time to it, regenerated on the publisher's clock.
      let firstFrame = max(0, Int((playedAt - 1.2) * 50))
      let lastFrame = Int(playedAt * 50) + 26
      let source = decimate((firstFrame...lastFrame).flatMap { microphone.frame($0).samples })
      guard let match = bestMatch(of: played, in: source) else { continue }
      let capturedAt = (Double(firstFrame) * 960 + Double(match.lag) * 6) / 48_000
      if match.score > best?.score ?? -1 { best = (playedAt, playedAt - capturedAt, match.score) }
    }
    let sound = try XCTUnwrap(best)
    let playedAt = sound.playedAt
    let audioDelay = sound.delay

    // Pictures rendered over the same second.
    let from = playedAt - 0.5
    let to = playedAt + 0.5
    let delays = call.pictures.value.compactMap { picture -> Double? in
      let at = seconds(picture.at)
      guard at >= from, at <= to else { return nil }
      return at - Double(picture.rtpTimestamp &- videoOffset) / 90_000
    }.sorted()
    XCTAssertGreaterThan(delays.count, 10, "pictures rendered in the measured second")
    let videoDelay = try XCTUnwrap(delays.isEmpty ? nil : delays[delays.count / 2])
    return Measurement(videoDelay: videoDelay, audioDelay: audioDelay, correlation: sound.score)
  }

  /// Averages of 6 samples: 48 → 8 kHz, enough for a chirp below 2 kHz.
  func decimate(_ samples: [Int16]) -> [Double] {
    stride(from: 0, to: samples.count - 5, by: 6).map { start in
      Double((start..<start + 6).reduce(0) { $0 + Int(samples[$1]) }) / 6
    }
  }

  func bestMatch(of window: [Double], in source: [Double]) -> (lag: Int, score: Double)? {
    let windowEnergy = window.reduce(0) { $0 + $1 * $1 }
    guard windowEnergy > 0, source.count > window.count else { return nil }
    var best: (lag: Int, score: Double)?
    window.withUnsafeBufferPointer { w in
      source.withUnsafeBufferPointer { s in
        for lag in 0...(s.count - w.count) {
          var dot = 0.0
          var energy = 0.0
          for index in 0..<w.count {
            let value = s[lag + index]
            dot += w[index] * value
            energy += value * value
          }
          guard energy > 0 else { continue }
          let score = dot / (windowEnergy * energy).squareRoot()
          if score > (best?.score ?? -.infinity) { best = (lag, score) }
        }
      }
    }
    return best
  }

  func testPlayedAudioAndVideoAreInSyncOnlyWithSynchronization() throws {
    let synchronized = try Call(synchronizes: true, label: "AVSync.on")
    let unsynchronized = try Call(synchronizes: false, label: "AVSync.off")
    defer {
      synchronized.close()
      unsynchronized.close()
    }
    try synchronized.connect(self)
    try unsynchronized.connect(self)
    // 5 s of sound: the SRs go out every second and the synchronizer acts on the second ones.
    waitForBackend("5 s of audio played", timeout: 40) {
      synchronized.blocks.value.count >= 250 && unsynchronized.blocks.value.count >= 250
    }
    let on = try measure(synchronized)
    let off = try measure(unsynchronized)
    let sync = try XCTUnwrap(synchronized.player.loop.submit { synchronized.player.playoutSync })
      .snapshot
    let summary = String(
      format:
        "with sync: video %.0f ms, audio %.0f ms, offset %+.0f ms (corr %.2f; extra audio %.0f ms, "
        + "video %.0f ms); without: video %.0f ms, audio %.0f ms, offset %+.0f ms (corr %.2f)",
      on.videoDelay * 1000, on.audioDelay * 1000, on.offset * 1000, on.correlation,
      sync.audioExtraDelay.seconds * 1000, sync.videoExtraDelay.seconds * 1000,
      off.videoDelay * 1000, off.audioDelay * 1000, off.offset * 1000, off.correlation)
    print(summary)
    XCTAssertGreaterThan(on.correlation, 0.6, summary)
    XCTAssertGreaterThan(off.correlation, 0.6, summary)
    XCTAssertNil(unsynchronized.player.loop.submit { unsynchronized.player.playoutSync })
    // Without sync the paths differ by the video's longer path (and the loopback's own).
    XCTAssertGreaterThan(abs(off.offset), 0.040, summary)
    XCTAssertLessThanOrEqual(abs(on.offset), 0.040, summary)
    XCTAssertNotNil(sync.relativeDelay, summary)
  }
}

import Foundation
import Synchronization
import TestSupport
import XCTest

@testable import WCSCodecs
@testable import WCSEngine
@testable import WCSMedia
@testable import WCSMediaSeam
@testable import WCSProtocols

/// Hostile renderers of the video track: each picture decoded into the planes of the one
/// rendered before (`VideoDecodePipeline.recycle`), the pipeline's `Output` kept between calls
/// and frames moved out of it, and the lip sync's `VideoRenderQueue` releasing through
/// `hasDue`/`takeOldest`. A stream whose picture size changes in the middle (161x121, 96x64,
/// 160x120), with a damaged delta frame and a key frame libvpx rejects (so the spare waits over
/// a failed decode and a skipped segment), numbered across the 16-bit wrap, a few frames per
/// call, is played through tracks whose renderers keep every picture, every third, only one
/// plane (or a slice of one), or change their own copy; straight to the renderer, through the
/// render queue with no delay, and held by a four-second delay in a queue of three (frames
/// leaving by the capacity, the oldest taken from the front). Every picture rendered is the reference pipeline's
/// (`ReferenceVideoDecodePipeline`, fresh planes per picture) with its capture time, in order,
/// and nothing a renderer kept ever changes.
final class RecycledPictureRendererTests: XCTestCase {
  enum Policy: CaseIterable {
    case keepAll, keepEveryThird, keepPlanes, changeOwnCopy, keepNothing
  }

  enum Path: CaseIterable {
    case direct, renderQueue, held
  }

  private final class Renderer: VideoRenderer {
    struct State {
      var rendered = 0
      var problems: [String] = []
      var keptFrames: [(index: Int, frame: VideoFrame, expected: VideoFrame)] = []
      var keptPlanes: [(index: Int, plane: Data, expected: [UInt8])] = []
    }
    let expected: [(picture: VideoFrame, rtpTimestamp: UInt32)]
    let policy: Policy
    let state = Mutex(State())

    init(expected: [(picture: VideoFrame, rtpTimestamp: UInt32)], policy: Policy) {
      self.expected = expected
      self.policy = policy
    }

    static func scribble(_ frame: inout VideoFrame) {
      frame.dataY.withUnsafeMutableBytes { bytes in
        for index in bytes.indices { bytes[index] = 0xA5 }
      }
      frame.dataU[frame.dataU.startIndex] ^= 0xFF
    }

    func render(_ frame: VideoFrame) {
      state.withLock { state in
        let index = state.rendered
        state.rendered += 1
        guard index < expected.count else {
          state.problems.append("picture \(index): more than the reference's")
          return
        }
        var want = expected[index].picture
        want.timestampNs = Int64(expected[index].rtpTimestamp) * 100_000 / 9
        if frame != want { state.problems.append("picture \(index) unlike the reference's") }
        if frame.dataY.startIndex != 0 || frame.dataU.startIndex != 0
          || frame.dataV.startIndex != 0
        {
          state.problems.append("picture \(index): a plane does not start at index 0")
        }
        switch policy {
        case .keepAll:
          state.keptFrames.append((index, frame, want))
        case .keepEveryThird:
          if index % 3 == 0 { state.keptFrames.append((index, frame, want)) }
        case .keepPlanes:
          state.keptPlanes.append((index, frame.dataU, [UInt8](want.dataU)))
          if index % 2 == 0 {
            let slice = frame.dataY[(frame.dataY.startIndex + 1)..<(frame.dataY.endIndex - 1)]
            state.keptPlanes.append(
              (index, slice, Array([UInt8](want.dataY).dropFirst().dropLast())))
          }
        case .changeOwnCopy:
          var mine = frame
          Self.scribble(&mine)
          if index % 2 == 0 {
            var mineExpected = want
            Self.scribble(&mineExpected)
            state.keptFrames.append((index, mine, mineExpected))
            state.keptFrames.append((index, frame, want))
          }
        case .keepNothing:
          break
        }
      }
    }
  }

  /// The stream's packets in calls of a few frames, and what the reference pipeline makes of
  /// them (pictures in render order with their RTP timestamps).
  private static func stream() throws -> (
    batches: [[ReceivedRTPPacket]], expected: [(picture: VideoFrame, rtpTimestamp: UInt32)],
    now: MediaInstant, decodeErrors: Int
  ) {
    let encoded = try SizeChangingVP8Source.encode(
      [(161, 121, 16), (96, 64, 8), (161, 121, 12), (160, 120, 8), (161, 121, 8)],
      seed: 0x7EAC_4E05)
    var packetizer = VP8Packetizer(maxPayloadSize: 300, initialPictureID: 0x7FF8)
    var sequence: UInt16 = 65_520
    let now = MediaInstant.now()
    var batches: [[ReceivedRTPPacket]] = []
    var random = SplitMix64(seed: 0xCA11_5EED)
    var keyFrames = 0
    for (index, frame) in encoded.enumerated() {
      var payloads = packetizer.packetize(frame)
      if frame.isKeyFrame { keyFrames += 1 }
      if index == 14, let last = payloads.indices.last, payloads[last].payload.count > 12 {
        // A damaged delta frame: libvpx rejects it or decodes a damaged picture.
        payloads[last].payload[payloads[last].payload.count / 2] ^= 0x5C
      }
      if frame.isKeyFrame, keyFrames == 2, payloads[0].payload.count > 7 {
        // The 96x64 segment's key frame with a first partition longer than the frame (the
        // frame tag after the 4-byte descriptor; the picture size left alone): libvpx rejects
        // it, and its delta frames are dropped.
        payloads[0].payload[4] |= 0xE0
        payloads[0].payload[5] = 0xFF
        payloads[0].payload[6] = 0xFF
      }
      // A few frames per call (a new call one frame in three): a call that decodes several
      // renders them in decode order.
      if batches.isEmpty || Int.random(in: 0..<3, using: &random) == 0 { batches.append([]) }
      batches[batches.count - 1].append(
        contentsOf: payloads.map { payload in
          defer { sequence &+= 1 }
          return ReceivedRTPPacket(
            packet: RTPPacket(
              header: RTPHeader(
                marker: payload.marker, payloadType: 96, sequenceNumber: sequence,
                timestamp: payload.timestamp, ssrc: 0x4F4F),
              payload: payload.payload),
            arrival: now)
        })
    }
    let reference = try ReferenceVideoDecodePipeline<VideoFrame> { decoder, data throws(VP8Error) in
      try decoder.decodeVideoFrame(data)
    }
    var expected: [(picture: VideoFrame, rtpTimestamp: UInt32)] = []
    for batch in batches {
      for frame in reference.handle(batch, now: now).frames {
        expected.append((frame.picture, frame.rtpTimestamp))
      }
    }
    return (batches, expected, now, reference.statistics.decodeErrors)
  }

  private static func track(_ renderer: Renderer, path: Path) throws -> VideoReceiveTrack {
    switch path {
    case .direct:
      return try VideoReceiveTrack(renderer: renderer, onKeyFrameNeeded: {})
    case .renderQueue:
      // No SR: no extra delay, each frame leaves the queue as it is decoded.
      return try VideoReceiveTrack(
        renderer: renderer, playoutSync: PlayoutSync(), onKeyFrameNeeded: {})
    case .held:
      // Audio captured 4.5 s before the video it plays with: video gets the cap, 4 s, at once.
      let sync = PlayoutSync(configuration: .init(maxExtraDelay: .seconds(4)))
      sync.senderReport(
        isVideo: false, (NTPTimestamp(seconds: 3_000_000_000), 0), clockRate: 48_000)
      sync.senderReport(
        isVideo: true, (NTPTimestamp(seconds: 3_000_000_004.5), 0), clockRate: 90_000)
      _ = sync.audioPlayed(
        timestamp: PlayoutSync.opusEncoderDelay, appliedExtraDelay: .zero, at: .now())
      sync.videoRendered(rtpTimestamp: 0, heldFor: .zero, at: .now())
      XCTAssertGreaterThanOrEqual(sync.videoExtraDelay, .seconds(3))
      let track = try VideoReceiveTrack(
        renderer: renderer, playoutSync: sync, onKeyFrameNeeded: {})
      track.renderQueue = VideoRenderQueue(capacity: 3)
      return track
    }
  }

  func testRecycledPicturesAreTheReferencesAndKeptOnesNeverChange() throws {
    let stream = try Self.stream()
    XCTAssertGreaterThan(stream.decodeErrors, 0, "the cut key frame is rejected")
    XCTAssertGreaterThan(stream.expected.count, 40)
    XCTAssertEqual(
      Set(stream.expected.map { "\($0.picture.width)x\($0.picture.height)" }),
      ["161x121", "160x120"])
    for path in Path.allCases {
      for policy in Policy.allCases {
        let context = "\(path), \(policy)"
        let renderer = Renderer(expected: stream.expected, policy: policy)
        let track = try Self.track(renderer, path: path)
        for batch in stream.batches { track.handle(batch, now: stream.now) }
        track.queue.sync {}
        // Held: the last three wait out the delay in the queue.
        let rendered = stream.expected.count - (path == .held ? 3 : 0)
        let state = renderer.state.withLock { $0 }
        XCTAssertEqual(state.rendered, rendered, context)
        XCTAssertEqual(state.problems, [], context)
        for kept in state.keptFrames {
          XCTAssertTrue(
            kept.frame == kept.expected, "\(context): kept picture \(kept.index) changed")
        }
        for kept in state.keptPlanes {
          XCTAssertTrue(
            [UInt8](kept.plane) == kept.expected, "\(context): kept plane of \(kept.index) changed")
        }
        switch policy {
        case .keepAll, .changeOwnCopy: XCTAssertGreaterThan(state.keptFrames.count, 20, context)
        case .keepPlanes: XCTAssertGreaterThan(state.keptPlanes.count, 40, context)
        default: break
        }
        XCTAssertTrue(track.queue.sync { track.receiver.hasSparePicture }, context)
        track.stop()
      }
    }
  }
}

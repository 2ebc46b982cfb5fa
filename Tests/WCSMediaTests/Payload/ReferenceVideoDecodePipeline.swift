import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSMedia
@testable import WCSProtocols

/// The decode pipeline as it was (main at 88fef47), as the reference: each call collects the
/// assembler's frames (a new array of bytes each, from the dictionary-based reference assembler)
/// and decodes them after, with instants kept as `MediaInstant`s.
final class ReferenceVideoDecodePipeline<Picture> {
  struct Frame {
    var picture: Picture
    var rtpTimestamp: UInt32
    var isKeyFrame: Bool
    var arrivalTime: MediaInstant
    var renderTime: MediaInstant
  }

  struct Output {
    var frames: [Frame] = []
    var needsKeyFrame = false
  }

  private(set) var statistics = VideoDecodePipelineStatistics()
  /// Frames of more than one packet decoded or dropped (how much the join was exercised).
  private(set) var multiPacketFrames = 0

  private var assembler: ReferenceVP8FrameAssembler
  private let decoder: VP8Decoder
  private let decodePicture: (VP8Decoder, [UInt8]) throws(VP8Error) -> Picture?
  private var waitingForKeyFrame = false
  private var firstRenderAt: MediaInstant?
  private var lastRenderAt: MediaInstant?
  private var lastProgressAt: MediaInstant?
  private let stallTimeout: MediaDuration

  init(
    reorderWindow: Int = 64, stallTimeout: Duration = .milliseconds(500),
    decodePicture: @escaping (VP8Decoder, [UInt8]) throws(VP8Error) -> Picture?
  ) throws(VP8Error) {
    self.stallTimeout = MediaDuration(stallTimeout)
    self.decodePicture = decodePicture
    assembler = ReferenceVP8FrameAssembler(reorderWindow: reorderWindow, maxBufferedPackets: 2048)
    decoder = try VP8Decoder()
  }

  func handle(_ packets: [ReceivedRTPPacket], now: MediaInstant) -> Output {
    var output = Output()
    for index in packets.indices {
      let dropsBefore = assembler.discardedFrames
      let assembled = assembler.insert(
        VP8FrameAssembler.Packet(
          sequenceNumber: packets[index].packet.header.sequenceNumber,
          timestamp: packets[index].packet.header.timestamp,
          marker: packets[index].packet.header.marker, payload: packets[index].packet.payload))
      statistics.framesDropped += assembler.discardedFrames - dropsBefore
      if assembled.dropped != nil { statistics.malformedPackets += 1 }
      if assembled.needsKeyFrame { output.needsKeyFrame = true }
      for frame in assembled.frames {
        if frame.firstSequenceNumber != frame.lastSequenceNumber { multiPacketFrames += 1 }
        decode(frame.frame, arrival: packets[index].arrival, now: now, into: &output)
      }
    }
    if !output.frames.isEmpty {
      lastProgressAt = now
    } else if !packets.isEmpty {
      let since = lastProgressAt ?? now
      lastProgressAt = since
      if now - since > stallTimeout {
        output.needsKeyFrame = true
        lastProgressAt = now
      }
    }
    return output
  }

  private func decode(
    _ frame: EncodedVideoFrame, arrival: MediaInstant, now: MediaInstant,
    into output: inout Output
  ) {
    if waitingForKeyFrame && !frame.isKeyFrame {
      statistics.framesDropped += 1
      return
    }
    do {
      let picture = try CodecCPUTime.measure(into: &statistics.decodeCPUTime) {
        () throws(VP8Error) -> Picture? in try decodePicture(decoder, frame.data)
      }
      guard let picture else { return }
      waitingForKeyFrame = false
      statistics.framesDecoded += 1
      if frame.isKeyFrame { statistics.keyFramesDecoded += 1 }
      let renderedAt = max(now, lastRenderAt ?? now)
      if let lastRenderAt {
        let gap = (renderedAt - lastRenderAt).seconds
        statistics.longestGap = max(statistics.longestGap, gap)
        if gap > VideoDecodePipelineStatistics.freezeThreshold { statistics.freezes += 1 }
      }
      firstRenderAt = firstRenderAt ?? renderedAt
      lastRenderAt = renderedAt
      if let firstRenderAt, statistics.framesDecoded > 1 {
        let span = (renderedAt - firstRenderAt).seconds
        if span > 0 { statistics.framesPerSecond = Double(statistics.framesDecoded - 1) / span }
      }
      output.frames.append(
        Frame(
          picture: picture, rtpTimestamp: frame.timestamp, isKeyFrame: frame.isKeyFrame,
          arrivalTime: arrival, renderTime: now))
    } catch {
      statistics.decodeErrors += 1
      statistics.framesDropped += 1
      waitingForKeyFrame = true
      output.needsKeyFrame = true
    }
  }
}

extension ReferenceVideoDecodePipeline.Frame {
  /// The reference's view of a frame from `VideoDecodePipeline`.
  init(_ frame: VideoDecodePipeline<Picture>.Frame) {
    self.init(
      picture: frame.picture, rtpTimestamp: frame.rtpTimestamp, isKeyFrame: frame.isKeyFrame,
      arrivalTime: frame.arrivalTime, renderTime: frame.renderTime)
  }
}

extension ReferenceVideoDecodePipeline where Picture: Equatable {
  /// Asserts that a call's `frames` and key frame request are the reference's `expected`, frame
  /// by frame: pictures (compared without printing them when they differ, under
  /// `pictureContext`, else `context`), timestamps, key flags, arrival and render instants.
  func assertSame(
    _ frames: [Frame], needsKeyFrame: Bool, as expected: Output, context: String,
    pictureContext: String? = nil, file: StaticString = #filePath, line: UInt = #line
  ) {
    XCTAssertEqual(needsKeyFrame, expected.needsKeyFrame, context, file: file, line: line)
    XCTAssertEqual(frames.count, expected.frames.count, context, file: file, line: line)
    for (frame, want) in zip(frames, expected.frames) {
      XCTAssertTrue(
        frame.picture == want.picture, pictureContext ?? context, file: file, line: line)
      XCTAssertEqual(frame.rtpTimestamp, want.rtpTimestamp, context, file: file, line: line)
      XCTAssertEqual(frame.isKeyFrame, want.isKeyFrame, context, file: file, line: line)
      XCTAssertEqual(frame.arrivalTime, want.arrivalTime, context, file: file, line: line)
      XCTAssertEqual(frame.renderTime, want.renderTime, context, file: file, line: line)
    }
  }

  /// `assertSame` for an output of `VideoDecodePipeline`.
  func assertSame(
    _ output: VideoDecodePipeline<Picture>.Output, as expected: Output, context: String,
    pictureContext: String? = nil, file: StaticString = #filePath, line: UInt = #line
  ) {
    assertSame(
      output.frames.map { Frame($0) }, needsKeyFrame: output.needsKeyFrame, as: expected,
      context: context, pictureContext: pictureContext, file: file, line: line)
  }

  /// Whether `statistics` are the reference's, all but the CPU time measured (asserted).
  func assertSameStatistics(
    _ statistics: VideoDecodePipelineStatistics, context: String,
    file: StaticString = #filePath, line: UInt = #line
  ) -> Bool {
    var statistics = statistics
    var wanted = self.statistics
    statistics.decodeCPUTime = 0
    wanted.decodeCPUTime = 0
    XCTAssertEqual(statistics, wanted, context, file: file, line: line)
    return statistics == wanted
  }
}

extension VideoDecodePipeline where Picture == I420Image {
  /// A pipeline that hands out `I420Image`s (`VP8Decoder.decode(_:)`), for tests that read the
  /// pictures' planes.
  static func decodingI420(
    reorderWindow: Int = 64, stallTimeout: Duration = .milliseconds(500)
  ) throws(VP8Error) -> VideoDecodePipeline<I420Image> {
    try VideoDecodePipeline(reorderWindow: reorderWindow, stallTimeout: stallTimeout) {
      decoder, bytes throws(VP8Error) in try decoder.decode(bytes)
    }
  }
}

extension VP8FrameAssembler.Packet {
  /// This packet as an RTP packet (payload type 96) of `ssrc` that arrived at `arrival`.
  func received(ssrc: UInt32, arrival: MediaInstant) -> ReceivedRTPPacket {
    ReceivedRTPPacket(
      packet: RTPPacket(
        header: RTPHeader(
          marker: marker, payloadType: 96, sequenceNumber: sequenceNumber, timestamp: timestamp,
          ssrc: ssrc),
        payload: payload),
      arrival: arrival)
  }
}

/// The packets of `frames` pictures of `camera` encoded by `encoder` and packetized by
/// `packetizer`, in order, numbered from `firstSequenceNumber` (wrapping); a key frame is
/// requested before picture `index` when `requestKeyFrame(index)`.
func encodedVP8Packets(
  camera: VirtualCamera, encoder: VP8Encoder, packetizer: inout VP8Packetizer,
  firstSequenceNumber: UInt16, frames: Int, requestKeyFrame: (Int) -> Bool
) throws -> [VP8FrameAssembler.Packet] {
  var sequence = firstSequenceNumber
  var sent: [VP8FrameAssembler.Packet] = []
  for index in 0..<frames {
    if requestKeyFrame(index) { encoder.requestKeyFrame() }
    let timestamp = camera.rtpTimestamp(frameIndex: index)
    for frame in try encoder.encode(camera.frame(index), timestamp: timestamp) {
      for payload in packetizer.packetize(frame) {
        sent.append(
          .init(
            sequenceNumber: sequence, timestamp: payload.timestamp, marker: payload.marker,
            payload: payload.payload))
        sequence &+= 1
      }
    }
  }
  return sent
}

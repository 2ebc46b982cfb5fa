import WCSCodecs
import WCSMediaSeam

/// The H.264 video receive pipeline after the jitter buffer: RTP packets → access units
/// (`H264AccessUnitAssembler`, RFC 6184) → libavcodec (`H264Decoder`) → `VideoFrame`s, with
/// the same frames and render statistics as VP8's `VideoDecodePipeline`.
///
/// Not thread-safe: owned by the track's decoding thread.
package final class H264DecodePipeline {
  package typealias Frame = VideoDecodePipeline<VideoFrame>.Frame
  package typealias Output = VideoDecodePipeline<VideoFrame>.Output

  package private(set) var statistics = VideoDecodePipelineStatistics()
  private var assembler: H264AccessUnitAssembler
  private let decoder: H264Decoder
  private var timeline = RenderTimeline()
  private var waitingForKeyFrame = false

  /// - Parameter reorderWindow: packets the assembler waits past a gap before declaring the
  ///   access unit lost, as `VideoDecodePipeline`'s (default 64): late retransmissions.
  /// - Throws: `H264Error.initialization` when libavcodec has no H.264 decoder.
  package init(reorderWindow: Int = 64) throws(H264Error) {
    decoder = try H264Decoder()
    assembler = H264AccessUnitAssembler(reorderWindow: reorderWindow)
  }

  /// Takes packets released by the receive stream at `now`, decodes every access unit they
  /// complete and appends the pictures to `output` (setting `needsKeyFrame` when one is due).
  package func handle(
    _ packets: [ReceivedRTPPacket], now: MediaInstant, into output: inout Output
  ) {
    let droppedBefore = assembler.droppedAccessUnits
    for received in packets {
      let header = received.packet.header
      let assembled = assembler.insert(
        H264AccessUnitAssembler.Packet(
          sequenceNumber: header.sequenceNumber, timestamp: header.timestamp,
          marker: header.marker, payload: received.packet.payload))
      if assembled.dropped != nil { statistics.malformedPackets += 1 }
      if assembled.needsKeyFrame { output.needsKeyFrame = true }
      for unit in assembled.accessUnits {
        decode(unit, arrival: received.arrival, now: now, into: &output)
      }
    }
    statistics.framesDropped += assembler.droppedAccessUnits - droppedBefore
  }

  /// A new source took over the stream: start over at its next IDR.
  package func restartSource() {
    assembler = H264AccessUnitAssembler(reorderWindow: assembler.reorderWindow)
  }

  private func decode(
    _ unit: EncodedVideoFrame, arrival: MediaInstant, now: MediaInstant, into output: inout Output
  ) {
    if waitingForKeyFrame, !unit.isKeyFrame {
      statistics.framesDropped += 1
      return
    }
    do {
      var cpu = 0.0
      let decoded = try CodecCPUTime.measure(into: &cpu) { () throws(H264Error) -> VideoFrame? in
        try decoder.decodeVideoFrame(unit.data)
      }
      statistics.decodeCPUTime += cpu
      guard let picture = decoded else { return }
      waitingForKeyFrame = false
      statistics.framesDecoded += 1
      if unit.isKeyFrame { statistics.keyFramesDecoded += 1 }
      _ = timeline.rendered(at: now, into: &statistics)
      output.frames.append(
        Frame(
          picture: picture, rtpTimestamp: unit.timestamp, isKeyFrame: unit.isKeyFrame,
          arrivalTime: arrival, renderTime: now))
    } catch {
      // The reference chain is broken: later pictures would decode to garbage.
      statistics.decodeErrors += 1
      statistics.framesDropped += 1
      if error.reason == .pictureTooLarge { statistics.oversizedKeyFrames += 1 }
      waitingForKeyFrame = true
      output.needsKeyFrame = true
    }
  }
}

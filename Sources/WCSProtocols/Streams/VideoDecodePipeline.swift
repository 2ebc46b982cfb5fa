import WCSCodecs

/// Render statistics of a played video track's decode pipeline.
public struct VideoDecodePipelineStatistics: Sendable, Equatable {
  /// A gap between rendered frames longer than this counts as a freeze (500 ms, as WebRTC stats).
  public static let freezeThreshold: Double = 0.5

  /// Frames decoded and handed out.
  public var framesDecoded = 0
  /// Key frames decoded.
  public var keyFramesDecoded = 0
  /// Frames skipped by the assembler (incomplete) or that failed to decode.
  public var framesDropped = 0
  /// Decode errors (libvpx rejected or flagged a frame corrupt, or a key frame over the
  /// decoder's picture limit).
  public var decodeErrors = 0
  /// Key frames refused before libvpx because they announced a picture over
  /// `VP8Decoder.pictureLimit` (also counted in `decodeErrors`).
  public var oversizedKeyFrames = 0
  /// Gaps of more than `freezeThreshold` between two rendered frames.
  public var freezes = 0
  /// Longest gap between two rendered frames, seconds.
  public var longestGap: Double = 0
  /// Packets the VP8 payload parser rejected.
  public var malformedPackets = 0
  /// Rendered frames per second from the first to the last frame.
  public var framesPerSecond: Double = 0
  /// CPU seconds spent decoding (inside libvpx, and copying its picture out), on the decoding
  /// thread (`CLOCK_THREAD_CPUTIME_ID`).
  public var decodeCPUTime: Double = 0

  /// All counters zero (the implicit initializer is internal).
  package init() {}
}

/// The video receive pipeline after the jitter buffer: RTP packets → VP8 frame assembly
/// (RFC 7741) → libvpx decoding → pictures, with render statistics. The picture type is left
/// open: the native play track decodes straight into the renderer's `VideoFrame` (one copy out
/// of libvpx, and no picture allocated per frame only to be copied again).
///
/// Not thread-safe: owned by the track's decoding thread. Feed it
/// `VideoReceiveStream`'s released packets; when an output says `needsKeyFrame`, call
/// `VideoReceiveStream.requestKeyFrame()`.
///
/// Its mutable state is one value (`State`), changed in place by one access per call: each
/// stored property of a class read or written costs a dynamic exclusivity check. Frames are
/// decoded as the assembler completes them, from the packet's own bytes or a buffer the
/// assembler keeps (no array of frames or of bytes per frame in between).
package final class VideoDecodePipeline<Picture> {
  /// A decoded picture with its RTP timestamp (90 kHz, RFC 7741 §4.1), key flag and times.
  package struct Frame {
    package var picture: Picture
    package var rtpTimestamp: UInt32
    package var isKeyFrame: Bool
    /// When the packet that completed the frame arrived.
    package var arrivalTime: MediaInstant
    /// The `now` of the call that decoded it.
    package var renderTime: MediaInstant

    /// A frame from its parts (for the other codecs' pipelines).
    package init(
      picture: Picture, rtpTimestamp: UInt32, isKeyFrame: Bool, arrivalTime: MediaInstant,
      renderTime: MediaInstant
    ) {
      self.picture = picture
      self.rtpTimestamp = rtpTimestamp
      self.isKeyFrame = isKeyFrame
      self.arrivalTime = arrivalTime
      self.renderTime = renderTime
    }
  }

  /// What one call produced.
  package struct Output {
    package var frames: [Frame] = []
    package var needsKeyFrame = false

    /// No frames, no key frame needed (the implicit initializer is internal).
    package init() {}
  }

  /// Decodes one frame's bytes with the decoder (nil: not shown); the bytes are valid during
  /// the call only (the packet's own, or joined in a buffer the assembler keeps: no array per
  /// frame).
  package typealias DecodeBytes = (VP8Decoder, UnsafeBufferPointer<UInt8>) throws(VP8Error) ->
    Picture?
  /// `DecodeBytes` that may write the picture into a spare one handed back by `recycle(_:)`
  /// (taking it), e.g. `VP8Decoder.decodeVideoFrame(_:reusing:)`.
  package typealias DecodeBytesReusing =
    (VP8Decoder, UnsafeBufferPointer<UInt8>, inout Picture?) throws(VP8Error) -> Picture?

  package var statistics: VideoDecodePipelineStatistics { state.decoding.statistics }

  private var state: State

  /// Creates a pipeline; `decodePicture` decodes one frame from its bytes in place
  /// (`VP8Decoder.decodeVideoFrame(_:)` or `decode(_:)` on the buffer).
  ///
  /// - Parameter reorderWindow: packets the assembler waits past a gap before declaring the
  ///   picture lost; the jitter buffer already orders packets, so this covers late
  ///   retransmissions (default 64).
  /// - Parameter stallTimeout: packets keep arriving but no frame decodes for this long (a
  ///   receiver that joined after the key frame, or loss NACK could not repair): ask for a key
  ///   frame, and again after each further `stallTimeout` (default 500 ms).
  /// - Throws: `VP8Error` when libvpx cannot create a decoder.
  package convenience init(
    reorderWindow: Int = 64, stallTimeout: Duration = .milliseconds(500),
    decodePicture: @escaping DecodeBytes
  ) throws(VP8Error) {
    try self.init(reorderWindow: reorderWindow, stallTimeout: stallTimeout) {
      decoder, bytes, _ throws(VP8Error) in try decodePicture(decoder, bytes)
    }
  }

  /// See `init(reorderWindow:stallTimeout:decodePicture:)`; `decodeReusing` gets the picture
  /// last handed back by `recycle(_:)` (if any) to decode into.
  package init(
    reorderWindow: Int = 64, stallTimeout: Duration = .milliseconds(500),
    decodeReusing: @escaping DecodeBytesReusing
  ) throws(VP8Error) {
    state = State(
      assembler: VP8FrameAssembler(reorderWindow: reorderWindow),
      decoding: Decoding(
        decoder: try VP8Decoder(), decodeBytes: decodeReusing, stallTimeout: stallTimeout))
  }

  /// Hands back a picture this pipeline decoded, once it is no longer needed (rendered): the
  /// next picture may be decoded into it (see `DecodeBytesReusing`). One is kept; a
  /// picture still referenced elsewhere is never written (its planes are copied first).
  package func recycle(_ picture: consuming Picture) {
    state.decoding.spare = picture
  }

  /// Whether a picture handed back by `recycle(_:)` waits for the next decode.
  package var hasSparePicture: Bool { state.decoding.spare != nil }

  /// Takes packets released by the receive stream at `now` and decodes every frame they
  /// complete.
  package func handle(_ packets: [ReceivedRTPPacket], now: MediaInstant) -> Output {
    var output = Output()
    handle(packets, now: now, into: &output)
    return output
  }

  /// `handle(_:now:)` appending the frames to `output` (and setting its `needsKeyFrame` when
  /// this call needs a key frame), so a caller that keeps an `Output` between calls, emptied,
  /// makes no new array of frames per call.
  package func handle(
    _ packets: [ReceivedRTPPacket], now: MediaInstant, into output: inout Output
  ) {
    state.handle(packets, now: now, into: &output)
  }

  /// A new source took over the stream: the assembler starts over (`VP8FrameAssembler.restart`)
  /// and the next picture decoded is a key frame of the new source.
  package func restartSource() {
    state.assembler.restart()
  }

  private struct State {
    var assembler: VP8FrameAssembler
    var decoding: Decoding

    mutating func handle(
      _ packets: [ReceivedRTPPacket], now: MediaInstant, into output: inout Output
    ) {
      let framesBefore = output.frames.count
      // The decoding side appends to `output` as frames complete: lent to it for the call.
      swap(&output, &decoding.output)
      decoding.now = now
      // By index: a `for received in packets` loop copies each packet (its header with the
      // extensions, and the payload) and destroys the copy after.
      for index in packets.indices {
        decoding.arrival = packets[index].arrival
        let dropsBefore = assembler.discardedFrames
        let status = assembler.insert(
          VP8FrameAssembler.Packet(
            sequenceNumber: packets[index].packet.header.sequenceNumber,
            timestamp: packets[index].packet.header.timestamp,
            marker: packets[index].packet.header.marker, payload: packets[index].packet.payload),
          into: &decoding)
        decoding.statistics.framesDropped += assembler.discardedFrames - dropsBefore
        if status.dropped != nil { decoding.statistics.malformedPackets += 1 }
        if status.needsKeyFrame { decoding.output.needsKeyFrame = true }
      }
      swap(&output, &decoding.output)
      decoding.noteProgress(decoded: output.frames.count > framesBefore, packets: packets.count)
      if decoding.stalled { output.needsKeyFrame = true }
    }
  }

  /// The decoder and the render statistics: decodes each frame the assembler delivers.
  private struct Decoding: VP8FrameSink {
    let decoder: VP8Decoder
    let decodeBytes: DecodeBytesReusing
    let stallTimeout: MediaDuration
    var statistics = VideoDecodePipelineStatistics()
    var waitingForKeyFrame = false
    var timeline = RenderTimeline()
    var lastProgressAt: MediaInstant?
    /// The running call's output (`State.handle` lends it), `now` and the arrival of the
    /// packet being inserted.
    var output = Output()
    var now = MediaInstant(nanoseconds: 0)
    var arrival = MediaInstant(nanoseconds: 0)
    /// Set by `noteProgress`: no frame decoded for `stallTimeout` while packets came.
    var stalled = false
    /// A picture handed back (`recycle`) for the next decode to write into.
    var spare: Picture?

    package init(
      decoder: VP8Decoder, decodeBytes: @escaping DecodeBytesReusing, stallTimeout: Duration
    ) {
      self.decoder = decoder
      self.decodeBytes = decodeBytes
      self.stallTimeout = MediaDuration(stallTimeout)
    }

    mutating func noteProgress(decoded: Bool, packets: Int) {
      stalled = false
      if decoded {
        lastProgressAt = now
      } else if packets > 0 {
        let since = lastProgressAt ?? now
        lastProgressAt = since
        if now - since > stallTimeout {
          stalled = true
          lastProgressAt = now
        }
      }
    }

    mutating func deliver(
      _ frame: VP8FrameAssembler.DeliveredFrame, data: UnsafeBufferPointer<UInt8>
    ) {
      if waitingForKeyFrame && !frame.isKeyFrame {
        statistics.framesDropped += 1
        return
      }
      // Lent to the decode for the call (taken when a picture comes out), then put back.
      var spare: Picture? = nil
      swap(&spare, &self.spare)
      defer { swap(&spare, &self.spare) }
      do {
        // Timed into a local and added after (the same sum): the closure reads the decoder
        // while `statistics` is not being modified.
        var cpu = 0.0
        let decoded = try CodecCPUTime.measure(into: &cpu) {
          () throws(VP8Error) -> Picture? in try decodeBytes(decoder, data, &spare)
        }
        statistics.decodeCPUTime += cpu
        // Moved out of the optional into the frame, not copied (and the copy destroyed).
        guard let picture = consume decoded else { return }
        waitingForKeyFrame = false
        statistics.framesDecoded += 1
        if frame.isKeyFrame { statistics.keyFramesDecoded += 1 }
        _ = timeline.rendered(at: now, into: &statistics)
        output.frames.append(
          Frame(
            picture: consume picture, rtpTimestamp: frame.timestamp, isKeyFrame: frame.isKeyFrame,
            arrivalTime: arrival, renderTime: now))
      } catch {
        // The reference chain is broken: later delta frames would decode to garbage.
        statistics.decodeErrors += 1
        if error.reason == .pictureTooLarge { statistics.oversizedKeyFrames += 1 }
        statistics.framesDropped += 1
        waitingForKeyFrame = true
        output.needsKeyFrame = true
      }
    }
  }
}

extension VideoDecodePipeline.Frame: Sendable where Picture: Sendable {}

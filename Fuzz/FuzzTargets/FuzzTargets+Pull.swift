@testable import WCSCodecs
@testable import WCSLocalServer
@testable import WCSProtocols

// What an RTSP/RTMP pull parses after libavformat demuxed the source's bytes (issue 29): the
// H.264 layouts and limits, the pictures gathered from packets, the audio framer's timing and
// the timeline's anchor.
extension FuzzTarget {
  /// Byte 0: bit 0 set for stereo audio. Then pieces joined by "\n\n": the first is the video
  /// stream's extradata (an avcC record or Annex B), each other one a demuxed packet: a kind
  /// byte (bit 0: audio, else video; bit 1: no pts; bit 2: key flag; bits 3-7: arrival step,
  /// 4 ms each), a big-endian signed pts step (100 µs each; -32768: the pts is the next 8
  /// bytes instead, big-endian, any 64-bit value, in µs and for audio in 48 kHz ticks), then the packet (H.264 in the
  /// extradata's layout, or 16-bit little-endian PCM at 48 kHz).
  ///
  /// Properties: every picture sent is within `PulledH264`'s size and NAL unit caps, each of
  /// its SPSs parses inside the picture limit, and it has another timestamp than the picture
  /// before; an SPS over the limit stops the pull (`wrongFormat`), nothing else does. Audio
  /// frames are 20 ms each and their times follow on by 960 ticks, unless the framer counted a
  /// discontinuity, which only a block off the expected time by over `maxSkew` causes. The
  /// timeline keeps its anchor only while the drift is within `maxJump`.
  static func pull(_ bytes: [UInt8]) throws(Violation) -> Bool {
    guard let flags = bytes.first else { return false }
    let pieces = split(Array(bytes.dropFirst()), separator: [0x0A, 0x0A]).prefix(512)
    guard let extradata = pieces.first, var h264 = try? PulledH264(extradata: Array(extradata))
    else { return false }
    var framer = PulledAudioFramer(channels: flags & 1 == 0 ? 1 : 2)
    var timeline = PulledTimeline()
    var media: Int64 = 0
    var arrival: UInt64 = 1_000_000
    var lastPicture: UInt32?
    var nextAudio: Int64?
    var accepted = false
    for piece in pieces.dropFirst() {
      guard piece.count >= 3 else { continue }
      let start = piece.startIndex
      let kind = piece[start]
      let step = Int16(bitPattern: UInt16(piece[start + 1]) << 8 | UInt16(piece[start + 2]))
      var payload = Array(piece.dropFirst(3))
      arrival += UInt64(kind >> 3) * 4000
      let absolute = step == .min && payload.count >= 8
      if absolute {
        media = payload.prefix(8).reduce(0) { $0 << 8 | Int64($1) }
        payload.removeFirst(8)
      } else {
        media &+= Int64(step) * 100
      }
      let hasTime = kind & 2 == 0
      if hasTime {
        let before = timeline.anchor
        let anchored = timeline.observe(media, at: arrival)
        if let before, !anchored {
          let (delta, overflow) = media.subtractingReportingOverflow(before.media)
          let (drift, under) = delta.subtractingReportingOverflow(Int64(arrival - before.arrival))
          try check(
            !overflow && !under && drift.magnitude <= PulledTimeline.maxJump.magnitude,
            "the anchor was kept at \(before.media) µs for a packet at \(media) µs")
        }
        if anchored {
          try check(
            timeline.anchor?.media == media && timeline.anchor?.arrival == arrival,
            "a new anchor is not the packet's time")
        }
      }
      if kind & 1 == 0 {
        let result = payload.withUnsafeBytes { packet in
          Result { () throws(PullError) in
            try h264.take(
              packet, timestamp: hasTime ? UInt32(truncatingIfNeeded: media / 100 &* 9) : nil,
              isKeyFrame: kind & 4 != 0)
          }
        }
        let taken: (picture: EncodedVideoFrame?, dropped: PullError?)
        switch result {
        case .success(let value): taken = value
        case .failure(.wrongFormat): return accepted
        case .failure(let error): throw Violation(description: "the pull stopped for \(error)")
        }
        if let dropped = taken.dropped, case .wrongFormat = dropped {
          throw Violation(description: "an SPS over the limit only dropped a frame")
        }
        guard let picture = taken.picture else { continue }
        accepted = true
        try checkPulledPicture(picture)
        try check(
          lastPicture != picture.timestamp, "two pictures of timestamp \(picture.timestamp)")
        lastPicture = picture.timestamp
      } else {
        var samples: [Int16] = []
        samples.reserveCapacity(payload.count / 2)
        for index in stride(from: 0, to: payload.count - 1, by: 2) {
          samples.append(
            Int16(bitPattern: UInt16(payload[index]) | UInt16(payload[index + 1]) << 8))
        }
        // An absolute pts stands for any 48 kHz time `av_rescale_q` may return, Int64.min too.
        let time = hasTime ? (absolute ? media : media / 125 * 6) : nil
        let expected = framer.expectedTime
        let discontinuities = framer.discontinuities
        let frames = framer.add(samples, time: time)
        let restarted = framer.discontinuities != discontinuities
        if restarted {
          guard let time, let expected, !Self.onTime(time, expected) else {
            throw Violation(description: "a discontinuity for a block on time")
          }
          nextAudio = nil
        } else if let time, let expected, !samples.isEmpty,
          samples.count / framer.channels <= PulledAudioFramer.maxBlockSamples,
          time.magnitude <= PulledAudioFramer.maxTime.magnitude
        {
          try check(
            Self.onTime(time, expected), "a block at \(time) continued the timeline at \(expected)")
        }
        for frame in frames {
          try check(
            frame.frame.samples.count == PCMAudioFrame.samplesPer20ms * framer.channels,
            "an audio frame of \(frame.frame.samples.count) samples")
          if let nextAudio {
            try check(
              frame.time == nextAudio, "audio at \(frame.time) where \(nextAudio) was next")
          }
          nextAudio = frame.time &+ Int64(PCMAudioFrame.samplesPer20ms)
          accepted = true
        }
      }
    }
    return accepted
  }

  /// Whether an audio block at `time` continues a timeline expected at `expected` (48 kHz).
  private static func onTime(_ time: Int64, _ expected: Int64) -> Bool {
    let (skew, overflow) = time.subtractingReportingOverflow(expected)
    return !overflow && skew.magnitude <= PulledAudioFramer.maxSkew.magnitude
  }

  /// A gathered picture is within the caps and each SPS in it inside the picture limit.
  private static func checkPulledPicture(_ picture: EncodedVideoFrame) throws(Violation) {
    try check(
      picture.data.count <= PulledH264.maxAccessUnitSize,
      "a picture of \(picture.data.count) bytes passed the cap")
    let units = H264AnnexB.nalUnits(picture.data)
    try check(
      units.count <= PulledH264.maxNALUnits, "a picture of \(units.count) NAL units passed")
    for unit in units where H264NALUnitType.of(unit[unit.startIndex]) == H264NALUnitType.sps {
      guard let sps = try? H264SequenceParameterSet(nalUnit: unit) else {
        throw Violation(description: "a pulled picture holds an SPS that does not parse")
      }
      try check(
        PulledH264.pictureLimit.allows((sps.widthInMacroblocks * 16, sps.heightInMacroblocks * 16)),
        "a pulled SPS announces \(sps.width)x\(sps.height), over \(PulledH264.pictureLimit)")
    }
  }
}

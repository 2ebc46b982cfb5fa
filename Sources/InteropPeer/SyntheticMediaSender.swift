import WCSMedia

/// Makes the RTP our side sends to the browser: Opus from a 440 Hz `VirtualMicrophone` every
/// 20 ms and VP8 from a `VirtualCamera` (320x240, 15 fps). Each packet carries the section's MID
/// in the RFC 9143 header extension when the offer negotiated one, so the browser can route it
/// without `a=ssrc` lines in our answer.
final class SyntheticMediaSender {
  struct Section {
    var payloadType: UInt8
    var ssrc: UInt32
    var mid: String?
    var midExtensionID: UInt8?
    var sequenceNumber: UInt16 = 0
  }

  static let videoWidth = 320
  static let videoHeight = 240
  static let frameRate = 15

  var audio: Section
  var video: Section
  private let microphone = VirtualMicrophone()
  private let camera = VirtualCamera(
    width: SyntheticMediaSender.videoWidth, height: SyntheticMediaSender.videoHeight,
    frameRate: SyntheticMediaSender.frameRate)
  private let opus: OpusEncoder
  private let vp8: VP8Encoder
  private var packetizer = VP8Packetizer(initialPictureID: 1234)
  private var audioFrameIndex = 0
  private var videoFrameIndex = 0
  private(set) var videoFramesEncoded = 0
  private(set) var keyFramesEncoded = 0

  init(audio: Section, video: Section) throws {
    self.audio = audio
    self.video = video
    opus = try OpusEncoder()
    vp8 = try VP8Encoder(
      configuration: VP8Encoder.Configuration(
        width: Self.videoWidth, height: Self.videoHeight, frameRate: Self.frameRate,
        bitrateKbps: 300, keyFrameInterval: 2 * Self.frameRate))
  }

  /// The next 20 ms of audio as one RTP packet.
  func nextAudioPacket() throws -> [UInt8] {
    let frame = microphone.frame(audioFrameIndex)
    audioFrameIndex += 1
    let payload = try opus.encode(frame)
    return try packet(&audio, payload: payload, timestamp: frame.timestamp, marker: false)
  }

  /// The next video frame as RTP packets (empty when libvpx dropped the frame).
  func nextVideoPackets() throws -> [[UInt8]] {
    let timestamp = camera.rtpTimestamp(frameIndex: videoFrameIndex)
    let picture = camera.frame(videoFrameIndex)
    videoFrameIndex += 1
    var packets: [[UInt8]] = []
    for frame in try vp8.encode(picture, timestamp: timestamp) {
      videoFramesEncoded += 1
      if frame.isKeyFrame { keyFramesEncoded += 1 }
      for piece in packetizer.packetize(frame) {
        packets.append(
          try packet(
            &video, payload: piece.payload, timestamp: piece.timestamp, marker: piece.marker))
      }
    }
    return packets
  }

  /// Answers a PLI or FIR from the browser.
  func requestKeyFrame() { vp8.requestKeyFrame() }

  private func packet(
    _ section: inout Section, payload: [UInt8], timestamp: UInt32, marker: Bool
  ) throws -> [UInt8] {
    var headerExtension: RTPHeaderExtension?
    if let id = section.midExtensionID, let mid = section.mid {
      headerExtension = .oneByte([RTPHeaderExtensionElement(id: id, value: Array(mid.utf8))])
    }
    let header = RTPHeader(
      marker: marker, payloadType: section.payloadType, sequenceNumber: section.sequenceNumber,
      timestamp: timestamp, ssrc: section.ssrc, headerExtension: headerExtension)
    section.sequenceNumber &+= 1
    return try RTPPacket(header: header, payload: payload).serialized()
  }
}

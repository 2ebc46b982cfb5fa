import FPWCSApi2Swift

// Code of the "Publishing" article, verbatim (see scripts/check-doc-snippets.sh).

/// One line per camera and microphone the media engine offers: kind, label, device id.
func mediaDeviceLines() -> [String] {
  let devices = FPWCSApi2.getMediaDevices()
  var lines: [String] = []
  for camera in devices.video ?? [] {
    lines.append("camera \(camera.label): \(camera.deviceID)")
  }
  for microphone in devices.audio ?? [] {
    lines.append("microphone \(microphone.label): \(microphone.deviceID)")
  }
  return lines
}

/// Publish options for one camera at 1280×720 and 30 fps, 0.5–2 Mbit/s, stereo Opus with FEC.
func cameraPublishOptions(name: String, cameraID: String) -> FPWCSApi2StreamOptions {
  let video = FPWCSApi2VideoConstraints()
  video.deviceID = cameraID
  video.minWidth = 1280
  video.maxWidth = 1280
  video.minHeight = 720
  video.maxHeight = 720
  video.minFrameRate = 30
  video.maxFrameRate = 30
  video.minBitrate = 500  // kbit/s
  video.maxBitrate = 2000  // kbit/s

  let audio = FPWCSApi2AudioConstraints()
  audio.useFEC = true
  audio.useStereo = true
  audio.bitrate = 64_000  // bit/s

  let constraints = FPWCSApi2MediaConstraints()
  constraints.audio = audio
  constraints.video = video
  let options = FPWCSApi2StreamOptions()
  options.name = name
  options.constraints = constraints
  return options
}

/// Publishes with status callbacks, as an iOS app does; `log` gets one line per status.
func publishWithCallbacks(
  session: FPWCSApi2Session, name: String, log: @escaping @Sendable (String) -> Void
) throws -> FPWCSApi2Stream {
  let options = FPWCSApi2StreamOptions()
  options.name = name
  let stream = try session.createStream(options)
  stream.on(.fpwcsStreamStatusPublishing) { stream in
    log("publishing \(stream?.getName() ?? "")")
  }
  stream.on(.fpwcsStreamStatusUnpublished) { _ in
    log("unpublished")
  }
  stream.on(.fpwcsStreamStatusFailed) { stream in
    log("failed: \(stream?.getInfo() ?? "no reason given")")
  }
  try stream.publish()
  return stream
}

/// Mutes the microphone and tells the subscribers why (they get `audioMuted`, then `data`).
func pauseAudio(of stream: FPWCSApi2Stream) {
  stream.muteAudio()
  stream.sendData(["reason": "speaker paused"])
}

/// A video source that publishes generated pictures instead of camera frames.
final class GrayPictureCapturer: RTCVideoCapturer, FPWCSVideoCapturer {
  private var frameIndex: Int64 = 0

  /// Hands one mid-grey 320×240 picture to the publishing pipeline (30 frames per second).
  func deliverNextPicture() {
    frameIndex += 1
    let nanosecondsPerFrame: Int64 = 33_333_333
    deliver(
      VideoFrame(width: 320, height: 240, y: 128, timestampNs: frameIndex * nanosecondsPerFrame))
  }

  func startCapture(with device: CaptureDevice?, format: VideoCaptureFormat?, fps: Int) {}
  func stopCapture() {}
  func lockCameraOrientation() {}
  func unlockCameraOrientation() {}
}

/// Publish options whose video comes from `capturer`, with no audio.
func capturerPublishOptions(name: String, capturer: GrayPictureCapturer) -> FPWCSApi2StreamOptions {
  let options = FPWCSApi2StreamOptions()
  options.name = name
  options.constraints = FPWCSApi2MediaConstraints(audio: false, videoCapturer: capturer)
  return options
}

import FPWCSApi2Swift

// Code of the "Media devices on Linux" article, verbatim (see scripts/check-doc-snippets.sh).

/// Video constraints for the first camera whose label starts with `labelPrefix` (the default
/// camera when none does).
func videoConstraints(cameraLabelPrefix labelPrefix: String) -> FPWCSApi2VideoConstraints {
  let video = FPWCSApi2VideoConstraints()
  let cameras = FPWCSApi2.getMediaDevices().video ?? []
  video.deviceID = cameras.first { $0.label.hasPrefix(labelPrefix) }?.deviceID
  return video
}

/// Capture sizes of the default camera, e.g. `["640x480", "1280x720"]`.
func captureSizes() -> [String] {
  FPWCSApi2.getSupportedVideoResolutions()
}

/// Publishes app-generated PCM instead of a microphone: 48 kHz mono, 20 ms per call.
func deliverAppAudio(_ samples: [Int16]) {
  let audioManager = FPWCSApi2.getAudioManager()
  audioManager.useAudioModule(true)
  audioManager.getAudioModule().deliverRecordedData(
    AudioFrame(sampleRate: 48_000, channels: 1, samples: samples))
}

/// Opens the camera and microphone and previews the camera into `display` without publishing
/// (the iOS "Test" button); call `WCSApi2.releaseLocalMedia(display:)` to stop.
func testLocalMedia(display: any VideoRenderer) throws {
  let constraints = FPWCSApi2MediaConstraints()
  constraints.audio = FPWCSApi2AudioConstraints()
  constraints.video = FPWCSApi2VideoConstraints()
  try WCSApi2.getMediaAccess(constraints, display)
}

import FPWCSApi2Swift
import Foundation

// Code of the "Porting an iOS App" article, verbatim (see scripts/check-doc-snippets.sh).

/// The TwoWayStreaming publish step on Linux: the same calls, `display` is a `VideoRenderer`.
func portedPublish(
  session: FPWCSApi2Session, streamName: String, localDisplay: any VideoRenderer, isPad: Bool
) throws -> FPWCSApi2Stream {
  let options = FPWCSApi2StreamOptions()
  options.name = streamName
  options.display = localDisplay
  if isPad {
    options.constraints = FPWCSApi2MediaConstraints(
      audio: true, videoWidth: 640, videoHeight: 480, videoFps: 15)
  }
  let stream = try session.createStream(options)
  stream.on(.fpwcsStreamStatusUnpublished) { _ in
    FPWCSApi2.releaseLocalMedia(localDisplay)
  }
  try stream.publish()
  return stream
}

/// Session options whose callbacks run on the main queue, as on iOS; the program must then run
/// the main queue (`dispatchMain()`).
func mainQueueSessionOptions(serverURL: String) -> FPWCSApi2SessionOptions {
  let options = FPWCSApi2SessionOptions()
  options.urlServer = serverURL
  options.callbackQueue = .main
  return options
}

/// The loudspeaker switch plays the played audio on the default sound output; it throws for a
/// published stream or when no sound device can be opened.
func tryLoudspeaker(_ stream: WCSStream) -> String? {
  do {
    try stream.setLoudspeakerStatus(true)
    return nil
  } catch {
    return error.localizedDescription
  }
}

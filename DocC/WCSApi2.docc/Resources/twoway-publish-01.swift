import FPWCSApi2Swift

extension TwoWayStreamingApp {
  /// Publishes the default camera and microphone as `localName`; plays once publishing.
  func publish() {
    guard let session else { return }
    let options = FPWCSApi2StreamOptions()
    options.name = localName
    options.display = localDisplay
    options.constraints = FPWCSApi2MediaConstraints(
      audio: true, videoWidth: 640, videoHeight: 480, videoFps: 15)
    do {
      let stream = try session.createStream(options)
      try stream.publish()
      publisher = stream
    } catch {
      log("cannot publish: \(error.localizedDescription)")
    }
  }
}

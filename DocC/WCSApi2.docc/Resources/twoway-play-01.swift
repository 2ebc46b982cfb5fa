import FPWCSApi2Swift

extension TwoWayStreamingApp {
  /// Plays `remoteName` into `remoteDisplay`, once the server says it is available.
  func play() {
    guard let session else { return }
    let options = FPWCSApi2StreamOptions()
    options.name = remoteName
    options.display = remoteDisplay
    do {
      let stream = try session.createStream(options)
      stream.on(.fpwcsStreamStatusPlaying) { stream in
        self.log("playing \(stream?.getName() ?? "")")
      }
      stream.on(.fpwcsStreamStatusNotEnoughtBandwidth) { stream in
        guard let stream else { return }
        let bandwidth = stream.getNetworkBandwidth() / 1000
        let bitrate = stream.getRemoteBitrate() / 1000
        self.log("not enough bandwidth: \(bandwidth) kbit/s for \(bitrate) kbit/s")
      }
      stream.on(.fpwcsStreamStatusStopped) { _ in
        self.log("stopped")
      }
      stream.on(.fpwcsStreamStatusFailed) { stream in
        self.log("play failed: \(self.describeFailure(of: stream))")
      }
      try stream.play()
      player = stream
    } catch {
      log("cannot play: \(error.localizedDescription)")
    }
  }
}

import WCSMediaSeam

/// Swift wrapper of `FPWCSApi2Stream` (`WCSStream`, api-surface.md §2.8, §7); callbacks receive
/// the underlying stream.
public final class WCSStream: Sendable {
  /// The wrapped stream.
  public let stream: FPWCSApi2Stream

  /// Wraps a stream.
  public init(_ stream: FPWCSApi2Stream) {
    self.stream = stream
  }

  /// Sets the callback for one status (replacing an earlier one).
  public func on(_ status: kFPWCSStreamStatus, _ callback: @escaping (FPWCSApi2Stream?) -> Void) {
    stream.on(status, callback: callback)
  }

  /// Sets the stream-event callback.
  public func onStreamEvent(_ callback: @escaping (FPWCSApi2StreamEvent?) -> Void) {
    stream.onStreamEvent(callback)
  }

  /// Starts publishing. Throws `WCSError` for immediate failures.
  public func publish() throws { try stream.publish() }
  /// Starts playing. Throws `WCSError` for immediate failures.
  public func play() throws { try stream.play() }
  /// Stops publishing or playing.
  public func stop() throws { try stream.stop() }
  /// Publishes and returns once Publishing; throws `WCSError` with the server's info otherwise.
  public func publish() async throws { try await stream.publish() }
  /// Plays and returns once Playing; throws `WCSError` with the server's info otherwise.
  public func play() async throws { try await stream.play() }

  /// Asks the server whether this name can be played now.
  public func available(_ callback: @escaping (Bool, String?) -> Void) {
    stream.available(callback)
  }
  /// Sends a JSON object to the subscribers (while publishing).
  public func sendData(_ data: [String: Any]) { stream.sendData(data) }
  /// Next camera.
  public func switchCamera() { stream.switchCamera() }
  /// Orientation lock of a custom capturer.
  public func lockCameraOrientation() { stream.lockCameraOrientation() }
  /// Releases the orientation lock.
  public func unlockCameraOrientation() { stream.unlockCameraOrientation() }
  /// Mutes outgoing audio.
  public func muteAudio() { stream.muteAudio() }
  /// Unmutes outgoing audio.
  public func unmuteAudio() { stream.unmuteAudio() }
  /// Mutes outgoing video.
  public func muteVideo() { stream.muteVideo() }
  /// Unmutes outgoing video.
  public func unmuteVideo() { stream.unmuteVideo() }
  /// Plays (or stops playing) the played audio on the default sound output; throws `WCSError`.
  public func setLoudspeakerStatus(_ enable: Bool) throws {
    try stream.setLoudspeakerStatus(enable)
  }
  /// Plays the played audio on a sound output (`.none` stops); throws `WCSError`.
  public func setAudioOutput(_ output: MediaConnectionRequest.AudioOutput) throws {
    try stream.setAudioOutput(output)
  }
  /// Turns the connection-quality estimate on or off.
  public func enableConnectionQualityCalculation(_ enable: Bool) {
    stream.enableConnectionQualityCalculation(enable)
  }
  /// Sets the connection-quality callback: class, smoothed client and server bitrates (bit/s).
  public func onConnectionQualityCallback(
    _ callback: @escaping (kFPWCSConnectionQuality, Double, Double) -> Void
  ) {
    stream.onConnectionQualityCallback(callback)
  }
  /// WebRTC statistics.
  public func getStats(_ callback: @escaping (FPWCSApi2StreamStats?) -> Void) {
    stream.getStats(callback)
  }
  /// Remote audio mute state.
  public func getAudioState() -> FPWCSApi2MediaState? { stream.getAudioState() }
  /// Remote video mute state.
  public func getVideoState() -> FPWCSApi2MediaState? { stream.getVideoState() }

  /// Stream name.
  public func getName() -> String { stream.getName() }
  /// Current status.
  public func getStatus() -> kFPWCSStreamStatus { stream.getStatus() }
  /// Mapped failure/stop reason.
  public func getStatusInfo() -> kFPWCSStreamStatusInfo { stream.getStatusInfo() }
  /// Recording file name.
  public func getRecordName() -> String? { stream.getRecordName() }
  /// `true` for a publisher.
  public func isPublished() -> Bool { stream.isPublished() }
  /// Server-reported bitrate, bits per second.
  public func getRemoteBitrate() -> Int { stream.getRemoteBitrate() }
  /// Server-reported bandwidth, bits per second.
  public func getNetworkBandwidth() -> Int { stream.getNetworkBandwidth() }
  /// Every status from now on.
  public var statusUpdates: AsyncStream<kFPWCSStreamStatus> { stream.statusUpdates }
}

// Seed 002 (TwoWayStreaming, Objective-C) rendered in Swift against the ObjC-style API:
// `[FPWCSApi2 createSession:options error:&error]` → `try FPWCSApi2.createSession(options)`,
// `[stream publish:&error]` → `try stream.publish()`, `on:callback:` → `on(_:callback:)`.
// UIKit is replaced by the stand-ins; `UI_USER_INTERFACE_IDIOM() == Pad` by a flag.
import FPWCSApi2Swift
import Foundation

final class TwoWayStreamingSeed {
  let connectUrl = SeedTextField("ws://127.0.0.1:8080")
  let localStreamName = SeedTextField("local")
  let remoteStreamName = SeedTextField("remote")
  let localDisplay = SeedVideoContainer().videoView
  let remoteDisplay = SeedVideoContainer().videoView
  let alerts = SeedAlerts()
  var isPad = false
  var log: [String] = []

  // 2. Session creation and connection.
  func connect() -> FPWCSApi2Session? {
    let options = FPWCSApi2SessionOptions()
    options.urlServer = connectUrl.text
    options.appKey = "defaultApp"
    let session: FPWCSApi2Session
    do {
      session = try FPWCSApi2.createSession(options)
    } catch {
      alerts.present("Failed to connect", error.localizedDescription)
      return nil
    }
    session.on(.fpwcsSessionStatusEstablished) { rSession in
      self.log.append(
        "session \(FPWCSApi2Model.sessionStatus(toString: rSession?.getStatus() ?? .fpwcsSessionStatusNew))"
      )
      _ = self.publishStream()
    }
    session.on(.fpwcsSessionStatusDisconnected) { _ in self.onDisconnected() }
    session.on(.fpwcsSessionStatusFailed) { _ in self.onDisconnected() }
    session.connect()
    return session
  }

  // 3. Publishing.
  func publishStream() -> FPWCSApi2Stream? {
    let session = FPWCSApi2.getSessions()[0]
    let options = FPWCSApi2StreamOptions()
    options.name = localStreamName.text
    options.display = localDisplay
    if isPad {
      options.constraints = FPWCSApi2MediaConstraints(
        audio: true, videoWidth: 640, videoHeight: 480, videoFps: 15)
    }
    let stream: FPWCSApi2Stream
    do {
      stream = try session.createStream(options)
    } catch {
      alerts.present("Failed to publish", error.localizedDescription)
      return nil
    }
    stream.on(.fpwcsStreamStatusPublishing) { rStream in
      self.log.append("publishing \(rStream?.getName() ?? "")")
      _ = self.playStream()
    }
    stream.on(.fpwcsStreamStatusUnpublished) { _ in self.onUnpublished() }
    stream.on(.fpwcsStreamStatusFailed) { rStream in self.onFailed(rStream) }
    do {
      try stream.publish()
    } catch {
      alerts.present("Failed to publish", error.localizedDescription)
      onUnpublished()
    }
    return stream
  }

  // 4. Switching camera.
  func switchCameraButton() {
    if FPWCSApi2.getSessions().count > 0 {
      let session = FPWCSApi2.getSessions()[0]
      let streams = session.getStreams()
      for stream in streams {
        if stream.isPublished() {
          log.append("Found published stream, switching camera")
          stream.switchCamera()
        }
      }
    } else {
      log.append("No active sessions found")
    }
  }

  // 5. Playback.
  func playStream() -> FPWCSApi2Stream? {
    let session = FPWCSApi2.getSessions()[0]
    let options = FPWCSApi2StreamOptions()
    options.name = remoteStreamName.text
    options.display = remoteDisplay
    guard let stream = try? session.createStream(options) else { return nil }
    stream.on(.fpwcsStreamStatusPlaying) { rStream in
      self.log.append("playing \(rStream?.getName() ?? "")")
    }
    stream.on(.fpwcsStreamStatusNotEnoughtBandwidth) { rStream in
      guard let rStream else { return }
      self.log.append(
        "Not enough bandwidth \(rStream.getName()), consider using lower video resolution or bitrate. "
          + "Bandwidth \(rStream.getNetworkBandwidth() / 1000) bitrate \(rStream.getRemoteBitrate() / 1000)"
      )
    }
    stream.on(.fpwcsStreamStatusStopped) { _ in self.log.append("stopped") }
    stream.on(.fpwcsStreamStatusFailed) { rStream in self.onFailed(rStream) }
    do {
      try stream.play()
    } catch {
      alerts.present("Failed to play", error.localizedDescription)
    }
    return stream
  }

  // 6. Stop playback.
  func playButtonStop() {
    if FPWCSApi2.getSessions().count > 0 {
      var stream: FPWCSApi2Stream?
      for s in FPWCSApi2.getSessions()[0].getStreams() where s.getName() == remoteStreamName.text {
        stream = s
        break
      }
      guard let stream else {
        log.append("Stop playing, nothing to stop")
        return
      }
      do {
        try stream.stop()
      } catch {
        log.append("\(error)")
      }
    } else {
      log.append("Stop playing, no session")
    }
  }

  // 8. Disconnection.
  func connectButtonDisconnect() {
    if FPWCSApi2.getSessions().count > 0 {
      let session = FPWCSApi2.getSessions()[0]
      log.append("Disconnect session with server \(session.getServerUrl())")
      session.disconnect()
    } else {
      log.append("Nothing to disconnect")
      onDisconnected()
    }
  }

  // Readable failure reasons (the ObjC sample switches over the status info).
  func onFailed(_ stream: FPWCSApi2Stream?) {
    switch stream?.getStatusInfo() {
    case .fpwcsStreamStatusInfoSessionDoesNotExist: log.append("Actual session does not exist")
    case .fpwcsStreamStatusInfoStoppedByPublisherStop:
      log.append("Related publisher stopped its stream or lost connection")
    case .fpwcsStreamStatusInfoSessionNotReady:
      log.append("Session is not initialized or terminated on play ordinary stream")
    case .fpwcsStreamStatusInfoRtspStreamNotFound:
      log.append("Rtsp stream not found where agent received '404-Not Found'")
    case .fpwcsStreamStatusInfoFailedToConnectToRtspStream:
      log.append("Failed to connect to rtsp stream")
    case .fpwcsStreamStatusInfoFileNotFound: log.append("File does not exist, check filename")
    case .fpwcsStreamStatusInfoFileHasWrongFormat: log.append("File has wrong format on play vod")
    case .fpwcsStreamStatusInfoTranscodingRequiredButDisabled:
      log.append("Transcoding required, but disabled in settings")
    case .fpwcsStreamStatusInfoNoAvailableTranscoders:
      log.append("No available transcoders for stream")
    case .fpwcsStreamStatusInfoStreamNameAlreadyInUse:
      log.append("Server already has a publish stream with the same name")
    default:
      log.append(
        "Failed: \(FPWCSApi2Model.streamStatus(toString: stream?.getStatus() ?? .fpwcsStreamStatusFailed))"
      )
    }
  }

  func onUnpublished() {
    FPWCSApi2.releaseLocalMedia(localDisplay)
  }

  func onDisconnected() {
    log.append("disconnected")
  }
}

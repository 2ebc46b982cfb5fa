// Seed 003 (ScreenCapturer, Swift): the app's audio publishing and the broadcast extension's
// screen publishing. ReplayKit is replaced: `RPSampleBufferType` is a local enum and the sample
// buffer is an `AudioFrame`; `RTCVideoCapturer` is the package's base class.
import FPWCSApi2Swift
import Foundation

/// Stands in for ReplayKit's `RPSampleBufferType`.
enum RPSampleBufferType { case video, audioApp, audioMic }

private class ScreenRTCVideoCapturer: RTCVideoCapturer {
  let kNanosecondsPerSecond = 1_000_000_000
  var useMic: Bool = true

  init(useMic: Bool) {
    super.init()
    self.useMic = useMic
  }
}

/// The app side: publishes the separate audio stream.
final class ScreenCapturerAppSeed {
  var session: WCSSession?
  var publishStream: WCSStream?
  let urlField = SeedTextField("ws://127.0.0.1:8080")
  let publishAudioName = SeedTextField("audio1")
  let publishAudioButton = SeedButton("Publish Audio")

  func publishAudioPressed(_ sender: Any) {
    if publishAudioButton.title(for: .normal) == "Publish Audio" {
      let options = FPWCSApi2SessionOptions()
      options.urlServer = self.urlField.text
      options.appKey = "defaultApp"
      do {
        try session = WCSSession(options)
      } catch {
        print(error)
      }
      session?.on(.fpwcsSessionStatusEstablished) { _ in
        guard let session = self.session else { return }
        try? self.onConnected(session)
      }
      session?.connect()
    } else {
      session?.disconnect()
    }
  }

  func onConnected(_ session: WCSSession) throws {
    let options = FPWCSApi2StreamOptions()
    options.name = publishAudioName.text
    options.constraints = FPWCSApi2MediaConstraints(audio: true, video: false)
    do {
      publishStream = try session.createStream(options)
    } catch {
      print(error)
    }
    try publishStream?.publish()
  }
}

/// The broadcast extension (`RPBroadcastSampleHandler` subclass on iOS).
final class ScreenCapturerSampleHandlerSeed {
  var session: WCSSession?
  var publishStream: WCSStream?
  var wcsUrl = ""
  var streamName = ""
  fileprivate var capturer: ScreenRTCVideoCapturer = ScreenRTCVideoCapturer(useMic: true)
  var useMic: Bool { capturer.useMic }

  func broadcastStarted(withSetupInfo setupInfo: [String: NSObject]?) {
    let userDefaults = UserDefaults.init(suiteName: "group.com.flashphoner.ScreenCapturerSwift")
    let wcsUrl = userDefaults?.string(forKey: "wcsUrl")
    if wcsUrl != self.wcsUrl || session?.getStatus() != .fpwcsSessionStatusEstablished {
      session?.disconnect()
      session = nil
    }
    self.wcsUrl = wcsUrl ?? self.wcsUrl
    let streamName = userDefaults?.string(forKey: "streamName")
    self.streamName = streamName ?? self.streamName
    let useMic = userDefaults?.bool(forKey: "useMic")
    capturer = ScreenRTCVideoCapturer(useMic: useMic ?? true)
    FPWCSApi2.getAudioManager().useAudioModule(true)
    if session == nil {
      let options = FPWCSApi2SessionOptions()
      options.urlServer = self.wcsUrl
      options.appKey = "defaultApp"
      do {
        try session = WCSSession(options)
      } catch {
        print(error)
      }
      session?.on(.fpwcsSessionStatusEstablished) { _ in
        guard let session = self.session else { return }
        do { try self.onConnected(session) } catch { print(error) }
      }
      session?.connect()
    }
  }

  func onConnected(_ session: WCSSession) throws {
    let options = FPWCSApi2StreamOptions()
    options.name = streamName
    options.constraints = FPWCSApi2MediaConstraints(audio: false, videoCapturer: capturer)
    try publishStream = session.createStream(options)
    try publishStream?.publish()
  }

  func broadcastPaused() {
    publishStream?.muteAudio()
    publishStream?.muteVideo()
  }

  func broadcastResumed() {
    publishStream?.unmuteAudio()
    publishStream?.unmuteVideo()
  }

  func processSampleBuffer(_ sampleBuffer: AudioFrame, with sampleBufferType: RPSampleBufferType) {
    switch sampleBufferType {
    case RPSampleBufferType.video:
      break
    case RPSampleBufferType.audioApp:
      if !useMic {
        FPWCSApi2.getAudioManager().getAudioModule().deliverRecordedData(sampleBuffer)
      }
    case RPSampleBufferType.audioMic:
      if useMic {
        FPWCSApi2.getAudioManager().getAudioModule().deliverRecordedData(sampleBuffer)
      }
    }
  }
}

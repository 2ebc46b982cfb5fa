// swift-format-ignore-file: NeverForceUnwrap

// Seed 000 (MediaDevices, Swift), steps 1–11, with UIKit controls replaced by the stand-ins.
// One change besides UIKit: `(device as AnyObject).label` becomes `device.label`, since Linux
// Swift has no Objective-C `AnyObject` member lookup.
import FPWCSApi2Swift
import Foundation

final class MediaDevicesSeed {
  var localDevices: FPWCSApi2MediaDeviceList?
  var session: WCSSession?
  var publishStream: WCSStream?
  var playStream: WCSStream?

  // Local settings view.
  let microphone = SeedTextField()
  let camera = SeedTextField()
  let audioSend = SeedSwitch(true)
  let audioFEC = SeedSwitch(true)
  let audioStereo = SeedSwitch(false)
  let audioBitrate = SeedTextField("0")
  let videoSend = SeedSwitch(true)
  let videoWidth = SeedTextField("640")
  let videoHeight = SeedTextField("480")
  let videoFPS = SeedTextField("30")
  let videoBitrate = SeedTextField("0")
  // Remote settings view.
  let playVideo = SeedSwitch(true)
  let remoteVideoWidth = SeedTextField("0")
  let remoteVideoHeight = SeedTextField("0")
  let remoteVideoBitrate = SeedTextField("0")
  let videoQuality = SeedTextField("0")
  // Main view.
  let urlField = SeedTextField("ws://127.0.0.1:8080")
  let publishName = SeedTextField("stream1")
  let playName = SeedTextField("stream1")
  let testButton = SeedButton("TEST")
  let connectButton = SeedButton("CONNECT")
  let publishButton = SeedButton("PUBLISH")
  let playButton = SeedButton("PLAY")
  let localDisplay = SeedVideoContainer()
  let remoteDisplay = SeedVideoContainer()

  var localMediaConstrains: FPWCSApi2MediaConstraints { toLocalMediaConstraints() }
  var remoteMediaConstrains: FPWCSApi2MediaConstraints { toRemoteMediaConstraints() }

  // 2.–3. List devices, pick the defaults.
  func viewDidLoad() {
    localDevices = WCSApi2.getMediaDevices()
    if localDevices?.audio?.count ?? 0 > 0 {
      microphone.text = (localDevices?.audio[0])?.label
    }
    if localDevices?.video?.count ?? 0 > 0 {
      camera.text = (localDevices?.video[0])?.label
    }
  }

  // 4. Constraints for the published stream.
  func toLocalMediaConstraints() -> FPWCSApi2MediaConstraints {
    let ret = FPWCSApi2MediaConstraints()
    if self.audioSend.isOn {
      let audio = FPWCSApi2AudioConstraints()
      audio.useFEC = audioFEC.isOn
      audio.useStereo = audioStereo.isOn
      audio.bitrate = Int(audioBitrate.text ?? "0") ?? 0
      ret.audio = audio
    }
    if self.videoSend.isOn {
      let video = FPWCSApi2VideoConstraints()
      for device in localDevices!.video {
        if device.label == camera.text {
          video.deviceID = device.deviceID
        }
      }
      video.minWidth = Int(videoWidth.text ?? "0") ?? 0
      video.maxWidth = video.minWidth
      video.minHeight = Int(videoHeight.text ?? "0") ?? 0
      video.maxHeight = video.minHeight
      video.minFrameRate = Int(videoFPS.text ?? "0") ?? 0
      video.maxFrameRate = video.minFrameRate
      video.bitrate = Int(videoBitrate.text ?? "0") ?? 0
      ret.video = video
    }
    return ret
  }

  // 5. Constraints for the played stream.
  func toRemoteMediaConstraints() -> FPWCSApi2MediaConstraints {
    let ret = FPWCSApi2MediaConstraints()
    ret.audio = FPWCSApi2AudioConstraints()
    if playVideo.isOn {
      let video = FPWCSApi2VideoConstraints()
      video.minWidth = Int(remoteVideoWidth.text ?? "0") ?? 0
      video.maxWidth = video.minWidth
      video.minHeight = Int(remoteVideoHeight.text ?? "0") ?? 0
      video.maxHeight = video.minWidth
      video.bitrate = Int(remoteVideoBitrate.text ?? "0") ?? 0
      video.quality = Int(videoQuality.text ?? "0") ?? 0
      ret.video = video
    }
    return ret
  }

  // 6. Local camera and microphone test.
  func testPressed(_ sender: Any) {
    if testButton.title(for: .normal) == "TEST" {
      let constraints = FPWCSApi2MediaConstraints(audio: true, video: true)!
      do {
        try WCSApi2.getMediaAccess(constraints, localDisplay.videoView)
      } catch {
        print(error)
      }
      testButton.setTitle("RELEASE", for: .normal)
    } else {
      WCSApi2.releaseLocalMedia(display: localDisplay.videoView)
      testButton.setTitle("TEST", for: .normal)
    }
  }

  // 7. Session creation and connection.
  func connectPressed(_ sender: Any) {
    if connectButton.title(for: .normal) == "CONNECT" {
      if session == nil {
        let options = FPWCSApi2SessionOptions()
        options.urlServer = urlField.text
        options.appKey = "defaultApp"
        do {
          session = try WCSSession(options)
        } catch {
          print(error)
        }
      }
      session?.on(.fpwcsSessionStatusEstablished) { rSession in
        self.connectButton.setTitle("DISCONNECT", for: .normal)
        print("session \(FPWCSApi2Model.sessionStatus(toString: rSession!.getStatus()))")
      }
      session?.connect()
    } else {
      session?.disconnect()
    }
  }

  // 8. Publishing, 11. stop publishing.
  func publishPressed(_ sender: Any) {
    if publishButton.title(for: .normal) == "PUBLISH" {
      let options = FPWCSApi2StreamOptions()
      options.name = publishName.text
      options.display = localDisplay.videoView
      options.constraints = localMediaConstrains
      do {
        try publishStream = session!.createStream(options)
      } catch {
        print(error)
      }
      publishStream?.on(.fpwcsStreamStatusPublishing) { rStream in
        self.publishButton.setTitle("STOP", for: .normal)
        print("publishing \(rStream?.getName() ?? "")")
      }
      publishStream?.onStreamEvent { event in
        if event?.type == FPWCSApi2Model.streamEventType(toString: .fpwcsStreamEventTypeAudioMuted)
        {
          print("audio muted")
        }
      }
      do {
        try publishStream?.publish()
      } catch {
        print(error)
      }
    } else {
      do {
        try publishStream?.stop()
      } catch {
        print(error)
      }
    }
  }

  // 9. Playback, 10. stop playback.
  func playPressed(_ sender: Any) {
    if playButton.title(for: .normal) == "PLAY" {
      let options = FPWCSApi2StreamOptions()
      options.name = playName.text
      options.display = remoteDisplay.videoView
      options.constraints = remoteMediaConstrains
      do {
        playStream = try session!.createStream(options)
      } catch {
        print(error)
      }
      playStream?.on(.fpwcsStreamStatusPlaying) { rStream in
        self.playButton.setTitle("STOP", for: .normal)
        print("audio muted by publisher: \(rStream?.getAudioState()?.muted ?? false)")
      }
      do {
        try playStream?.play()
      } catch {
        print(error)
      }
    } else {
      do {
        try playStream?.stop()
      } catch {
        print(error)
      }
    }
  }

  // Mute switches (MediaDevicesSwift): work before and during publishing.
  func muteAudioChanged(_ isOn: Bool) {
    if isOn { publishStream?.muteAudio() } else { publishStream?.unmuteAudio() }
  }
}

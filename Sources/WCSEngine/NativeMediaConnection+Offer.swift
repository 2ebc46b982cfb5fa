import Foundation
import WCSDevices
import WCSEventLoop
import WCSMediaSeam
import WCSPeerConnection
import WCSProtocols

/// The offer: capture sources and encode tracks (publish) or decode tracks (play), then the
/// PeerConnection and its SDP.
extension NativeMediaConnection {
  // MARK: - Offer

  func makeOffer() -> Result<String, MediaBackendError> {
    loop.assertInEventLoop()
    guard !closed else { return .failure(.closed) }
    guard peerConnection == nil else { return .failure(.offerFailed("offer already created")) }
    // A call sends and receives (`MediaConnectionRequest.receivesToo`).
    if request.sends {
      do throws(MediaBackendError) {
        try openSendTracks()
      } catch {
        return .failure(error)
      }
    }
    if request.receives {
      do throws(MediaBackendError) {
        try openReceiveTracks()
      } catch {
        return .failure(error)
      }
    }
    let ice = NativeICEServers.resolve(request, base: configuration.peerConnection)
    iceServerNotes = ice.notes
    let peerConnection = PeerConnection(configuration: ice.configuration, loop: loop)
    peerConnection.onEvent = { [weak self] event in self?.handle(event) }
    // Called per packet: a constant weak reference rather than `[weak self]` (see
    // `WeakReference`).
    let reference = WeakReference(self)
    peerConnection.onRTP = { ssrc, packet in reference.object?.receiveRTP(ssrc, packet) }
    peerConnection.onRTCP = { packet in reference.object?.receiveRTCP(packet) }
    self.peerConnection = peerConnection
    watchNetworkChanges()
    let publish = request.direction == .publish
    let direction: MediaDirection =
      request.sends && request.receives ? .sendrecv : publish ? .sendonly : .recvonly
    // A two-way offer names its directions per section; one-way offers use the WCS shapes.
    let mode: PeerConnection.OfferMode =
      direction == .sendrecv ? .asGiven : publish ? .publish : .play
    let audio = request.audio.map { _ in
      SDPOfferParameters.Audio(
        direction: direction, ssrc: audioSSRC, trackId: "audio-\(cname)",
        opusPayloadType: Int(audioPayloadType), includeG711: false)
    }
    let video = request.video.map { _ in
      var video = SDPOfferParameters.Video(
        direction: direction, ssrc: videoSSRC, trackId: "video-\(cname)",
        vp8PayloadType: Int(videoPayloadType),
        rtx: SDPOfferParameters.RTX(payloadType: 97, ssrc: rtxSSRC))
      video.h264Formats = offeredH264Formats
      return video
    }
    do {
      let sdp = try peerConnection.createOffer(
        audio: audio, video: video, mode: mode, cname: cname)
      return .success(sdp)
    } catch {
      return .failure(.offerFailed("\(error)"))
    }
  }

  func openSendTracks() throws(MediaBackendError) {
    let enabled = trackEnabled.withLock { $0 }
    if let video = request.video {
      let track: VideoSendTrack
      do {
        track = try VideoSendTrack(parameters: parameters, preview: request.renderer) {
          [weak self] payloads, _ in
          guard let self else { return }
          self.loop.execute { self.sendMedia(payloads, video: true) }
        }
      } catch {
        throw .deviceUnavailable("VP8 encoder: \(error)")
      }
      track.isEnabled = enabled[.video] ?? true
      videoTrack = track
      let deviceID = video.deviceID ?? NativeMediaDevices.virtualCameraID
      videoSource = try makeVideoSource(deviceID: deviceID, capturer: video.capturer, track: track)
      videoDeviceID = deviceID
    }
    if let audio = request.audio {
      let track: AudioSendTrack
      do {
        track = try AudioSendTrack(parameters: parameters) { [weak self] payload, capturedAt in
          guard let self else { return }
          self.loop.execute {
            self.sendMedia([payload], video: false, audioCapturedAt: capturedAt)
          }
        }
      } catch {
        throw .deviceUnavailable("Opus encoder: \(error)")
      }
      track.isEnabled = enabled[.audio] ?? true
      audioTrack = track
      audioSource = try makeAudioSource(deviceID: audio.deviceID, track: track)
    }
  }

  func makeVideoSource(
    deviceID: String, capturer: RTCVideoCapturer?, track: VideoSendTrack
  ) throws(MediaBackendError) -> any NativeCaptureSource {
    if let capturer {
      let device = backend?.devices().first { $0.kind == .video && $0.id == deviceID }
      return CapturerSource(capturer: capturer, track: track, clock: mediaClock, device: device)
    }
    if let path = NativeMediaDevices.filePath(fromID: deviceID) {
      return try FileCaptureSource(
        path: path, videoTrack: track, audioTrack: nil, clock: mediaClock,
        constraints: request.video, onFailure: captureFailureHandler(kind: .video))
    }
    if let path = NativeMediaDevices.v4l2Path(fromID: deviceID) {
      guard let system = configuration.systemDevices else {
        throw .deviceUnavailable("camera \(path): real devices are disabled")
      }
      return try V4L2CameraSource(
        path: path, io: system.videoIO, track: track, clock: mediaClock,
        onFailure: captureFailureHandler(kind: .video))
    }
    guard deviceID == NativeMediaDevices.virtualCameraID else {
      throw .deviceUnavailable("unknown camera \(deviceID)")
    }
    return VirtualCameraSource(track: track, clock: mediaClock)
  }

  func makeAudioSource(deviceID: String?, track: AudioSendTrack)
    throws(MediaBackendError) -> any NativeCaptureSource
  {
    if backend?.usesExternalAudio == true {
      let source = ExternalAudioSource(track: track)
      backend?.register(externalAudio: source)
      return source
    }
    let id = deviceID ?? NativeMediaDevices.virtualMicrophoneID
    if let path = NativeMediaDevices.filePath(fromID: id) {
      return try FileCaptureSource(
        path: path, videoTrack: nil, audioTrack: track, clock: mediaClock,
        onFailure: captureFailureHandler(kind: .audio))
    }
    if let microphone = NativeMediaDevices.microphone(fromID: id) {
      guard configuration.systemDevices != nil else {
        throw .deviceUnavailable("microphone \(microphone.name): real devices are disabled")
      }
      return try MicrophoneSource(
        name: microphone.name, backend: microphone.backend, track: track,
        onFailure: captureFailureHandler(kind: .audio))
    }
    guard id == NativeMediaDevices.virtualMicrophoneID else {
      throw .deviceUnavailable("unknown microphone \(id)")
    }
    return VirtualMicrophoneSource(
      track: track, clock: mediaClock,
      microphone: VirtualMicrophone(
        signal: configuration.virtualMicrophoneSignal, channels: parameters.audioChannels))
  }

  func openReceiveTracks() throws(MediaBackendError) {
    if request.video != nil, request.audio != nil, configuration.synchronizesPlayout {
      playoutSync = PlayoutSync()
    }
    if request.video != nil {
      do {
        videoReceiveTrack = try VideoReceiveTrack(
          renderer: request.receivedVideoRenderer, playoutSync: playoutSync, loop: loop
        ) {
          [weak self] in
          guard let self else { return }
          self.loop.execute { self.requestKeyFrameFromSender() }
        }
      } catch {
        throw .deviceUnavailable("VP8 decoder: \(error)")
      }
    }
    if let audio = request.audio {
      do {
        audioReceiveTrack = try AudioReceiveTrack(
          channels: audio.useStereo ? 2 : 1, loop: loop,
          playoutAdvance: tuning.audioPlayoutAdvance, playoutSync: playoutSync
        ) {
          [weak self] in
          guard let self else { return .init() }
          var sinks = AudioReceiveTrack.Sinks()
          if let sink = self.playoutSinkOverride.withLock({ $0 }) {
            guard self.backend?.isPlayoutMuted != true else { return .init() }
            sinks.first = sink
          } else if let sink = self.backend?.currentPlayoutSink() {
            sinks.first = sink
          } else if self.backend?.isPlayoutMuted == true {
            return .init()
          }
          if let speaker = self.audioOutput.withLock({ $0.player }) {
            if sinks.first == nil { sinks.first = speaker } else { sinks.second = speaker }
          }
          return sinks
        }
      } catch {
        throw .deviceUnavailable("Opus decoder: \(error)")
      }
      openRequestedAudioOutput(audio.output, channels: audio.useStereo ? 2 : 1)
    }
  }
}

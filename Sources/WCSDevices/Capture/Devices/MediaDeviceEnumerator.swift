/// A camera, microphone or speaker the SDK can use: real devices beside the always-present virtual
/// ones.
public struct MediaDeviceInfo: Sendable, Equatable {
  /// What kind of device.
  public enum Kind: String, Sendable, Equatable {
    /// Video source.
    case camera
    /// Audio source.
    case microphone
    /// Audio sink.
    case speaker
  }

  /// Where the device lives.
  public enum Source: String, Sendable, Equatable {
    /// `VirtualCamera` / `VirtualMicrophone`.
    case virtual
    /// A V4L2 node.
    case v4l2
    /// A PulseAudio source or sink.
    case pulseAudio
    /// An ALSA PCM.
    case alsa
  }

  /// Identifier to open the device with: the V4L2 node path, the PulseAudio/ALSA name, or
  /// `MediaDeviceEnumerator.virtualCameraID` / `.virtualMicrophoneID`.
  public var id: String
  /// Human-readable name.
  public var label: String
  /// Camera, microphone or speaker.
  public var kind: Kind
  /// Virtual, V4L2, PulseAudio or ALSA.
  public var source: Source

  /// A device description.
  public init(id: String, label: String, kind: Kind, source: Source) {
    self.id = id
    self.label = label
    self.kind = kind
    self.source = source
  }
}

/// Why part of a device listing is missing.
public enum MediaDeviceError: Error, Sendable, Equatable {
  /// A video node could not be queried.
  case camera(V4L2Error)
  /// A sound system could not be listed.
  case audio(AudioDeviceError)
}

/// Lists every camera, microphone and speaker: virtual devices first, then V4L2 cameras and
/// PulseAudio (or ALSA) sources and sinks. Failures of one kind never hide the others; they are
/// reported in `errors`.
public struct MediaDeviceEnumerator: Sendable {
  /// Id of the synthetic test-pattern camera (`VirtualCamera`).
  public static let virtualCameraID = "virtual-camera"
  /// Id of the synthetic tone microphone (`VirtualMicrophone`).
  public static let virtualMicrophoneID = "virtual-microphone"

  /// Result of a listing.
  public struct Listing: Sendable {
    /// All devices, virtual first.
    public var devices: [MediaDeviceInfo]
    /// Parts that could not be listed, with reasons.
    public var errors: [MediaDeviceError]

    /// The devices of one kind.
    public func devices(of kind: MediaDeviceInfo.Kind) -> [MediaDeviceInfo] {
      devices.filter { $0.kind == kind }
    }
  }

  private let videoIO: any V4L2DeviceIO
  private let audioBackend: AudioBackendPreference
  private let includeMonitors: Bool

  /// An enumerator.
  /// - Parameters:
  ///   - videoIO: the V4L2 layer (`V4L2KernelIO` for real devices).
  ///   - audioBackend: which sound system to ask.
  ///   - includeMonitors: whether PulseAudio monitor sources count as microphones.
  public init(
    videoIO: any V4L2DeviceIO = V4L2KernelIO(), audioBackend: AudioBackendPreference = .automatic,
    includeMonitors: Bool = false
  ) {
    self.videoIO = videoIO
    self.audioBackend = audioBackend
    self.includeMonitors = includeMonitors
  }

  /// Lists the devices (opens each video node briefly and runs pactl; takes up to a few seconds
  /// when a sound server hangs).
  public func list() -> Listing {
    var devices = [
      MediaDeviceInfo(
        id: Self.virtualCameraID, label: "Virtual camera (test pattern)", kind: .camera,
        source: .virtual),
      MediaDeviceInfo(
        id: Self.virtualMicrophoneID, label: "Virtual microphone (tone)", kind: .microphone,
        source: .virtual),
    ]
    var errors: [MediaDeviceError] = []
    let cameras = V4L2CameraEnumerator(io: videoIO).list()
    devices += cameras.cameras.map {
      MediaDeviceInfo(id: $0.id, label: $0.label, kind: .camera, source: .v4l2)
    }
    errors += cameras.errors.map(MediaDeviceError.camera)
    let audio = AudioDeviceEnumerator.list(backend: audioBackend)
    for mic in audio.microphones where includeMonitors || !mic.isMonitor {
      devices.append(
        MediaDeviceInfo(id: mic.id, label: mic.label, kind: .microphone, source: source(mic)))
    }
    for speaker in audio.speakers {
      devices.append(
        MediaDeviceInfo(
          id: speaker.id, label: speaker.label, kind: .speaker, source: source(speaker)))
    }
    errors += audio.errors.map(MediaDeviceError.audio)
    return Listing(devices: devices, errors: errors)
  }

  private func source(_ info: AudioDeviceInfo) -> MediaDeviceInfo.Source {
    info.backend == .pulseAudio ? .pulseAudio : .alsa
  }
}

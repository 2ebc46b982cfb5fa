/// The sound system an audio device runs on.
public enum AudioBackend: String, Sendable, Equatable {
  /// PulseAudio (or PipeWire's pulse server) through `pa_simple`.
  case pulseAudio
  /// ALSA directly (`snd_pcm_*`), used when no sound server runs.
  case alsa
}

/// Which sound system to open a device on.
public enum AudioBackendPreference: Sendable, Equatable {
  /// PulseAudio when a server answers, else ALSA.
  case automatic
  /// Only PulseAudio.
  case pulseAudio
  /// Only ALSA.
  case alsa
}

/// Why an audio device could not be opened or used.
public enum AudioDeviceError: Error, Sendable, Equatable {
  /// No PulseAudio server answered (and ALSA was not allowed or failed too): the reasons.
  case noSoundServer(reason: String)
  /// The named source or sink does not exist on the backend.
  case deviceNotFound(backend: AudioBackend, device: String)
  /// Opening failed for another reason: libpulse's or ALSA's message.
  case openFailed(backend: AudioBackend, reason: String)
  /// Reading captured samples failed (device gone, server died).
  case readFailed(backend: AudioBackend, reason: String)
  /// Writing samples for playback failed.
  case writeFailed(backend: AudioBackend, reason: String)
  /// Listing devices failed: the reason.
  case enumerationFailed(reason: String)
}

extension AudioBackend: CustomStringConvertible {
  /// "PulseAudio" or "ALSA".
  public var description: String {
    switch self {
    case .pulseAudio: "PulseAudio"
    case .alsa: "ALSA"
    }
  }
}

extension AudioDeviceError: CustomStringConvertible {
  /// A sentence naming the sound system, the device and the library's reason.
  public var description: String {
    switch self {
    case .noSoundServer(let reason): "no sound system answered (\(reason))"
    case .deviceNotFound(let backend, let device): "\(backend) has no device \"\(device)\""
    case .openFailed(let backend, let reason): "\(backend) could not open the device: \(reason)"
    case .readFailed(let backend, let reason): "\(backend) capture failed: \(reason)"
    case .writeFailed(let backend, let reason): "\(backend) playback failed: \(reason)"
    case .enumerationFailed(let reason): "listing sound devices failed: \(reason)"
    }
  }
}

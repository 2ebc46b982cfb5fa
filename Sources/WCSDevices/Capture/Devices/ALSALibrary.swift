import CMediaDevices
import Foundation

/// Process-wide libasound settings.
enum ALSALibrary {
  /// Silences libasound's own error printing once (it writes "ALSA lib pcm.c:...: Unknown PCM
  /// default" to stderr on a machine without a sound card, although every failure already
  /// reaches the caller as a typed `AudioDeviceError` with its reason), unless the environment
  /// variable `WCS_ALSA_LOG` is set, to debug with.
  static let quiet: Void = {
    guard ProcessInfo.processInfo.environment["WCS_ALSA_LOG"] == nil else { return }
    wcs_alsa_silence_errors()
  }()
}

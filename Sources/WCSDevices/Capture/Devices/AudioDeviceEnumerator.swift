import CMediaDevices
import Dispatch
import Foundation

/// A microphone (source) or speaker (sink) of the sound system.
public struct AudioDeviceInfo: Sendable, Equatable {
  /// What `AudioCaptureDevice(device:)` / `AudioPlaybackDevice(device:)` open: the PulseAudio
  /// source or sink name, or the ALSA PCM name.
  public var id: String
  /// Human-readable name (PulseAudio description, ALSA `DESC` hint's first line).
  public var label: String
  /// The sound system.
  public var backend: AudioBackend
  /// True for PulseAudio monitor sources (what a sink plays, not a microphone).
  public var isMonitor: Bool

  /// A device description.
  public init(id: String, label: String, backend: AudioBackend, isMonitor: Bool = false) {
    self.id = id
    self.label = label
    self.backend = backend
    self.isMonitor = isMonitor
  }
}

/// Lists microphones and speakers.
///
/// PulseAudio is asked through `pactl -f json list sources|sinks` (pulseaudio-utils; the
/// `pa_context` introspection API is asynchronous and not worth a main loop here). When pactl is
/// missing or no server answers, ALSA's device hints (`snd_device_name_hint(-1, "pcm", ...)`) are
/// listed instead.
public enum AudioDeviceEnumerator {
  /// Result of a listing.
  public struct Listing: Sendable {
    /// Sources, monitors included (check `isMonitor`).
    public var microphones: [AudioDeviceInfo]
    /// Sinks / playback PCMs.
    public var speakers: [AudioDeviceInfo]
    /// Why a backend could not be listed (e.g. PulseAudio not running before falling back).
    public var errors: [AudioDeviceError]
  }

  /// Lists devices on the preferred backend (`.automatic`: PulseAudio, else ALSA).
  /// - Parameters:
  ///   - backend: `.automatic` lists PulseAudio devices, else ALSA's; or one backend only.
  ///   - timeout: the longest each pactl run may take, in seconds.
  public static func list(backend: AudioBackendPreference = .automatic, timeout: Double = 3)
    -> Listing
  {
    var listing = Listing(microphones: [], speakers: [], errors: [])
    if backend != .alsa {
      do throws(AudioDeviceError) {
        listing.microphones = try pulseDevices("sources", timeout: timeout)
        listing.speakers = try pulseDevices("sinks", timeout: timeout)
        return listing
      } catch {
        listing.errors.append(error)
        listing.microphones = []
        listing.speakers = []
        if backend == .pulseAudio { return listing }
      }
    }
    let alsa = alsaDevices()
    listing.microphones = alsa.inputs
    listing.speakers = alsa.outputs
    return listing
  }

  static func pulseDevices(_ kind: String, timeout: Double) throws(AudioDeviceError)
    -> [AudioDeviceInfo]
  {
    let output = try runPactl(["-f", "json", "list", kind], timeout: timeout)
    guard let entries = try? JSONSerialization.jsonObject(with: output) as? [[String: Any]]
    else { throw .enumerationFailed(reason: "pactl printed no JSON list of \(kind)") }
    return entries.compactMap { entry in
      guard let name = entry["name"] as? String else { return nil }
      let label = entry["description"] as? String ?? name
      let monitorOf = entry["monitor_source"] as? String
      return AudioDeviceInfo(
        id: name, label: label, backend: .pulseAudio,
        isMonitor: kind == "sources" && monitorOf.map { !$0.isEmpty } == true
          && name.hasSuffix(".monitor"))
    }
  }

  /// Runs pactl with a bounded wait. Its output goes to a temporary file rather than a pipe, so a
  /// long listing can never fill a pipe buffer and stall the child.
  static func runPactl(_ arguments: [String], timeout: Double) throws(AudioDeviceError) -> Data {
    guard let executable = ChildProcess.find("pactl") else {
      throw .enumerationFailed(reason: "pactl not installed (package pulseaudio-utils)")
    }
    let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent(
      "wcs-pactl-\(UUID().uuidString)"
    ).path
    defer { try? FileManager.default.removeItem(atPath: outputPath) }
    let child: ChildProcess
    do {
      child = try ChildProcess(executable, arguments, outputPath: outputPath)
    } catch {
      throw .enumerationFailed(reason: "pactl: \(error)")
    }
    guard let status = child.waitForExit(timeout: timeout) else {
      child.terminate(grace: 0.5)
      throw .enumerationFailed(reason: "pactl did not answer within \(timeout) s")
    }
    guard status == 0 else { throw .noSoundServer(reason: "pactl exited with \(status)") }
    return FileManager.default.contents(atPath: outputPath) ?? Data()
  }

  static func alsaDevices() -> (inputs: [AudioDeviceInfo], outputs: [AudioDeviceInfo]) {
    var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    ALSALibrary.quiet
    guard snd_device_name_hint(-1, "pcm", &hints) >= 0, let hints else { return ([], []) }
    defer { snd_device_name_free_hint(hints) }
    var inputs: [AudioDeviceInfo] = []
    var outputs: [AudioDeviceInfo] = []
    let cards = soundCardsPresent()
    var cursor = hints
    while let hint = cursor.pointee {
      cursor += 1
      guard let name = takeHint(hint, "NAME"), isSoundCardPCM(name, cardsPresent: cards) else {
        continue
      }
      let label = takeHint(hint, "DESC")?.split(separator: "\n").first.map(String.init) ?? name
      let direction = takeHint(hint, "IOID")
      let info = AudioDeviceInfo(id: name, label: label, backend: .alsa)
      if direction == nil || direction == "Input" { inputs.append(info) }
      if direction == nil || direction == "Output" { outputs.append(info) }
    }
    return (inputs, outputs)
  }

  /// Whether an ALSA PCM name reaches a sound card: `hw:`/`plughw:`/`sysdefault:`/`front:`...
  /// names with a `CARD=`, and `default`/`sysdefault` while the machine has a card. The hints
  /// also list converter and routing plugins with no device behind them (`lavrate`,
  /// `samplerate`, `speexrate`, `upmix`, `jack`, `oss`, `pulse`, `null`), which can never open
  /// as a microphone or speaker on their own; PulseAudio is reached natively.
  static func isSoundCardPCM(_ name: String, cardsPresent: Bool) -> Bool {
    if name.contains("CARD=") { return true }
    return cardsPresent && (name == "default" || name == "sysdefault")
  }

  /// Whether the kernel lists any ALSA card (`/proc/asound/cards`).
  static func soundCardsPresent() -> Bool {
    guard let text = try? String(contentsOfFile: "/proc/asound/cards", encoding: .utf8) else {
      return false
    }
    return !text.contains("no soundcards") && !text.trimmingCharacters(in: .whitespaces).isEmpty
  }

  private static func takeHint(_ hint: UnsafeMutableRawPointer, _ key: String) -> String? {
    guard let value = snd_device_name_get_hint(hint, key) else { return nil }
    defer { free(value) }
    return String(cString: value)
  }
}

import CMediaDevices
import WCSCodecs

/// One open PCM stream (48 kHz, S16LE, interleaved) on PulseAudio or ALSA: blocking reads and
/// writes of whole buffers. Not thread-safe; owners serialise calls.
protocol PCMDeviceStream: AnyObject {
  var backend: AudioBackend { get }
  /// Fills `samples` completely (blocks about `samples.count / channels / 48` ms).
  func read(into samples: inout [Int16]) throws(AudioDeviceError)
  /// Plays all of `samples` (blocks while the device buffer is full).
  func write(_ samples: [Int16]) throws(AudioDeviceError)
  /// Blocks until everything written has been played.
  func drain()
}

enum PCMDirection {
  case capture
  case playback
}

/// Opens a stream on the preferred backend; `.automatic` tries PulseAudio first and falls back to
/// ALSA when no server answers (but not when the server says the device does not exist).
func openPCMDeviceStream(
  direction: PCMDirection, device: String?, channels: Int, preference: AudioBackendPreference,
  applicationName: String
) throws(AudioDeviceError) -> any PCMDeviceStream {
  switch preference {
  case .pulseAudio:
    return try PulseSimpleStream(
      direction: direction, device: device, channels: channels, applicationName: applicationName)
  case .alsa:
    return try ALSAStream(direction: direction, device: device, channels: channels)
  case .automatic:
    let pulseError: AudioDeviceError
    do throws(AudioDeviceError) {
      return try PulseSimpleStream(
        direction: direction, device: device, channels: channels,
        applicationName: applicationName)
    } catch {
      if case .deviceNotFound = error { throw error }
      pulseError = error
    }
    do throws(AudioDeviceError) {
      return try ALSAStream(direction: direction, device: device, channels: channels)
    } catch {
      throw .noSoundServer(reason: "\(pulseError); \(error)")
    }
  }
}

/// `pa_simple` record or playback stream.
final class PulseSimpleStream: PCMDeviceStream {
  let backend = AudioBackend.pulseAudio
  private let stream: OpaquePointer

  init(direction: PCMDirection, device: String?, channels: Int, applicationName: String)
    throws(AudioDeviceError)
  {
    var spec = pa_sample_spec(
      format: PA_SAMPLE_S16LE, rate: UInt32(PCMAudioFrame.sampleRate),
      channels: UInt8(channels == 2 ? 2 : 1))
    // 20 ms fragments keep capture latency at one frame; playback keeps ~60 ms queued.
    let frameBytes = UInt32(PCMAudioFrame.samplesPer20ms * 2 * Int(spec.channels))
    var attributes = pa_buffer_attr(
      maxlength: UInt32.max, tlength: direction == .playback ? 3 * frameBytes : UInt32.max,
      prebuf: UInt32.max, minreq: UInt32.max,
      fragsize: direction == .capture ? frameBytes : UInt32.max)
    var error: Int32 = 0
    let created = pa_simple_new(
      nil, applicationName, direction == .capture ? PA_STREAM_RECORD : PA_STREAM_PLAYBACK, device,
      direction == .capture ? "capture" : "playback", &spec, nil, &attributes, &error)
    guard let created else {
      let reason = String(cString: pa_strerror(error))
      if error == Int32(PA_ERR_NOENTITY.rawValue) {
        throw .deviceNotFound(backend: .pulseAudio, device: device ?? "default")
      }
      throw .openFailed(backend: .pulseAudio, reason: reason)
    }
    stream = created
  }

  deinit { pa_simple_free(stream) }

  func read(into samples: inout [Int16]) throws(AudioDeviceError) {
    var error: Int32 = 0
    let result = samples.withUnsafeMutableBytes {
      pa_simple_read(stream, $0.baseAddress, $0.count, &error)
    }
    guard result >= 0 else {
      throw .readFailed(backend: .pulseAudio, reason: String(cString: pa_strerror(error)))
    }
  }

  func write(_ samples: [Int16]) throws(AudioDeviceError) {
    var error: Int32 = 0
    let result = samples.withUnsafeBytes {
      pa_simple_write(stream, $0.baseAddress, $0.count, &error)
    }
    guard result >= 0 else {
      throw .writeFailed(backend: .pulseAudio, reason: String(cString: pa_strerror(error)))
    }
  }

  func drain() {
    var error: Int32 = 0
    _ = pa_simple_drain(stream, &error)
  }
}

/// ALSA PCM opened with `snd_pcm_set_params` (interleaved S16LE, 48 kHz, software resampling
/// allowed, 100 ms latency).
final class ALSAStream: PCMDeviceStream {
  let backend = AudioBackend.alsa
  private let pcm: OpaquePointer
  private let channels: Int

  init(direction: PCMDirection, device: String?, channels: Int) throws(AudioDeviceError) {
    self.channels = channels == 2 ? 2 : 1
    var handle: OpaquePointer?
    let name = device ?? "default"
    ALSALibrary.quiet
    var result = snd_pcm_open(
      &handle, name, direction == .capture ? SND_PCM_STREAM_CAPTURE : SND_PCM_STREAM_PLAYBACK, 0)
    guard result >= 0, let handle else {
      if result == -ENOENT || result == -ENODEV {
        throw .deviceNotFound(backend: .alsa, device: name)
      }
      throw .openFailed(backend: .alsa, reason: String(cString: snd_strerror(result)))
    }
    result = snd_pcm_set_params(
      handle, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, UInt32(self.channels),
      UInt32(PCMAudioFrame.sampleRate), 1, 100_000)
    guard result >= 0 else {
      snd_pcm_close(handle)
      throw .openFailed(backend: .alsa, reason: String(cString: snd_strerror(result)))
    }
    pcm = handle
  }

  deinit { snd_pcm_close(pcm) }

  func read(into samples: inout [Int16]) throws(AudioDeviceError) {
    let frames = samples.count / channels
    var done = 0
    while done < frames {
      let got = samples.withUnsafeMutableBufferPointer {
        snd_pcm_readi(pcm, $0.baseAddress.map { $0 + done * channels }, UInt(frames - done))
      }
      if got < 0 {
        // An overrun (EPIPE) or a suspend is recovered; anything else ends capture.
        let recovered = snd_pcm_recover(pcm, Int32(got), 1)
        guard recovered >= 0 else {
          throw .readFailed(backend: .alsa, reason: String(cString: snd_strerror(Int32(got))))
        }
        continue
      }
      done += got
    }
  }

  func write(_ samples: [Int16]) throws(AudioDeviceError) {
    let frames = samples.count / channels
    var done = 0
    while done < frames {
      let put = samples.withUnsafeBufferPointer {
        snd_pcm_writei(pcm, $0.baseAddress.map { $0 + done * channels }, UInt(frames - done))
      }
      if put < 0 {
        let recovered = snd_pcm_recover(pcm, Int32(put), 1)
        guard recovered >= 0 else {
          throw .writeFailed(backend: .alsa, reason: String(cString: snd_strerror(Int32(put))))
        }
        continue
      }
      done += put
    }
  }

  func drain() { snd_pcm_drain(pcm) }
}

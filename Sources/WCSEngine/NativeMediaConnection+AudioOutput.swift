import Dispatch
import WCSDevices
import WCSMediaSeam

/// The sound output of a play connection: a `SpeakerPlayoutSink` fed beside the playout sink.
/// Opening and closing a device block, so they never run on the event loop.
extension NativeMediaConnection {
  /// Shared between the app's thread, the loop and the decode queue (behind `audioOutput`).
  struct AudioOutputState {
    var player: SpeakerPlayoutSink?
    /// Why the last requested output could not be opened or stopped working.
    var failure: String?
    /// Bumped by every change, so an open still running for an older request is discarded.
    var generation = 0
    var closed = false
  }

  /// Plays the received audio on `output` (`.none`: stops and closes the device). Opens the
  /// device on the calling thread, before returning.
  /// - Throws: `.audioOutputUnavailable` with the sound system's reason (`AudioDeviceError`)
  ///   or when this connection plays no audio (publish, or no audio part); `.closed` after
  ///   `close()`. The connection itself is never affected.
  public func setAudioOutput(_ output: MediaConnectionRequest.AudioOutput)
    throws(MediaBackendError)
  {
    guard request.receives else {
      throw .audioOutputUnavailable("a publish connection has no played audio")
    }
    guard let audio = request.audio else {
      throw .audioOutputUnavailable("the connection plays no audio")
    }
    guard !audioOutput.withLock({ $0.closed }) else { throw .closed }
    let player: SpeakerPlayoutSink?
    do throws(AudioDeviceError) {
      player = try SpeakerPlayoutSink(output: output, channels: audio.useStereo ? 2 : 1)
    } catch {
      audioOutput.withLock { $0.failure = "\(error)" }
      throw .audioOutputUnavailable("\(error)")
    }
    let (installed, previous) = audioOutput.withLock {
      state -> (Bool, SpeakerPlayoutSink?) in
      guard !state.closed else { return (false, nil) }
      let previous = state.player
      state.player = player
      state.failure = nil
      state.generation += 1
      return (true, previous)
    }
    previous?.close()
    guard installed else {
      player?.close()
      throw .closed
    }
  }

  /// The sound output playing this connection's audio now: the sink (counters, write failure),
  /// `nil` when there is none.
  public var audioOutputSink: SpeakerPlayoutSink? { audioOutput.withLock { $0.player } }

  /// Why the requested sound output is not playing: the device could not be opened
  /// (`request.audio.output` or `setAudioOutput`) or a write failed; `nil` otherwise.
  public var audioOutputFailure: String? {
    audioOutput.withLock { state in
      state.failure ?? state.player?.failure.map { "\($0)" }
    }
  }

  /// Opens the request's output off the loop; a failure is kept in `audioOutputFailure` and
  /// the connection goes on without it. A `setAudioOutput` call made before (or while the
  /// device opens) wins over the request.
  func openRequestedAudioOutput(_ output: MediaConnectionRequest.AudioOutput, channels: Int) {
    guard output != .none else { return }
    let generation = audioOutput.withLock { $0.generation }
    guard generation == 0 else { return }
    DispatchQueue.global(qos: .userInitiated).async { [weak self] in
      let opened: Result<SpeakerPlayoutSink?, AudioDeviceError>
      do throws(AudioDeviceError) {
        opened = .success(try SpeakerPlayoutSink(output: output, channels: channels))
      } catch {
        opened = .failure(error)
      }
      guard let self else {
        if case .success(let player) = opened { player?.close() }
        return
      }
      let unused = self.audioOutput.withLock { state -> SpeakerPlayoutSink? in
        guard !state.closed, state.generation == generation else {
          return try? opened.get()
        }
        switch opened {
        case .success(let player): state.player = player
        case .failure(let error): state.failure = "\(error)"
        }
        return nil
      }
      unused?.close()
    }
  }

  /// Stops the output for good (connection closed); the device closes off the loop.
  func closeAudioOutput() {
    let player = audioOutput.withLock { state -> SpeakerPlayoutSink? in
      state.closed = true
      defer { state.player = nil }
      return state.player
    }
    guard let player else { return }
    DispatchQueue.global(qos: .userInitiated).async { player.close() }
  }
}

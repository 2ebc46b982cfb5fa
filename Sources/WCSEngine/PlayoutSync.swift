import Synchronization
import WCSProtocols

/// The lip sync of one play connection, shared by its loop (SRs), its audio track (frames
/// played) and its video track (frames rendered): a `PlayoutSynchronizer` behind a mutex, with
/// `ContinuousClock` as the time source.
final class PlayoutSync: Sendable {
  private let state: Mutex<PlayoutSynchronizer>
  /// The Opus encoder's lookahead at 48 kHz for the VOIP/audio applications (libopus
  /// `OPUS_GET_LOOKAHEAD`: 2.5 ms + 4 ms delay compensation): the sound decoded at RTP timestamp
  /// T was captured at T − 312.
  static let opusEncoderDelay: UInt32 = 312

  init(configuration: PlayoutSynchronizer.Configuration = .init()) {
    state = Mutex(PlayoutSynchronizer(configuration: configuration))
  }

  /// Takes a receive stream's SR (on the loop).
  func senderReport(
    isVideo: Bool, _ report: (ntp: NTPTimestamp, rtpTimestamp: UInt32)?, clockRate: Int
  ) {
    guard let report else { return }
    state.withLock {
      $0.senderReport(
        isVideo ? .video : .audio, ntp: report.ntp, rtpTimestamp: report.rtpTimestamp,
        clockRate: clockRate)
    }
  }

  /// Audio frames of `output` were handed to the sink at `now`; returns the extra delay audio
  /// should have from now on.
  func audioPlayed(
    _ output: AudioDelayLine.Output, appliedExtraDelay: MediaDuration, at now: MediaInstant
  ) -> MediaDuration {
    audioPlayed(timestamp: output.playedTimestamp, appliedExtraDelay: appliedExtraDelay, at: now)
  }

  /// `audioPlayed(_:appliedExtraDelay:at:)` with the output's `playedTimestamp`.
  func audioPlayed(
    timestamp playedTimestamp: UInt32?, appliedExtraDelay: MediaDuration, at now: MediaInstant
  ) -> MediaDuration {
    state.withLock {
      if let timestamp = playedTimestamp {
        $0.audioPlayed(
          rtpTimestamp: timestamp &- Self.opusEncoderDelay, appliedExtraDelay: appliedExtraDelay,
          at: now)
      }
      return $0.audioExtraDelay
    }
  }

  /// A frame with `rtpTimestamp` was rendered at `now` after being held `heldFor`.
  func videoRendered(rtpTimestamp: UInt32, heldFor: MediaDuration, at now: MediaInstant) {
    state.withLock {
      $0.videoRendered(rtpTimestamp: rtpTimestamp, appliedExtraDelay: heldFor, at: now)
    }
  }

  /// The extra delay video should have now.
  var videoExtraDelay: MediaDuration { state.withLock { $0.videoExtraDelay } }

  /// The synchronizer's state (for statistics and tests).
  var snapshot: PlayoutSynchronizer { state.withLock { $0 } }
}

extension NativeMediaConnection {
  /// Hands the SR just recorded by the receive stream of `ssrc` to the lip sync. On the loop.
  func feedPlayoutSync(senderReportOf ssrc: UInt32) {
    guard let playoutSync, let (kind, source) = playSession.source(of: ssrc) else { return }
    playoutSync.senderReport(
      isVideo: kind == .video, source.lastSenderReport,
      clockRate: source.configuration.clockRate)
  }
}

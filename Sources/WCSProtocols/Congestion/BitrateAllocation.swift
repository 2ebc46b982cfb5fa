/// Splits the estimator's target between the audio and video encoders of one peer connection.
///
/// Audio gets its Opus bitrate (`audioPreferred`, clamped to `audioRange`) unless that would
/// push video under its minimum, in which case audio drops towards `audioRange.lowerBound`;
/// video gets the rest, clamped to `videoRange`. When the target is below both minimums the sum
/// exceeds the target: minimums come from the constraints and are never broken here (the
/// NOT_ENOUGH_BANDWIDTH detector reports that case).
public struct BitrateAllocation: Sendable, Equatable {
  /// Audio encoder bitrate, bps (0 without audio).
  public var audio: Int
  /// Video encoder bitrate, bps (0 without video).
  public var video: Int

  /// Creates an allocation (bps).
  public init(audio: Int, video: Int) {
    self.audio = audio
    self.video = video
  }

  /// Splits `target` (bps). Pass `nil` for a missing track. Ranges and `audioPreferred` in bps.
  public static func split(
    target: Int, audioRange: ClosedRange<Int>?, audioPreferred: Int,
    videoRange: ClosedRange<Int>?
  ) -> BitrateAllocation {
    let target = max(0, target)
    var audio = 0
    if let audioRange {
      audio = min(max(audioPreferred, audioRange.lowerBound), audioRange.upperBound)
      if let videoRange, target - audio < videoRange.lowerBound {
        audio = max(audioRange.lowerBound, min(audio, target - videoRange.lowerBound))
      }
      if videoRange == nil { audio = min(max(target, audioRange.lowerBound), audio) }
    }
    guard let videoRange else { return BitrateAllocation(audio: audio, video: 0) }
    let video = min(max(target - audio, videoRange.lowerBound), videoRange.upperBound)
    return BitrateAllocation(audio: audio, video: video)
  }
}

/// What a media file contains, read from its container and stream headers.
public struct MediaFileInfo: Equatable, Sendable {
  /// The video stream that is decoded (FFmpeg's best video stream).
  public struct Video: Equatable, Sendable {
    /// FFmpeg's codec name: "h264", "vp8", "hevc", "mpeg4", ...
    public var codecName: String
    /// Coded picture width in pixels.
    public var width: Int
    /// Coded picture height in pixels.
    public var height: Int
    /// Average frames per second from the container (0 when unknown).
    public var framesPerSecond: Double
  }

  /// The audio stream that is decoded (FFmpeg's best audio stream).
  public struct Audio: Equatable, Sendable {
    /// FFmpeg's codec name: "aac", "opus", "mp3", "pcm_s16le", ...
    public var codecName: String
    /// The stream's own sample rate in Hz (output is resampled to 48 000).
    public var sampleRate: Int
    /// The stream's own channel count (output is mono or stereo as requested).
    public var channels: Int
  }

  /// Container format name(s), e.g. "mov,mp4,m4a,3gp,3g2,mj2" or "matroska,webm".
  public var formatName: String
  /// Length in seconds, when the container says.
  public var durationSeconds: Double?
  /// The video stream, if the file has one.
  public var video: Video?
  /// The audio stream, if the file has one.
  public var audio: Audio?
}

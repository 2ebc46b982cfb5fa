import Foundation
import Synchronization
import WCSCodecs
import WCSMediaSeam

/// Where a played stream's decoded audio goes: 20 ms blocks of 48 kHz PCM, in playout order.
///
/// `play` is called on the connection's event loop thread (the one that receives its packets),
/// like a sound card's real-time callback: it must return quickly and never block; queue slow
/// work (`SpeakerPlayoutSink` hands blocks to its device's own queue).
public protocol PlayoutAudioSink: AnyObject, Sendable {
  /// Takes one block (960 samples per channel, interleaved), on the event loop.
  func play(_ frame: AudioFrame)
}

/// A `PlayoutAudioSink` that calls a closure.
public final class PlayoutAudioCallbackSink: PlayoutAudioSink {
  private let handler: @Sendable (AudioFrame) -> Void

  /// Calls `handler` with every block.
  public init(_ handler: @escaping @Sendable (AudioFrame) -> Void) { self.handler = handler }

  /// Hands `frame` to the closure.
  public func play(_ frame: AudioFrame) { handler(frame) }
}

/// A `PlayoutAudioSink` writing a WAV file (48 kHz, 16-bit, the stream's channels); `close()`
/// finishes the header.
public final class WAVPlayoutSink: PlayoutAudioSink, Sendable {
  private let lock: Mutex<WAVWriter?>

  /// Creates the file at `url`; throws `MediaFileError` when it cannot be written.
  public init(url: URL, channels: Int = 1) throws(MediaFileError) {
    lock = Mutex(try WAVWriter(url: url, sampleRate: PCMAudioFrame.sampleRate, channels: channels))
  }

  /// Appends `frame`'s samples (blocks with another channel count are dropped).
  public func play(_ frame: AudioFrame) {
    lock.withLock { writer in
      guard let writer, writer.channels == frame.channels else { return }
      try? writer.write(samples: frame.samples)
    }
  }

  /// Finishes the file; later blocks are dropped. Throws `MediaFileError` on a write error.
  public func close() throws(MediaFileError) {
    let writer = lock.withLock { value -> WAVWriter? in
      defer { value = nil }
      return value
    }
    try writer?.close()
  }
}

import Foundation
import Synchronization
import WCSMedia

/// The microphone level of the local media test (the iOS example's level bar): reads the
/// chosen microphone — the virtual tone or a file source — in real time on its own thread and
/// keeps the RMS of the last 20 ms block.
public final class MicrophoneLevelMeter: Sendable {
  private let level = Mutex(0.0)
  private let running = Mutex(true)

  /// Starts metering `deviceID` (`nil`: the virtual microphone). Returns `nil` for a device it
  /// cannot read.
  public static func start(deviceID: String?) -> MicrophoneLevelMeter? {
    let id = deviceID ?? NativeMediaDevices.virtualMicrophoneID
    let next: () -> [Int16]?
    if id == NativeMediaDevices.virtualMicrophoneID {
      let microphone = VirtualMicrophone()
      var index = 0
      next = {
        defer { index += 1 }
        return microphone.frame(index).samples
      }
    } else if let path = NativeMediaDevices.filePath(fromID: id),
      let reader = try? MediaFileReader(path: path, audioChannels: 1, decodeVideo: false)
    {
      next = {
        while let sample = try? reader.nextSample() {
          if case .audio(let chunk) = sample { return chunk.samples }
        }
        try? reader.rewind()
        return nil
      }
    } else {
      return nil
    }
    let meter = MicrophoneLevelMeter()
    let box = UncheckedBlock(next)
    Thread.detachNewThread {
      while meter.running.withLock({ $0 }) {
        if let samples = box.block() {
          let rms = AudioLevel.rms(samples)
          meter.level.withLock { $0 = rms }
        }
        Thread.sleep(forTimeInterval: 0.02)
      }
    }
    return meter
  }

  /// RMS of the last block, 0...1.
  public var current: Double { level.withLock { $0 } }

  /// Stops reading.
  public func stop() { running.withLock { $0 = false } }
}

/// Moves a non-Sendable block to the one thread that calls it.
private final class UncheckedBlock: @unchecked Sendable {
  // @unchecked Sendable: created on one thread and then called only by the meter's thread.
  let block: () -> [Int16]?
  init(_ block: @escaping () -> [Int16]?) { self.block = block }
}

import BenchSupport
import Foundation
import Synchronization
import WCSMedia

/// The pictures one side saw, by VirtualCamera frame number (the band on top of each picture),
/// with the arrival time of each new one: what "decoded / sent" and "longest freeze" are made of.
final class FrameLog: Sendable {
  private struct State {
    var numbers = Set<UInt32>()
    var arrivals: [(number: UInt32, time: ContinuousClock.Instant)] = []
    var lastNumber: UInt32?
    var unreadable = 0
  }
  private let state = Mutex(State())

  /// A renderer feeding this log (reads only the band's rows: no whole-picture copy).
  var renderer: VideoFrameCallbackRenderer {
    VideoFrameCallbackRenderer { [self] frame in add(frame) }
  }

  func add(_ frame: VideoFrame) {
    let now = ContinuousClock.now
    let number = Self.frameNumber(of: frame)
    state.withLock { state in
      guard let number else {
        state.unreadable += 1
        return
      }
      // A picture counts once, and only when it is newer than the last one shown: a repeated
      // or older one is no new picture for the viewer.
      guard state.numbers.insert(number).inserted else { return }
      if let last = state.lastNumber, number < last { return }
      state.lastNumber = number
      state.arrivals.append((number, now))
    }
  }

  /// Adds numbers seen elsewhere (aiortc's report), without arrival times.
  func add(numbers: [UInt32]) {
    state.withLock { $0.numbers.formUnion(numbers) }
  }

  var numbers: Set<UInt32> { state.withLock { $0.numbers } }
  var lastNumber: UInt32? { state.withLock { $0.lastNumber } }
  var firstArrival: ContinuousClock.Instant? { state.withLock { $0.arrivals.first?.time } }

  /// The longest time without a new picture between the first one and `end`, in seconds.
  func longestGap(until end: ContinuousClock.Instant) -> Double? {
    state.withLock { state in
      guard var previous = state.arrivals.first?.time else { return nil }
      var longest = Duration.zero
      for arrival in state.arrivals.dropFirst() where arrival.time <= end {
        longest = max(longest, arrival.time - previous)
        previous = arrival.time
      }
      longest = max(longest, end - previous)
      return longest.seconds
    }
  }

  /// The frame number in the top band of `frame`, read from the band's rows alone.
  static func frameNumber(of frame: VideoFrame) -> UInt32? {
    // VirtualCamera's band is at most 16 rows (its block size) high, chroma half that.
    let rows = min(frame.height, 16)
    let chromaRows = (rows + 1) / 2
    guard frame.dataY.count >= frame.strideY * rows,
      frame.dataU.count >= frame.strideU * chromaRows,
      frame.dataV.count >= frame.strideV * chromaRows,
      let band = I420Image(
        width: frame.width, height: rows, y: [UInt8](frame.dataY.prefix(frame.strideY * rows)),
        strideY: frame.strideY, u: [UInt8](frame.dataU.prefix(frame.strideU * chromaRows)),
        strideU: frame.strideU, v: [UInt8](frame.dataV.prefix(frame.strideV * chromaRows)),
        strideV: frame.strideV)
    else { return nil }
    return VirtualCamera.decodeFrameNumber(from: band)
  }
}

/// What one leg of a run measured (publisher → player), as the child prints it.
struct LegResult: Codable, Sendable {
  /// "server" (publisher → wcs-local-server relay → player), "aiortc-publish" (we publish,
  /// aiortc decodes) or "aiortc-play" (aiortc sends, we decode).
  var leg: String
  /// Frames sent from the first decoded one to the end of the run.
  var sent = 0
  /// Of those, how many the receiving side decoded.
  var decoded = 0
  /// Longest time without a new picture, from the first decoded picture to the end (s).
  var longestGap: Double?
  /// Seconds from publish() / the publish offer to PUBLISHING / connected.
  var toPublishing: Double?
  /// Seconds from play() / the play offer to PLAYING / connected.
  var toPlaying: Double?
  /// Seconds from PLAYING (or connected) to the first decoded picture.
  var firstFrame: Double?
  /// Recovery counters of our side of the leg (nil where not visible).
  var nacksSent: Int?
  var retransmissions: Int?
  var plisSent: Int?
  var keyFrameRequests: Int?
  var keyFramesEncoded: Int?
  var packetsLost: Int64?
  /// Missing packets that arrived after all (our receiver) and RTP packets our sender could not
  /// send (SRTP or the socket refused them).
  var packetsRecovered: Int?
  var sendFailures: Int?
  /// Packets our receiver restored from an RTX stream (RFC 4588).
  var rtxReceived: Int?
  /// The codec the player decoded (`"VP8"`, `"H264"`), where visible.
  var videoCodec: String?
  /// Why the run failed (a status FAILED, no picture), nil when it ran to the end.
  var failure: String?

  init(leg: String) { self.leg = leg }

  var share: Double { sent > 0 ? Double(decoded) / Double(sent) : 0 }

  /// Fills `sent` and `decoded` from the frame numbers `sent` (all those sent up to the end)
  /// and those `received`: counted from the first number received on.
  mutating func count(sent sentNumbers: Set<UInt32>, received: Set<UInt32>) {
    guard let first = received.min() else {
      sent = sentNumbers.count
      decoded = 0
      return
    }
    let due = sentNumbers.filter { $0 >= first }
    sent = due.count
    decoded = due.intersection(received).count
  }
}

/// The child's result line: a marker, then JSON.
enum ResultLine {
  static let marker = "LOSSBENCH-RESULT "

  static func print(_ legs: [LegResult]) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    guard let data = try? encoder.encode(legs), let text = String(data: data, encoding: .utf8)
    else { return }
    Swift.print(marker + text)
    fflush(nil)
  }

  static func parse(_ output: String) -> [LegResult]? {
    guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix(marker) }) else {
      return nil
    }
    return try? JSONDecoder().decode(
      [LegResult].self, from: Data(line.dropFirst(marker.count).utf8))
  }
}

/// Waits for a completion-style call.
func wait<T: Sendable>(timeout: Double = 20, _ body: (@escaping @Sendable (T) -> Void) -> Void)
  -> T?
{
  let box = Mutex<T?>(nil)
  let done = DispatchSemaphore(value: 0)
  body { value in
    box.withLock { $0 = value }
    done.signal()
  }
  _ = done.wait(timeout: .now() + timeout)
  return box.withLock { $0 }
}

/// Named moments of a run (status callbacks arrive on other threads).
final class Events: Sendable {
  private let times = Mutex<[String: ContinuousClock.Instant]>([:])

  func mark(_ name: String) {
    let now = ContinuousClock.now
    times.withLock { if $0[name] == nil { $0[name] = now } }
  }

  func time(_ name: String) -> ContinuousClock.Instant? { times.withLock { $0[name] } }

  func seconds(from start: String, to end: String) -> Double? {
    guard let from = time(start), let to = time(end) else { return nil }
    return (to - from).seconds
  }

  /// Waits until one of `names` happened (polling; callbacks come on their own queues).
  @discardableResult
  func wait(for names: [String], timeout: Double) -> String? {
    let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
    while ContinuousClock.now < deadline {
      if let name = times.withLock({ state in names.first { state[$0] != nil } }) { return name }
      Thread.sleep(forTimeInterval: 0.002)
    }
    return nil
  }
}

import FPWCSApi2Swift
import Foundation
import Synchronization
import WCSMedia

/// `--report FILE`: one self-contained HTML page of a run — thumbnails of the source and the
/// played video side by side at a few instants, charts over time (bitrates, frame rate, loss,
/// RTT, bandwidth estimate), the status timeline and the summary table. Everything is inline:
/// SVG drawn by this code, thumbnails as `data:` PNGs, no script and nothing fetched.
public final class RunReport: Sendable {
  /// The usage line of `--report`.
  public static let usage = """
      --report FILE        write an HTML page of the run: thumbnails, charts, timeline, summary
    """

  /// One sample of the counters, `time` seconds into the run.
  public struct Sample: Sendable, Equatable {
    /// Seconds since the program started.
    public var time: Double
    /// Video bitrate the publisher sends, kbit/s.
    public var sentKbps: Double?
    /// Video bitrate the player receives, kbit/s.
    public var receivedKbps: Double?
    /// Frames decoded per second by the player since the previous sample.
    public var decodedFPS: Double?
    /// Packets lost since the previous sample, percent of those expected.
    public var lossPercent: Double?
    /// Round-trip time from RTCP (RFC 3550 §6.4.1), ms.
    public var rttMs: Double?
    /// The sender's bandwidth estimate (`availableOutgoingBitrate`), kbit/s.
    public var estimateKbps: Double?
    /// The player's video jitter-buffer delay, ms, when the engine reports one.
    public var jitterBufferMs: Double?
    /// The delay that jitter buffer moves towards, ms.
    public var jitterBufferTargetMs: Double?
    /// The player's audio arrival-to-playout delay, ms.
    public var audioPlayoutMs: Double?

    /// A sample at `time` with no figures yet.
    public init(time: Double) { self.time = time }
  }

  /// Thumbnails taken at one instant: PNG bytes of the source and the played picture.
  public struct Thumbnails: Sendable, Equatable {
    /// Seconds since the program started.
    public var time: Double
    /// The published picture, PNG.
    public var source: [UInt8]?
    /// The played picture, PNG.
    public var played: [UInt8]?
  }

  private struct State {
    var samples: [Sample] = []
    var thumbnails: [Thumbnails] = []
    var previous: (time: Double, decoded: Int, received: UInt64, lost: Int64)?
  }

  /// Width of the thumbnails, pixels.
  public static let thumbnailWidth = 240
  /// Samples kept at most (an hour at one a second).
  public static let maxSamples = 3600
  /// Thumbnail pairs kept at most.
  public static let maxThumbnails = 8

  public let title: String
  private let state = Mutex(State())

  /// A report titled `title`.
  public init(title: String) { self.title = title }

  /// The report the command line asks for (`--report FILE`), with its path.
  public static func requested(_ arguments: ExampleArguments, title: String) -> (
    RunReport, String
  )? {
    arguments.string("report").map { (RunReport(title: title), $0) }
  }

  /// Adds a sample from the publisher's and the player's statistics (either may be nil).
  public func sample(
    at time: Double, publisher: FPWCSApi2StreamStats?, player: FPWCSApi2StreamStats?
  ) {
    var sample = Sample(time: time)
    if let publisher {
      sample.sentKbps = Double(publisher.currentVideoBitrate) / 1000
      if publisher.availableOutgoingBitrate > 0 {
        sample.estimateKbps = Double(publisher.availableOutgoingBitrate) / 1000
      }
      sample.rttMs = publisher.detailed?.roundTripTime.map { $0 * 1000 }
    }
    state.withLock { s in
      if let player {
        sample.receivedKbps = Double(player.currentVideoBitrate) / 1000
        if sample.rttMs == nil { sample.rttMs = player.detailed?.roundTripTime.map { $0 * 1000 } }
        sample.jitterBufferMs = player.playoutDelay?.videoJitterBuffer
        sample.jitterBufferTargetMs = player.playoutDelay?.videoJitterBufferTarget
        sample.audioPlayoutMs = player.playoutDelay?.audio
        let decoded = player.detailed?.framesDecoded ?? 0
        let received = player.connection.packetsReceived
        let lost = player.connection.packetsLost
        if let p = s.previous, time > p.time {
          sample.decodedFPS = Double(decoded - p.decoded) / (time - p.time)
          let newLost = Double(max(0, lost - p.lost))
          let expected = Double(received &- p.received) + newLost
          sample.lossPercent = expected > 0 ? 100 * newLost / expected : 0
        }
        s.previous = (time, decoded, received, lost)
      }
      if s.samples.count < Self.maxSamples { s.samples.append(sample) }
    }
  }

  /// Reads both streams' statistics now and samples them; every other call also takes the
  /// thumbnails (`source`: the published picture, if the program has it).
  public func sampleStreams(
    at time: Double, publisher: FPWCSApi2Stream?, player: FPWCSApi2Stream?, source: I420Image?
  ) {
    let count = state.withLock { $0.samples.count }
    sample(at: time, publisher: ExampleStats.read(publisher), player: ExampleStats.read(player))
    if count % 2 == 0 {
      thumbnails(at: time, source: source, played: player?.lastPlayedPicture)
    }
  }

  /// `sampleStreams(at:publisher:player:source:)` with `session`'s first published and first
  /// played stream.
  public func sampleStreams(at time: Double, of session: FPWCSApi2Session, source: I420Image?) {
    let streams = session.getStreams()
    sampleStreams(
      at: time, publisher: streams.first { $0.isPublished() },
      player: streams.first { !$0.isPublished() }, source: source)
  }

  /// Adds a raw sample (tests, other programs).
  public func add(_ sample: Sample) {
    state.withLock { s in if s.samples.count < Self.maxSamples { s.samples.append(sample) } }
  }

  /// Takes thumbnails of `source` and `played` (scaled to `thumbnailWidth`) at `time`.
  public func thumbnails(at time: Double, source: I420Image?, played: I420Image?) {
    func png(_ image: I420Image?) -> [UInt8]? {
      guard let image, image.width > 0 else { return nil }
      let width = min(Self.thumbnailWidth, image.width)
      let height = max(2, (image.height * width / image.width) & ~1)
      guard let small = image.scaled(toWidth: width, height: height) else { return nil }
      return try? PictureFile.png(small)
    }
    let pair = Thumbnails(time: time, source: png(source), played: png(played))
    state.withLock { s in if s.thumbnails.count < Self.maxThumbnails { s.thumbnails.append(pair) } }
  }

  /// The samples so far.
  public var samples: [Sample] { state.withLock { $0.samples } }

  /// The page: `timeline` is (seconds, status line) in order, `summary` the summary's entries.
  public func html(
    timeline: [(time: Double, text: String)], summary: ExampleSummary
  ) -> String {
    let (samples, thumbnails) = state.withLock { ($0.samples, $0.thumbnails) }
    var page = """
      <!DOCTYPE html>
      <html lang="en"><head><meta charset="utf-8"><title>\(Self.escape(title))</title>
      <style>
      body{font:14px sans-serif;margin:24px;color:#222;background:#fff}
      h1{font-size:20px}h2{font-size:16px;margin-top:28px}
      .thumbs{display:flex;flex-wrap:wrap;gap:16px}.pair{border:1px solid #ccc;padding:6px}
      .pair img{display:block;margin:2px}.charts{display:flex;flex-wrap:wrap;gap:12px}
      table{border-collapse:collapse}td{border:1px solid #ddd;padding:3px 8px}
      .ok{color:#080;font-weight:bold}.failed{color:#b00;font-weight:bold}
      </style></head><body>
      <h1>\(Self.escape(title))</h1>

      """
    page +=
      summary.succeeded
      ? "<p class=\"result ok\">Result: OK</p>\n"
      : "<p class=\"result failed\">Result: FAILED</p>\n"
    page += "<h2>Source and played video</h2>\n<div class=\"thumbs\">\n"
    for pair in thumbnails {
      page +=
        "<div class=\"pair\"><div>\(Self.format(pair.time)) s</div><div style=\"display:flex\">"
      for (label, png) in [("source", pair.source), ("played", pair.played)] {
        if let png {
          page +=
            "<figure style=\"margin:0\"><img class=\"thumb \(label)\" alt=\"\(label)\" src=\"data:image/png;base64,"
            + Data(png).base64EncodedString() + "\"><figcaption>\(label)</figcaption></figure>"
        } else {
          page += "<figure style=\"margin:0\"><figcaption>no \(label) picture</figcaption></figure>"
        }
      }
      page += "</div></div>\n"
    }
    page += "</div>\n<h2>Over time</h2>\n<div class=\"charts\">\n"
    let charts: [(String, String, [(String, String, KeyPath<Sample, Double?>)])] = [
      (
        "Video bitrate", "kbit/s",
        [
          ("sent", "#1f77b4", \Sample.sentKbps), ("received", "#ff7f0e", \Sample.receivedKbps),
          ("estimate", "#2ca02c", \Sample.estimateKbps),
        ]
      ),
      ("Frame rate decoded", "frames/s", [("decoded", "#9467bd", \Sample.decodedFPS)]),
      ("Loss", "%", [("lost", "#d62728", \Sample.lossPercent)]),
      ("Round-trip time", "ms", [("RTT", "#8c564b", \Sample.rttMs)]),
      (
        "Jitter-buffer delay", "ms",
        [
          ("video", "#e377c2", \Sample.jitterBufferMs),
          ("video target", "#7f7f7f", \Sample.jitterBufferTargetMs),
          ("audio", "#17becf", \Sample.audioPlayoutMs),
        ]
      ),
    ]
    for (name, unit, series) in charts {
      page += Self.chart(name, unit: unit, series: series, samples: samples) + "\n"
    }
    page += "</div>\n<h2>Status timeline</h2>\n"
    page += Self.timeline(timeline) + "\n"
    page += "<h2>Summary</h2>\n<table class=\"summary\">\n"
    for entry in summary.entries {
      page += "<tr><td>\(Self.escape(entry.label))</td><td>\(Self.escape(entry.value))</td></tr>\n"
    }
    for failure in summary.failures {
      page += "<tr><td class=\"failed\">FAILED</td><td>\(Self.escape(failure))</td></tr>\n"
    }
    page += "</table>\n</body></html>\n"
    return page
  }

  /// Writes `html(...)` to `path`.
  public func write(
    to path: String, timeline: [(time: Double, text: String)], summary: ExampleSummary
  ) throws {
    try Data(html(timeline: timeline, summary: summary).utf8).write(
      to: URL(fileURLWithPath: path))
  }

  /// The status lines of `log` (stream and session statuses, first frames, windows, failures)
  /// with their times: the page's timeline.
  public static func timeline(of log: ExampleLog) -> [(time: Double, text: String)] {
    let keywords = [
      "ESTABLISHED", "PUBLISHING", "PLAYING", "STOPPED", "UNPUBLISHED", "FAILED", "DISCONNECTED",
      "NOT_ENOUGH_BANDWIDTH", "first ", "window", "switch",
    ]
    return log.printedLines.compactMap { line in
      guard line.hasPrefix("["), let close = line.firstIndex(of: "]"),
        let time = Double(
          line[line.index(after: line.startIndex)..<close].trimmingCharacters(in: .whitespaces))
      else { return nil }
      let text = String(line[line.index(after: close)...]).trimmingCharacters(in: .whitespaces)
      guard keywords.contains(where: { text.contains($0) }) else { return nil }
      return (time, text)
    }
  }

  /// Adds "Report written to" to `summary` and writes the page to `path`; a write error fails
  /// the summary instead.
  public func finish(writingTo path: String, log: ExampleLog, summary: inout ExampleSummary) {
    summary.add("Report written to", path)
    do {
      try write(to: path, timeline: Self.timeline(of: log), summary: summary)
    } catch {
      summary.fail("report not written to \(path): \(error.localizedDescription)")
    }
  }

  // MARK: - Drawing

  static let chartWidth = 420.0
  static let chartHeight = 180.0
  static let margin = (left: 48.0, right: 10.0, top: 22.0, bottom: 28.0)

  /// One line chart: a polyline per series with figures, axes with their ranges.
  static func chart(
    _ name: String, unit: String, series: [(String, String, KeyPath<Sample, Double?>)],
    samples: [Sample]
  ) -> String {
    let plotted = series.map { s in
      (s.0, s.1, samples.compactMap { sample in sample[keyPath: s.2].map { (sample.time, $0) } })
    }
    let points = plotted.flatMap(\.2)
    var svg =
      "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(chartWidth))\" "
      + "height=\"\(Int(chartHeight))\" role=\"img\" aria-label=\"\(escape(name))\">"
      + "<text x=\"4\" y=\"14\" font-size=\"13\" font-weight=\"bold\">\(escape(name)) (\(unit))</text>"
    let left = margin.left
    let right = chartWidth - margin.right
    let top = margin.top
    let bottom = chartHeight - margin.bottom
    svg +=
      "<line x1=\"\(left)\" y1=\"\(bottom)\" x2=\"\(right)\" y2=\"\(bottom)\" stroke=\"#888\"/>"
      + "<line x1=\"\(left)\" y1=\"\(top)\" x2=\"\(left)\" y2=\"\(bottom)\" stroke=\"#888\"/>"
    guard let t0 = points.map(\.0).min(), let t1 = points.map(\.0).max() else {
      return svg
        + "<text class=\"nodata\" x=\"\(left + 10)\" y=\"\((top + bottom) / 2)\" fill=\"#888\">"
        + "not measured in this run</text></svg>"
    }
    let vMax = max(points.map(\.1).max() ?? 1, 1e-9) * 1.1
    let span = max(t1 - t0, 1e-9)
    func x(_ t: Double) -> Double { left + (t - t0) / span * (right - left) }
    func y(_ v: Double) -> Double { bottom - max(0, v) / vMax * (bottom - top) }
    svg +=
      "<text x=\"\(left - 4)\" y=\"\(top + 4)\" font-size=\"11\" text-anchor=\"end\">\(format(vMax))</text>"
      + "<text x=\"\(left - 4)\" y=\"\(bottom)\" font-size=\"11\" text-anchor=\"end\">0</text>"
      + "<text x=\"\(left)\" y=\"\(bottom + 14)\" font-size=\"11\">\(format(t0)) s</text>"
      + "<text x=\"\(right)\" y=\"\(bottom + 14)\" font-size=\"11\" text-anchor=\"end\">\(format(t1)) s</text>"
    for (index, (label, colour, values)) in plotted.enumerated() where !values.isEmpty {
      let coordinates = values.map { "\(format(x($0.0))),\(format(y($0.1)))" }
      svg +=
        "<polyline class=\"series\" fill=\"none\" stroke=\"\(colour)\" stroke-width=\"2\" "
        + "points=\"\(coordinates.joined(separator: " "))\"/>"
      svg +=
        "<text x=\"\(left + 8 + Double(index) * 90)\" y=\"\(bottom + 24)\" font-size=\"11\" "
        + "fill=\"\(colour)\">\(escape(label))</text>"
    }
    return svg + "</svg>"
  }

  /// The status lines on a time axis, then as a list.
  static func timeline(_ events: [(time: Double, text: String)]) -> String {
    let width = 860.0
    let height = 60.0
    let end = max(events.map(\.time).max() ?? 1, 1e-9)
    var svg =
      "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" "
      + "height=\"\(Int(height))\"><line x1=\"10\" y1=\"30\" x2=\"\(width - 10)\" y2=\"30\" "
      + "stroke=\"#888\"/>"
    for event in events {
      let x = 10 + event.time / end * (width - 20)
      let colour = event.text.contains("FAILED") ? "#b00" : "#1f77b4"
      svg +=
        "<circle class=\"event\" cx=\"\(format(x))\" cy=\"30\" r=\"5\" fill=\"\(colour)\">"
        + "<title>\(format(event.time)) s: \(escape(event.text))</title></circle>"
    }
    svg += "</svg>\n<ol class=\"events\">"
    for event in events {
      svg += "<li>\(format(event.time)) s — \(escape(event.text))</li>"
    }
    return svg + "</ol>"
  }

  static func format(_ value: Double) -> String {
    String(format: value.magnitude >= 100 ? "%.0f" : "%.2f", value)
  }

  static func escape(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
      .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
  }
}

import FPWCSApi2Swift
import Foundation
import Synchronization

/// HTTP Basic authorization for the WebSocket upgrade (RFC 7617 §2), as the iOS MediaDevices
/// example builds it from a URL's `user:password@`: the credentials leave the URL and go into
/// an `Authorization` header for `connect(withHeaders:)`.
public struct BasicAuthorization: Sendable, Equatable {
  /// The URL to connect to, without credentials.
  public var url: String
  /// The user name, `nil` without credentials.
  public var user: String?
  /// `Basic <base64 of user:password>`, `nil` without credentials.
  public var header: String?

  /// Takes the credentials from `credentials` (`user:password`, or a bare user name with an
  /// empty password) when given, else from `url`'s user info (percent-decoded), and removes
  /// any user info from the URL.
  public init(url: String, credentials: String?) {
    var components = URLComponents(string: url)
    let fromURL = components?.user.map { user in
      user + ":" + (components?.password ?? "")
    }
    let hadUserInfo = components?.user != nil || components?.password != nil
    components?.user = nil
    components?.password = nil
    self.url = hadUserInfo ? (components?.string ?? url) : url
    guard let pair = credentials ?? fromURL else { return }
    let userPart =
      pair.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
      .first.map(String.init) ?? ""
    let joined = pair.contains(":") ? pair : pair + ":"
    user = userPart
    header = "Basic " + Data(joined.utf8).base64EncodedString()
  }
}

/// The connection-quality callback of a stream (`onConnectionQualityCallback`), printed when
/// the class changes (`connection quality: PERFECT (client 812 kbps, server 790 kbps)`) and
/// counted for the summary.
public final class ConnectionQualityLog: Sendable {
  private struct State {
    var reports = 0
    var last: (quality: kFPWCSConnectionQuality, client: Double, server: Double)?
    var counts: [kFPWCSConnectionQuality: Int] = [:]
  }
  private let state = Mutex(State())
  private let log: ExampleLog

  /// Prints to `log`.
  public init(log: ExampleLog) { self.log = log }

  /// The SDK's name of a class (`PERFECT`, `GOOD`, `BAD`, `UNKNOWN`).
  public static func name(_ quality: kFPWCSConnectionQuality) -> String {
    switch quality {
    case .fpwcsConnectionQualityPerfect: return "PERFECT"
    case .fpwcsConnectionQualityGood: return "GOOD"
    case .fpwcsConnectionQualityBad: return "BAD"
    case .fpwcsConnectionQualityUnknown: return "UNKNOWN"
    }
  }

  /// One callback: the class and the smoothed client and server video bitrates (bit/s).
  public func update(_ quality: kFPWCSConnectionQuality, client: Double, server: Double) {
    let changed = state.withLock { state -> Bool in
      let changed = state.last?.quality != quality
      state.reports += 1
      state.counts[quality, default: 0] += 1
      state.last = (quality, client, server)
      return changed
    }
    guard changed else { return }
    log.line("connection quality: \(Self.name(quality)) (\(Self.rates(client, server)))")
    log.mark("connection quality " + Self.name(quality))
  }

  /// Callbacks so far.
  public var reports: Int { state.withLock { $0.reports } }

  /// The last class reported, `nil` before the first callback.
  public var last: kFPWCSConnectionQuality? { state.withLock { $0.last?.quality } }

  /// `"PERFECT (4 reports: 4 PERFECT; last client 812 kbps, server 790 kbps)"`, or
  /// `"no report"`.
  public var summary: String {
    state.withLock { state in
      guard let last = state.last else { return "no report" }
      let counts = kFPWCSConnectionQuality.allCases.compactMap { quality in
        state.counts[quality].map { "\($0) \(Self.name(quality))" }
      }
      return "\(Self.name(last.quality)) (\(state.reports) reports: "
        + counts.joined(separator: ", ") + "; last \(Self.rates(last.client, last.server)))"
    }
  }

  private static func rates(_ client: Double, _ server: Double) -> String {
    "client \(Int((client / 1000).rounded())) kbps, server \(Int((server / 1000).rounded())) kbps"
  }
}

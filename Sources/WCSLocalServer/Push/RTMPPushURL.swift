import Foundation
import WCSTransport

/// The `rtmpUrl` of a `publishStream` (wcs-protocol.md §3.1: "republish to this RTMP URL"):
/// which ones the server pushes to.
enum RTMPPushURL {
  /// Longest URL accepted, bytes.
  static let maxLength = 2048

  /// Why the server will not push to `url`, nil when it will: an `rtmp://` or `rtmps://` URL of
  /// at most `maxLength` bytes without spaces or control characters, whose host is in
  /// `allowedHosts` (the pull policy, `pullSourceHosts`; nil allows any host).
  static func refusal(_ url: String, allowedHosts: Set<String>?) -> String? {
    let lowered = url.lowercased()
    guard url.utf8.count <= maxLength,
      lowered.hasPrefix("rtmp://") || lowered.hasPrefix("rtmps://"),
      !url.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F })
    else { return "Bad URI" }
    let host = PullSourceName.host(ofURL: url)
    guard let host else { return "Bad URI" }
    if let allowedHosts, !allowedHosts.contains(host) {
      return "Pushing to host \(host) is not allowed (pullSourceHosts)"
    }
    return nil
  }
}

/// The state of a stream's `rtmpUrl` re-publication, sent to the publisher as
/// `notifyStreamEvent` of type `rtmpStreamStatus` (wcs-protocol.md is silent on how WCS reports
/// it; the name is that of the `rtmpStreamStatus` field of WCS's REST objects, the values those
/// of stream statuses §5.1 and their `info` strings §5.2).
public struct LocalServerRTMPPushStatus: Sendable, Equatable {
  /// The URL pushed to.
  public var rtmpUrl: String
  /// `PUBLISHING` (the RTMP stream is live) or `FAILED`.
  public var status: String
  /// For FAILED: `Failed by RTMP writer error` (connect refused or timed out, connection
  /// broken), `Transcoding required, but disabled` (a VP8 stream), `Bad URI`, or the refusal
  /// of the host policy.
  public var info: String?
  /// For FAILED: what went wrong, in words (FFmpeg's error), for logs.
  public var detail: String?
  /// For FAILED: true when the server tries again.
  public var willRetry: Bool

  /// Memberwise initializer.
  public init(
    rtmpUrl: String, status: String, info: String? = nil, detail: String? = nil,
    willRetry: Bool = false
  ) {
    self.rtmpUrl = rtmpUrl
    self.status = status
    self.info = info
    self.detail = detail
    self.willRetry = willRetry
  }
}

extension WCSStreamInfo {
  /// The RTMP connection of an `rtmpUrl` re-publication failed or broke (§5.2).
  public static let failedByRTMPWriterError = "Failed by RTMP writer error"
}

extension WCSServerCore {
  /// The publish request's `rtmpUrl` when the server will push to it; otherwise nil, and the
  /// publisher is told why (a `rtmpStreamStatus` FAILED event) while its stream goes on.
  func allowedRTMPURL(_ id: WCSConnectionID, _ request: StreamRequest) -> String? {
    guard let url = request.rtmpUrl else { return nil }
    guard let refusal = RTMPPushURL.refusal(url, allowedHosts: configuration.pullSourceHosts)
    else { return url }
    log("session \(id): rtmp push of \(request.mediaSessionId) to \(url) refused: \(refusal)")
    sendRTMPPushStatus(
      to: id, mediaSessionId: request.mediaSessionId,
      LocalServerRTMPPushStatus(rtmpUrl: url, status: "FAILED", info: refusal))
    return nil
  }

  /// An engine report on a publisher's push, for that publisher.
  func reportRTMPPushStatus(_ mediaSessionId: String, _ status: LocalServerRTMPPushStatus) {
    guard let stream = streams[mediaSessionId] else { return }
    log(
      "stream \(mediaSessionId) rtmp \(status.status) \(status.rtmpUrl)"
        + (status.info.map { ": \($0)" } ?? ""))
    sendRTMPPushStatus(to: stream.owner, mediaSessionId: mediaSessionId, status)
  }

  private func sendRTMPPushStatus(
    to id: WCSConnectionID, mediaSessionId: String, _ status: LocalServerRTMPPushStatus
  ) {
    var payload: [String: JSONValue] = [
      "rtmpUrl": .string(status.rtmpUrl), "status": .string(status.status),
    ]
    if let info = status.info { payload["info"] = .string(info) }
    if status.status == "FAILED" { payload["willRetry"] = .bool(status.willRetry) }
    send(
      id,
      ServerMessages.streamEvent(
        mediaSessionId: mediaSessionId, type: "rtmpStreamStatus", payload: .object(payload)))
  }
}

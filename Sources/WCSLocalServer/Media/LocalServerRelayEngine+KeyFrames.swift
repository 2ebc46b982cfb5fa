import Foundation
import WCSProtocols

// Key frame requests to the publisher (RFC 4585 §6.3.1 PLI), deferred by its limiter.
extension LocalServerRelayEngine {
  /// Asks the publisher for a key frame (PLI, RFC 4585 §6.3.1) now or, inside the limit's
  /// interval, when it ends; nil when there is no video to ask about yet (its first frame is a
  /// key frame anyway).
  func requestKeyFrame(_ publisher: RelayPublisher) -> KeyFrameRequestLimiter.Decision? {
    guard publisher.connected, publisher.videoSSRC != nil else { return nil }
    let decision = publisher.keyFrameRequests.request(now: loop.mediaNow())
    switch decision {
    case .forward:
      sendPictureLossIndication(publisher)
    case .deferred(let until):
      if publisher.keyFrameTimer == nil { scheduleDeferredKeyFrame(publisher, at: until) }
    }
    return decision
  }

  func scheduleDeferredKeyFrame(_ publisher: RelayPublisher, at deadline: MediaInstant) {
    publisher.keyFrameTimer = loop.schedule(after: delay(until: deadline)) {
      [weak self, weak publisher] in
      guard let self, let publisher, self.publishers[publisher.mediaSessionId] === publisher
      else { return }
      publisher.keyFrameTimer = nil
      if publisher.keyFrameRequests.takeDeferred(now: self.loop.mediaNow()) {
        self.sendPictureLossIndication(publisher)
      } else if let due = publisher.keyFrameRequests.deferredDeadline {
        self.scheduleDeferredKeyFrame(
          publisher, at: max(due, self.loop.mediaNow() + .milliseconds(1)))
      }
    }
  }

  func sendPictureLossIndication(_ publisher: RelayPublisher) {
    guard let video = publisher.videoSSRC else { return }
    publisher.statistics.keyFrameRequests += 1
    sendRTCP(
      [
        .receiverReport(RTCPReceiverReport(ssrc: publisher.rtcpSSRC)),
        .pictureLossIndication(
          RTCPPictureLossIndication(senderSSRC: publisher.rtcpSSRC, mediaSSRC: video)),
      ], cname: publisher.cname, on: publisher.peerConnection,
      failures: &publisher.statistics.sendFailures)
  }

  func cancelTimers(_ publisher: RelayPublisher) {
    if let timer = publisher.nackTimer { loop.cancel(timer) }
    if let timer = publisher.keyFrameTimer { loop.cancel(timer) }
    publisher.nackTimer = nil
    publisher.nackTimerDeadline = nil
    publisher.keyFrameTimer = nil
  }
}

import Foundation
import WCSProtocols

/// Play path on the loop: the adapter between the sockets, `RTPPlaySession` and the decode
/// tracks (released packets to the tracks, feedback sent back, the poll armed).
extension NativeMediaConnection {
  // MARK: - Media in

  /// Hands a received RTP packet to the play session and does what it says.
  func receiveRTP(_ ssrc: UInt32, _ raw: UnsafeRawBufferPointer) {
    guard !closed else { return }
    // When it arrived, though the loop may have been busy since.
    let now = loop.datagramArrival ?? loop.mediaNow()
    let reception = playSession.receive(raw, ssrc: ssrc, now: now)
    if reception.videoSourceChanged { videoReceiveTrack?.sourceChanged() }
    if let kind = reception.kind { deliver(reception.output, isVideo: kind == .video, now: now) }
    if let pollBy = reception.pollBy { pollNoLaterThan(pollBy) }
    // The audio track has copied the packets out: their array's storage serves the next
    // packet (one goes out on each arrival).
    playSession.recycle(consume reception)
  }

  func deliver(_ output: RTPReceiveSource.Output, isVideo: Bool, now: MediaInstant) {
    // Both tracks and `sendRTCP` do nothing with nothing (most packets wait in the buffer).
    guard !output.packets.isEmpty || !output.rtcp.isEmpty else { return }
    if isVideo {
      videoReceiveTrack?.handle(output.packets, now: now)
    } else {
      audioReceiveTrack?.handle(output.packets)
    }
    sendRTCP(output.rtcp)
  }

  func requestKeyFrameFromSender() {
    if let due = playSession.requestKeyFrame(), request.receives { pollNoLaterThan(due) }
  }
}

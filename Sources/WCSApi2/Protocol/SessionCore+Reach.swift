/// Media that cannot reach the server at all.
extension SessionCore {
  /// No ICE candidate pair of a stream's connection worked before media flowed
  /// (`MediaConnectionFailure.noCandidatePair`): the stream fails locally at once with `info`
  /// "Failed by ICE timeout: no ICE candidate pair succeeded: <what was tried>", rather than
  /// waiting for the server's own timeout, which says nothing of the cause; the server hears
  /// `unPublishStream`/`stopStream` when the offer went out, and the media is released. Later
  /// ICE failures (lost consent) stay with the server, which sees them too.
  func mediaUnreachable(streamId: String, failure: MediaConnectionFailure) -> [SessionEffect] {
    guard var stream = streams[streamId], !stream.status.isTerminal else { return [] }
    var effects: [SessionEffect] = []
    if stream.offerSent { effects.append(.send(ClientMessages.stopStream(stream))) }
    effects += finish(
      &stream, status: .fpwcsStreamStatusFailed, info: "Failed by ICE timeout",
      localDetail: "\(failure)")
    return effects
  }
}

/// `inboundVideoRate` / `outboundVideoRate` (wcs-protocol.md §4.7): the server's view of a
/// stream's video bitrate, which the client's connection-quality estimate compares with its own.
extension WCSServerCore {
  /// Sends the owner of `mediaSessionId` its leg's video rate: `inboundVideoRate` for a
  /// publisher (what the server receives), `outboundVideoRate` for a player (what it sends).
  /// A stream that no longer exists is skipped.
  func reportVideoRate(_ mediaSessionId: String, inbound: Bool, bitsPerSecond: Int) {
    guard let stream = streams[mediaSessionId] else { return }
    send(
      stream.owner,
      ServerMessages.text(
        inbound ? "inboundVideoRate" : "outboundVideoRate",
        [
          [
            "mediaSessionId": .string(mediaSessionId),
            "videoRate": .number(Double(max(0, bitsPerSecond))),
          ]
        ]))
  }
}

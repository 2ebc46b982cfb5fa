import Dispatch
import Foundation
import WCSCodecs
import WCSProtocols

/// Snapshots of a publisher (wcs-protocol.md §3 `snapshot`): the held frames since its last key
/// frame are decoded when asked, off the loop; without a key frame held, one is asked for (PLI)
/// and the request waits for it up to `snapshotWaitMillis`.
extension LocalServerRelayEngine {
  /// How long a snapshot waits for a key frame, ms.
  static let snapshotWaitMillis: Int64 = 3000
  /// Requests one publisher may have waiting at most.
  static let maxWaitingSnapshots = 16

  /// The `snapshotFailed` reason when `Configuration.snapshots` is off.
  public static let snapshotsOffReason = "Snapshots are off on this server"

  func snapshot(of source: String, requestId: String) {
    guard configuration.snapshots else {
      emit(.snapshotFailed(requestId: requestId, reason: Self.snapshotsOffReason))
      return
    }
    guard let publisher = publishers[source] else {
      emit(.snapshotFailed(requestId: requestId, reason: "Stream not found"))
      return
    }
    if publisher.snapshots.hasKeyFrame {
      encode(publisher.snapshots, requestId: requestId)
      return
    }
    guard publisher.snapshots.waiting.count < Self.maxWaitingSnapshots else {
      emit(.snapshotFailed(requestId: requestId, reason: "Too many snapshots in progress"))
      return
    }
    publisher.snapshots.waiting.append((requestId, loop.mediaNow()))
    _ = requestKeyFrame(publisher)
    _ = loop.schedule(after: .milliseconds(Self.snapshotWaitMillis)) {
      [weak self, weak publisher] in
      guard let self else { return }
      let stillWaiting =
        publisher.map { p in p.snapshots.waiting.contains { $0.requestId == requestId } } ?? true
      guard stillWaiting else { return }
      publisher?.snapshots.waiting.removeAll { $0.requestId == requestId }
      // An answer already sent for this id is kept: the core drops a second one.
      self.emit(
        .snapshotFailed(requestId: requestId, reason: "No video picture from the stream yet"))
    }
  }

  /// A key frame arrived: every waiting request gets its picture.
  func serveWaitingSnapshots(_ publisher: RelayPublisher) {
    let waiting = publisher.snapshots.waiting
    guard !waiting.isEmpty else { return }
    publisher.snapshots.waiting.removeAll()
    for request in waiting { encode(publisher.snapshots, requestId: request.requestId) }
  }

  private func encode(_ source: RelaySnapshotSource, requestId: String) {
    let (frames, codec) = (source.frames, source.codec)
    DispatchQueue.global(qos: .utility).async { [self] in
      do {
        emit(
          .snapshotTaken(
            requestId: requestId, png: try RelaySnapshotSource.png(of: frames, codec: codec)))
      } catch {
        emit(.snapshotFailed(requestId: requestId, reason: "Snapshot failed: \(error)"))
      }
    }
  }
}

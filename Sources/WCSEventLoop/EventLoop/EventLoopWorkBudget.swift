/// How much of an event loop's time the work placed on it for good (a played track's video
/// decoding, placed when the track is negotiated) is expected to use: the sum of the shares
/// (0…1) held by the tracks placed on it, each its estimated decode time per picture times its
/// frame rate. A share is held from the placement until the track stops; nothing moves between
/// the loop and a queue at run time.
///
/// Loop-confined: its methods trap off its loop's thread.
package final class EventLoopWorkBudget: Sendable {
  private let held: LoopBoundBox<Double>

  /// - Parameter thread: the thread of the loop whose time it budgets.
  init(thread: EventLoopThread) {
    held = LoopBoundBox(0, thread: thread)
  }

  /// The share of the loop's time (0…1) held now.
  package var heldShare: Double { held.value }

  /// Holds `share` more of the loop's time (a negative share holds nothing).
  package func hold(_ share: Double) {
    held.value += max(0, share)
  }

  /// Gives back a `share` held before; the held share never goes below zero.
  package func release(_ share: Double) {
    held.value = max(0, held.value - max(0, share))
  }
}

import Foundation

/// A run ends as soon as one of its streams or its session reaches a terminal status it did not
/// ask for (FAILED, or DISCONNECTED while still running), with that status as the reason,
/// rather than running out its duration (a FAILED stream never comes back, wcs-protocol.md
/// §5.1).
extension ExampleLog {
  /// Records in `summary` why the run cannot go on, if one of `endEvents` has happened: the
  /// line that reported it (`play stream1 FAILED: Stream not found`). Returns `true` then.
  @discardableResult
  public func failIfEnded(_ endEvents: [String], in summary: inout ExampleSummary) -> Bool {
    guard let event = happened(endEvents) else { return false }
    summary.fail(detail(of: event) ?? event)
    return true
  }

  /// Waits up to `timeout` seconds for `goal`; when one of `endEvents` happens first (or has
  /// already), records it in `summary` and returns at once. Returns `true` when `goal` came.
  public func wait(
    for goal: String, unless endEvents: [String], timeout: Double,
    in summary: inout ExampleSummary
  ) -> Bool {
    let happened = wait(for: [goal] + endEvents, timeout: timeout)
    if happened == goal { return true }
    if !failIfEnded(endEvents, in: &summary) { summary.fail("did not reach \(goal)") }
    return false
  }
}

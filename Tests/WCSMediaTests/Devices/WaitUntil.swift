import Foundation

/// Polls `condition` every 20 ms for up to `timeout` seconds: for external programs (Xvfb,
/// pulseaudio) that have no virtual clock.
func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
  let deadline = Date().addingTimeInterval(timeout)
  while Date() < deadline {
    if condition() { return true }
    usleep(20_000)
  }
  return condition()
}

import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Single key presses from the terminal: standard input switched to non-canonical mode without
/// echo while reading, restored by `stop()`. Only when standard input is a TTY.
public final class KeyReader: Sendable {
  private let saved: Mutex<termios?>

  private init(saved: termios) {
    self.saved = Mutex(saved)
  }

  /// Starts reading keys on a background thread and hands each to `handler`; `nil` when
  /// standard input is not a terminal.
  public static func start(_ handler: @escaping @Sendable (Character) -> Void) -> KeyReader? {
    guard isatty(STDIN_FILENO) == 1 else { return nil }
    var attributes = termios()
    guard tcgetattr(STDIN_FILENO, &attributes) == 0 else { return nil }
    let reader = KeyReader(saved: attributes)
    var raw = attributes
    raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
    _ = tcsetattr(STDIN_FILENO, TCSANOW, &raw)
    let thread = Thread {
      var byte: UInt8 = 0
      while read(STDIN_FILENO, &byte, 1) == 1 {
        handler(Character(Unicode.Scalar(byte)))
      }
    }
    thread.start()
    return reader
  }

  /// Puts the terminal back as it was.
  public func stop() {
    saved.withLock { saved in
      guard var attributes = saved else { return }
      _ = tcsetattr(STDIN_FILENO, TCSANOW, &attributes)
      saved = nil
    }
  }
}

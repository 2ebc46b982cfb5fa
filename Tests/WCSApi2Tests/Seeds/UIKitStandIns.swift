import FPWCSApi2Swift
import Foundation

// The only parts of the iOS examples replaced: UIKit controls and views become these plain
// holders; a view's `videoView` (an RTCMTLVideoView on iOS) is a `VideoRenderer`.

/// Stands in for `UITextField`/`UILabel`.
final class SeedTextField {
  var text: String?
  init(_ text: String? = nil) { self.text = text }
}

/// Stands in for `UISwitch`.
final class SeedSwitch {
  var isOn: Bool
  init(_ isOn: Bool) { self.isOn = isOn }
}

/// Stands in for `UIButton` (only the title is used by the examples).
final class SeedButton {
  private var title: String
  init(_ title: String) { self.title = title }
  func title(for state: SeedControlState) -> String? { title }
  func setTitle(_ title: String, for state: SeedControlState) { self.title = title }
}

/// Stands in for `UIControl.State`.
enum SeedControlState { case normal }

/// Stands in for the examples' video container view; `videoView` is where frames go.
final class SeedVideoContainer {
  let frames = Locked<Int>(0)
  lazy var videoView: any VideoRenderer = VideoFrameCallbackRenderer { [frames] _ in
    frames.withLock { $0 += 1 }
  }
}

/// Stands in for a `UIAlertController` presentation: records title and message.
final class SeedAlerts {
  var shown: [(title: String, message: String)] = []
  func present(_ title: String, _ message: String) { shown.append((title, message)) }
}

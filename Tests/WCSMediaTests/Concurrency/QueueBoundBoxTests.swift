import Dispatch
import XCTest

@testable import WCSMediaSeam

/// `QueueBoundBox`: state confined to one serial queue, read and written there.
final class QueueBoundBoxTests: XCTestCase {
  private final class Tracked {
    let onDeinit: () -> Void
    init(onDeinit: @escaping () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
  }

  func testABoxIsSharedStateReadAndWrittenOnItsQueue() {
    let box = QueueBoundBox([Int](), queue: DispatchQueue(label: "QueueBoundBoxTests"))
    box.queue.async { box.value.append(1) }
    box.queue.sync { box.value.append(2) }
    XCTAssertEqual(box.queue.sync { box.value }, [1, 2])
  }

  func testTheValueGoesWithTheBox() {
    var released = false
    var box: QueueBoundBox<Tracked>? = QueueBoundBox(
      Tracked { released = true }, queue: DispatchQueue(label: "QueueBoundBoxTests"))
    XCTAssertNotNil(box)
    XCTAssertFalse(released)
    box = nil
    XCTAssertTrue(released)
  }
}

import XCTest

@testable import WCSEventLoop

/// `LoopBound` and `LoopBoundBox`: loop-confined values that check their loop's thread.
final class LoopBoundTests: XCTestCase {
  private let loop = EventLoop(label: "LoopBoundTests")
  private let other = EventLoop(label: "LoopBoundOther")

  override func tearDown() {
    loop.shutdown()
    other.shutdown()
    super.tearDown()
  }

  func testTheLoopThreadIsCurrentOnlyOnItsLoop() {
    XCTAssertFalse(loop.thread.isCurrent)
    XCTAssertTrue(loop.submit { loop.thread.isCurrent })
    XCTAssertFalse(other.submit { loop.thread.isCurrent })
  }

  func testABoxIsSharedStateReadAndWrittenOnItsLoop() {
    let box = LoopBoundBox([Int](), loop: loop)
    loop.submit { box.value.append(1) }
    loop.execute { box.value.append(2) }
    XCTAssertEqual(loop.submit { box.value }, [1, 2])
  }

  func testACopyOfALoopBoundValueIsItsOwn() {
    let original = LoopBound(10, loop: loop)
    let (kept, changed) = loop.submit {
      var copy = original
      copy.value += 5
      return (original.value, copy.value)
    }
    XCTAssertEqual(kept, 10)
    XCTAssertEqual(changed, 15)
  }

  func testTheValueGoesWithTheBox() {
    final class Tracked {
      let onDeinit: () -> Void
      init(onDeinit: @escaping () -> Void) { self.onDeinit = onDeinit }
      deinit { onDeinit() }
    }
    var released = false
    var box: LoopBoundBox<Tracked>? = LoopBoundBox(Tracked { released = true }, loop: loop)
    XCTAssertNotNil(box)
    XCTAssertFalse(released)
    box = nil
    XCTAssertTrue(released)
  }
}

/// An array taken from the front: an array and the index of its first live element, so taking
/// one moves nothing; the dead prefix is dropped when nothing is left, or in bulk once it is half
/// of the storage.
struct FrontQueue<Element> {
  private var elements: [Element] = []
  private var head = 0

  /// The live elements.
  var count: Int { elements.count - head }

  /// The first live element.
  var first: Element? { head < elements.count ? elements[head] : nil }

  mutating func append(_ element: Element) { elements.append(element) }

  /// Inserts `element` before the run of live elements at the back for which `goesAfter` holds
  /// (found from the back: cheap when it belongs at or near the end).
  mutating func insert(_ element: Element, before goesAfter: (Element) -> Bool) {
    var index = elements.count
    while index > head, goesAfter(elements[index - 1]) { index -= 1 }
    elements.insert(element, at: index)
  }

  /// Takes the first live element.
  mutating func popFirst() -> Element? {
    guard head < elements.count else { return nil }
    let element = elements[head]
    head += 1
    if head == elements.count {
      elements.removeAll(keepingCapacity: true)
      head = 0
    } else if head >= 64, head * 2 >= elements.count {
      elements.removeFirst(head)
      head = 0
    }
    return element
  }

  /// Drops every element.
  mutating func removeAll() {
    elements.removeAll()
    head = 0
  }
}

extension FrontQueue: Sendable where Element: Sendable {}

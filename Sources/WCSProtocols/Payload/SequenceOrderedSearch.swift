extension Array {
  /// The index of the first element whose extended sequence number (`sequence`) is `target`
  /// or later, in an array in ascending order of it (`count` when none is): the end for a
  /// packet in order, else a binary search. The frame assemblers' buffers of packets.
  func firstIndex(notBelow target: Int64, sequence: (Element) -> Int64) -> Int {
    guard let last, sequence(last) >= target else { return count }
    var low = 0
    var high = count - 1
    while low < high {
      let middle = (low + high) / 2
      if sequence(self[middle]) < target { low = middle + 1 } else { high = middle }
    }
    return low
  }
}

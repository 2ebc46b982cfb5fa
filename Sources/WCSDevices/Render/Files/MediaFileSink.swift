import Foundation

/// A file opened for writing, with the two operations the writers need: append and patch.
final class MediaFileSink {
  private var handle: FileHandle?
  private(set) var offset: UInt64 = 0

  init(url: URL) throws(MediaFileError) {
    guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
      throw .io("cannot create \(url.path)")
    }
    do {
      handle = try FileHandle(forWritingTo: url)
    } catch {
      throw .io(String(describing: error))
    }
  }

  deinit {
    try? handle?.close()
  }

  var isClosed: Bool { handle == nil }

  func append(_ bytes: [UInt8]) throws(MediaFileError) {
    guard let handle else { throw .closed }
    do {
      try handle.write(contentsOf: Data(bytes))
    } catch {
      throw .io(String(describing: error))
    }
    offset += UInt64(bytes.count)
  }

  /// Overwrites bytes at `position` and returns to the end.
  func patch(_ bytes: [UInt8], at position: UInt64) throws(MediaFileError) {
    guard let handle else { throw .closed }
    do {
      try handle.seek(toOffset: position)
      try handle.write(contentsOf: Data(bytes))
      try handle.seekToEnd()
    } catch {
      throw .io(String(describing: error))
    }
  }

  func close() throws(MediaFileError) {
    guard let handle else { return }
    self.handle = nil
    do {
      try handle.close()
    } catch {
      throw .io(String(describing: error))
    }
  }
}

/// Reads a whole file for the strict readers.
func readMediaFile(_ url: URL) throws(MediaFileError) -> [UInt8] {
  do {
    return [UInt8](try Data(contentsOf: url))
  } catch {
    throw .io(String(describing: error))
  }
}

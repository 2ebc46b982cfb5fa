import Foundation

/// The shared test corpus: `../shared/corpus` next to the package root, which the tests that
/// replay captured inputs read when it is there (and skip without).
public enum SharedCorpus {
  /// The corpus folder, or nil when it is absent.
  public static var root: URL? {
    let packageRoot = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent()  // TestSupport
      .deletingLastPathComponent()  // Tests
      .deletingLastPathComponent()  // package root
    let corpus = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus")
    return FileManager.default.fileExists(atPath: corpus.path) ? corpus : nil
  }

  /// `relativePath` inside the corpus, or nil when the corpus or that file or folder is absent.
  public static func url(_ relativePath: String) -> URL? {
    guard let url = root?.appendingPathComponent(relativePath),
      FileManager.default.fileExists(atPath: url.path)
    else { return nil }
    return url
  }
}

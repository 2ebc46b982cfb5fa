import Foundation

extension ExampleArguments {
  /// `--url ws://host:port/name` as the iOS examples read it: the server is
  /// `scheme://host:port` (the `--url` argument is cut to that, reparsing `argv`, the command line
  /// these arguments came from), and the path names the stream unless `--stream` does.
  /// - Parameter pathName: the stream name of a path such as `/name` (default: without its
  ///   leading slash).
  /// - Returns: `--stream`, else the URL's path through `pathName`, else nil (no path).
  public mutating func streamNameFromURLPath(
    of argv: [String], pathName: (String) -> String = { String($0.dropFirst()) }
  ) -> String? {
    let streamName = string("stream")
    guard let url = string("url").flatMap(URL.init(string:)), url.path.count > 1 else {
      return streamName
    }
    let base = "\(url.scheme ?? "ws")://\(url.host ?? "127.0.0.1"):\(url.port ?? 8080)"
    self = (try? ExampleArguments(argv.map { $0 == url.absoluteString ? base : $0 })) ?? self
    return streamName ?? pathName(url.path)
  }
}

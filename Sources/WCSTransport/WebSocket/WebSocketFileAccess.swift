import CWebSockets

extension WebSocketServer {
  /// Decides which HTTP requests for files of a `FileMount` are answered. Called on the
  /// server's service thread before libwebsockets looks for the file, so it must not block:
  /// a refused request gets 403 and reads nothing.
  ///
  /// Two checks with closures are equal only when they are the same value (copies of one
  /// `init`): closures cannot be compared.
  public struct FileAccessCheck: Sendable, Equatable {
    /// One HTTP request as the check sees it.
    public struct Request: Sendable, Equatable {
      /// The URL path as sent, mount point included (`/client/records/a.webm`), percent
      /// escapes decoded by libwebsockets.
      public var path: String
      /// The query after `?` (`token=abc`, arguments joined by `&`), `nil` when there is none.
      public var query: String?
      /// The `Authorization` header, `nil` when absent.
      public var authorization: String?
      /// The client's address.
      public var remoteAddress: String

      /// Memberwise initializer.
      public init(path: String, query: String?, authorization: String?, remoteAddress: String) {
        self.path = path
        self.query = query
        self.authorization = authorization
        self.remoteAddress = remoteAddress
      }

      /// The value of query argument `name` (`a=1&token=x` → `x` for `token`), the first one
      /// when repeated, `nil` when absent.
      public func queryValue(_ name: String) -> String? {
        guard let query else { return nil }
        for argument in query.split(separator: "&", omittingEmptySubsequences: true) {
          let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
          if parts.first.map(String.init) == name { return parts.count > 1 ? String(parts[1]) : "" }
        }
        return nil
      }
    }

    private final class Identity: Sendable {}
    private let identity = Identity()
    /// True to serve the request, false to answer 403.
    public let allows: @Sendable (Request) -> Bool

    /// A check answering with `allows`.
    public init(_ allows: @escaping @Sendable (Request) -> Bool) {
      self.allows = allows
    }

    public static func == (lhs: FileAccessCheck, rhs: FileAccessCheck) -> Bool {
      lhs.identity === rhs.identity
    }
  }

  /// True when a path component after the mount point starts with `.`: hidden files (the
  /// server's own work files, e.g. recordings in progress) and `..` are never served.
  static func isHiddenPath(_ path: String, mountPoint: String) -> Bool {
    let relative = path.hasPrefix(mountPoint) ? String(path.dropFirst(mountPoint.count)) : path
    return relative.split(separator: "/").contains { $0.hasPrefix(".") }
  }

  /// The `&`-separated query arguments: libwebsockets keeps each as its own fragment of
  /// `WSI_TOKEN_HTTP_URI_ARGS`, and copying the token gives only the first. At most 64.
  static func queryArguments(_ wsi: OpaquePointer) -> [String] {
    let total = Int(lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS))
    guard total > 0 else { return [] }
    var buffer = [CChar](repeating: 0, count: total + 1)
    var arguments: [String] = []
    for index in 0..<64 {
      let copied = lws_hdr_copy_fragment(
        wsi, &buffer, Int32(buffer.count), WSI_TOKEN_HTTP_URI_ARGS, Int32(index))
      guard copied >= 0 else { break }
      arguments.append(
        String(decoding: buffer.prefix(Int(copied)).map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    return arguments
  }

  /// `LWS_CALLBACK_FILTER_HTTP_CONNECTION` of the file vhost: 0 lets libwebsockets serve the
  /// mount, non-zero ends the request after the status written here (404 for hidden paths,
  /// 403 when `FileMount.access` refuses).
  func filterFileRequest(_ wsi: OpaquePointer, uri: String) -> Int32 {
    guard let files = configuration.files else { return 0 }
    let mountPoint = files.mountPoint.hasPrefix("/") ? files.mountPoint : "/" + files.mountPoint
    if Self.isHiddenPath(uri, mountPoint: mountPoint) {
      lws_return_http_status(wsi, UInt32(HTTP_STATUS_NOT_FOUND.rawValue), nil)
      return 1
    }
    guard let access = files.access else { return 0 }
    let query = Self.queryArguments(wsi).joined(separator: "&")
    let request = FileAccessCheck.Request(
      path: uri, query: query.isEmpty ? nil : query,
      authorization: LWSLibrary.header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION),
      remoteAddress: LWSLibrary.peerAddress(wsi))
    guard access.allows(request) else {
      lws_return_http_status(wsi, UInt32(HTTP_STATUS_FORBIDDEN.rawValue), nil)
      return 1
    }
    return 0
  }
}

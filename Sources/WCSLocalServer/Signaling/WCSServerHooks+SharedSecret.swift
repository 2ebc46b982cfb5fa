import Foundation
import WCSTransport

extension WCSServerHooks {
  /// `info` of a request refused for a missing or wrong token.
  public static let invalidToken = "Invalid token"

  /// The shared-secret mode of `wcs-local-server --token-file`: a client proves it knows
  /// `token` in `custom.token` of its `connection` (the SDKs pass `custom` through unchanged,
  /// while `appKey` already names the application, e.g. `roomApp`, so it cannot carry a secret
  /// as well); the token is then removed from what the server keeps and echoes back
  /// (`getUserData`). The session's publish, play, room join and call requests are allowed.
  /// Records download only with `?token=<token>` (or `Authorization: Bearer <token>`).
  /// Refusals say `invalidToken`. Tokens are compared in time independent of where they differ.
  public static func sharedSecret(_ token: String) -> WCSServerHooks {
    var hooks = WCSServerHooks()
    hooks.authorize = { request in
      guard tokensMatch(request.token, token) else { return .refuse(reason: invalidToken) }
      guard request.action == .connect, var custom = request.fields["custom"]?.objectValue else {
        return .allow
      }
      custom["token"] = nil
      var fields = request.fields
      fields["custom"] = .object(custom)
      return .rewrite(fields)
    }
    hooks.authorizeRecordDownload = { request in
      tokensMatch(request.token, token) ? .allow : .refuse(reason: invalidToken)
    }
    return hooks
  }

  /// True when `given` is `expected`, comparing every byte whatever the first difference.
  static func tokensMatch(_ given: String?, _ expected: String) -> Bool {
    guard let given else { return false }
    let a = Array(given.utf8)
    let b = Array(expected.utf8)
    var difference = UInt8(a.count == b.count ? 0 : 1)
    for index in 0..<max(a.count, b.count) {
      difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
    }
    return difference == 0
  }

  /// Reads the token of `--token-file`: the file's text without surrounding white space.
  /// - Throws: `LocalServerCommandLine.UsageError` when unreadable or empty.
  static func token(fromFile path: String) throws(LocalServerCommandLine.UsageError) -> String {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw LocalServerCommandLine.UsageError(description: "--token-file: cannot read \(path)")
    }
    let token = String(decoding: data, as: UTF8.self).trimmingCharacters(
      in: .whitespacesAndNewlines)
    guard !token.isEmpty else {
      throw LocalServerCommandLine.UsageError(description: "--token-file: \(path) is empty")
    }
    return token
  }
}

import FPWCSApi2Swift

// Code of the "Troubleshooting" article, verbatim (see scripts/check-doc-snippets.sh).

/// One line saying what to check, for an error thrown by `connect()`, `publish()` or `play()`.
func explain(_ error: any Error) -> String {
  guard let error = error as? WCSError else { return "\(error)" }
  switch error {
  case .connectionRefused(let reason):
    return "the server app refused the connection: \(reason)"
  case .connectionFailed(let reason):
    return "no WebSocket (check the URL, the port, TLS): \(reason)"
  case .streamFailed(let statusInfo, let info):
    switch statusInfo {
    case .fpwcsStreamStatusInfoFailedByIceError, .fpwcsStreamStatusInfoFailedByIceTimeout:
      return "ICE failed, no UDP path to the server's media ports: \(info ?? "")"
    case .fpwcsStreamStatusInfoFailedByDtlsError,
      .fpwcsStreamStatusInfoFailedByDtlsFingerprintError:
      return "DTLS failed: \(info ?? "")"
    case .fpwcsStreamStatusInfoNoCommonCodecs:
      return "no common codec: publish Opus and VP8, or enable transcoding on the server"
    default:
      return error.description
    }
  case .media(let mediaError):
    return "local media engine: \(mediaError)"
  default:
    return error.description
  }
}

/// Options for a `wss://` test server with a self-signed certificate: trust its CA file.
func selfSignedServerOptions(serverURL: String, caFile: String) -> FPWCSApi2SessionOptions {
  let options = FPWCSApi2SessionOptions()
  options.urlServer = serverURL
  options.connectOptions.caFile = caFile
  options.connectOptions.connectTimeout = 5
  return options
}

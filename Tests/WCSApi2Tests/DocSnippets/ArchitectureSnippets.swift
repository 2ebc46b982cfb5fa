import FPWCSApi2Swift

// Code of docs/ARCHITECTURE.md (the "Architecture" article), verbatim (see
// scripts/check-doc-snippets.sh).

/// Points every new session at `transport` and the process at `backend`, e.g. a scripted
/// `MockTransport` and a fake media engine in tests; `WCSApi2Environment.reset()` undoes it.
func installSeams(transport: MockTransport, backend: any MediaBackend) {
  WCSApi2Environment.transportFactory = { transport }
  WCSApi2Environment.mediaBackendFactory = { backend }
}

/// Per-session seams win over the process-wide ones.
func sessionOptions(serverURL: String, transport: any SignalingTransport) -> FPWCSApi2SessionOptions
{
  let options = FPWCSApi2SessionOptions()
  options.urlServer = serverURL
  options.signalingTransport = transport
  return options
}

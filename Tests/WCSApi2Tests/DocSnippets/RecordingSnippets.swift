import FPWCSApi2Swift
import Foundation

// Code of the "Recording" article, verbatim (see scripts/check-doc-snippets.sh).

/// Publishes `name` with server-side recording; `onRecord` gets the download URL once the
/// stream is unpublished.
func publishRecorded(
  session: FPWCSApi2Session, name: String, recordsBaseURL: String,
  onRecord: @escaping @Sendable (String) -> Void
) throws -> FPWCSApi2Stream {
  let options = FPWCSApi2StreamOptions()
  options.name = name
  options.record = true
  let stream = try session.createStream(options)
  stream.on(.fpwcsStreamStatusUnpublished) { stream in
    guard let recordName = stream?.getRecordName() else { return }
    onRecord("\(recordsBaseURL)/client/records/\(recordName)")
  }
  try stream.publish()
  return stream
}

/// The records base URL of a WCS server with default ports: HTTP 8081 for `ws://`, HTTPS 8444 for
/// `wss://`; `nil` for a URL without a host.
func recordsBaseURL(forServer serverURL: String) -> String? {
  guard let url = URL(string: serverURL), let host = url.host else { return nil }
  return url.scheme == "wss" ? "https://\(host):8444" : "http://\(host):8081"
}

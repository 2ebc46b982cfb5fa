/// The server's stream `info` strings (wcs-protocol.md §5.2, corpus
/// `wcs-ws/wcs-status-and-info-strings.json`) and their `kFPWCSStreamStatusInfo` codes.
enum StreamStatusInfoTable {
  static let entries: [(kFPWCSStreamStatusInfo, String)] = [
    (.fpwcsStreamStatusInfoFailedByIceError, "Failed by ICE error"),
    (.fpwcsStreamStatusInfoFailedByIceTimeout, "Failed by ICE timeout"),
    (.fpwcsStreamStatusInfoFailedByKeepAlive, "Failed by ICE keep alive"),
    (.fpwcsStreamStatusInfoFailedByDtlsFingerprintError, "Failed by DTLS fingerprint error"),
    (.fpwcsStreamStatusInfoFailedByDtlsError, "Failed by DTLS error"),
    (.fpwcsStreamStatusInfoFailedByHlsWriterError, "Failed by HLS writer error"),
    (.fpwcsStreamStatusInfoFailedByRtmpWriterError, "Failed by RTMP writer error"),
    (.fpwcsStreamStatusInfoFailedByRtpActivity, "Failed by RTP activity"),
    (.fpwcsStreamStatusInfoStoppedBySessionDisconnect, "Stopped by session disconnect"),
    (.fpwcsStreamStatusInfoStoppedByRestTerminate, "Stopped by rest /terminate"),
    (.fpwcsStreamStatusInfoStoppedByPublisherStop, "Stopped by publisher stop"),
    (.fpwcsStreamStatusInfoStoppedByUser, "Stopped by user"),
    (.fpwcsStreamStatusInfoFailedByError, "Failed by error"),
    (.fpwcsStreamStatusInfoFailedToAddStreamToProxy, "Failed to add stream to proxy"),
    (.fpwcsStreamStatusInfoDistributorStopped, "Distributor stopped"),
    (.fpwcsStreamStatusInfoPublishStreamIsNotReady, "Publish stream is not ready"),
    (.fpwcsStreamStatusInfoStreamNotFound, "Stream not found"),
    (.fpwcsStreamStatusInfoStreamNameAlreadyInUse, "Stream name is already in use"),
    (.fpwcsStreamStatusInfoMediasessionIdNull, "MediaSessionId is null"),
    (.fpwcsStreamStatusInfoMediasessionIdAlreadyInUse, "MediaSessionId is already in use"),
    (.fpwcsStreamStatusInfoSessionNotReady, "Session not ready"),
    (.fpwcsStreamStatusInfoSessionDoesNotExist, "Session does not exist"),
    (.fpwcsStreamStatusInfoRtspHasWrongFormat, "Rtsp has wrong format"),
    (.fpwcsStreamStatusInfoFileHasWrongFormat, "File has wrong format"),
    (.fpwcsStreamStatusInfoFailedToConnectToRtspStream, "Failed to connect to rtsp stream"),
    (.fpwcsStreamStatusInfoRtspStreamNotFound, "Rtsp stream not found"),
    (.fpwcsStreamStatusInfoFileNotFound, "File not found"),
    (.fpwcsStreamStatusInfoTranscodingRequiredButDisabled, "Transcoding required, but disabled"),
    (.fpwcsStreamStatusInfoNoAvailableTranscoders, "No available transcoders"),
    (.fpwcsStreamStatusInfoRtspAgentShutdown, "RtspAgent shutdown"),
    (.fpwcsStreamStatusInfoStreamFailed, "Stream failed"),
    (.fpwcsStreamStatusInfoNoCommonCodecs, "No common codecs"),
    (.fpwcsStreamStatusInfoBadUri, "Bad URI"),
    (.fpwcsStreamStatusInfoGotExceptionWhileStreamingFile, "Got exception while streaming file"),
    (.fpwcsStreamStatusInfoRequestedStreamShutdown, "Requested stream shutdown"),
    (.fpwcsStreamStatusInfoFailedToReadFile, "Failed to read file"),
    (.fpwcsStreamStatusInfoFailedToConnectToOriginStream, "Failed to connect to origin stream"),
    (.fpwcsStreamStatusInfoCdnStreamNotFound, "CDN stream not found"),
    (.fpwcsStreamStatusInfoFailedToGetAgentStorage, "Failed to get agent storage"),
    (
      .fpwcsStreamStatusInfoAgentServicingOriginStreamIsShuttingDown,
      "Agent servicing origin stream is shutting down"
    ),
    (.fpwcsStreamStatusInfoTerminatedByKeepAlive, "Terminated by keep-alive"),
    (.fpwcsStreamStatusInfoRestrictedAccess, "Restricted access"),
    (.fpwcsStreamStatusInfoLocalError, "Local error"),
  ]

  /// Lower-cased letters and digits only, so spacing, punctuation and case do not matter.
  static func normalize(_ text: String) -> String {
    String(
      text.lowercased().unicodeScalars.filter {
        $0.properties.isAlphabetic || ("0"..."9").contains($0)
      })
  }

  static let byNormalizedText: [String: kFPWCSStreamStatusInfo] = {
    var table: [String: kFPWCSStreamStatusInfo] = [:]
    for (code, text) in entries { table[normalize(text)] = code }
    return table
  }()

  static func text(of code: kFPWCSStreamStatusInfo) -> String {
    entries.first { $0.0 == code }?.1 ?? ""
  }

  static func code(of info: String?) -> kFPWCSStreamStatusInfo {
    guard let info, !info.isEmpty else { return .fpwcsStreamStatusInfoUnknown }
    let key = normalize(info)
    if let code = byNormalizedText[key] { return code }
    // Newer docs word the REST terminate reason "Stopped by REST API /terminate query".
    if key.hasPrefix("stoppedbyrest") { return .fpwcsStreamStatusInfoStoppedByRestTerminate }
    return .fpwcsStreamStatusInfoUnknown
  }
}

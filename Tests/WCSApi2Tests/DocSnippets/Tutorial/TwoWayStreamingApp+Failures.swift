import FPWCSApi2Swift

extension TwoWayStreamingApp {
  /// A readable reason for a failed stream, from the server's status info.
  func describeFailure(of stream: FPWCSApi2Stream?) -> String {
    guard let stream else { return "unknown stream" }
    switch stream.getStatusInfo() {
    case .fpwcsStreamStatusInfoStreamNameAlreadyInUse:
      return "the server already has a publisher with this name"
    case .fpwcsStreamStatusInfoStoppedByPublisherStop:
      return "the publisher stopped its stream or lost its connection"
    case .fpwcsStreamStatusInfoStreamNotFound:
      return "no such stream on the server"
    case .fpwcsStreamStatusInfoFailedByIceError, .fpwcsStreamStatusInfoFailedByIceTimeout:
      return "no media path to the server (ICE)"
    default:
      return stream.getInfo() ?? FPWCSApi2Model.streamStatus(toString: stream.getStatus())
    }
  }
}

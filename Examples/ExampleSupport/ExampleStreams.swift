import FPWCSApi2Swift
import Foundation

extension ExampleMedia {
  /// Publishes the stream a local-server run plays (`--file`, else the virtual camera and
  /// microphone) as "test stream", logging its statuses; `playing` runs once it is PUBLISHING.
  /// A refusal (e.g. a name the SDK rejects) is logged and ends the run with its reason.
  public static func publishTestStream(
    _ name: String, on session: FPWCSApi2Session, file: String?, display: (any VideoRenderer)?,
    log: ExampleLog, then playing: @escaping () -> Void
  ) {
    let options = FPWCSApi2StreamOptions()
    options.name = name
    options.display = display
    if let file {
      let constraints = FPWCSApi2MediaConstraints(audio: true, video: true)
      useFile(file, in: constraints)
      options.constraints = constraints
    }
    do {
      let source = try session.createStream(options)
      source.on(.fpwcsStreamStatusPublishing) { rStream in
        log.stream("test stream", rStream)
        playing()
      }
      source.on(.fpwcsStreamStatusFailed) { log.stream("test stream", $0) }
      source.on(.fpwcsStreamStatusUnpublished) { log.stream("test stream", $0) }
      try source.publish()
    } catch {
      log.streamRefused("test stream", name, error)
    }
  }
}

extension ExampleServer {
  /// A session to this server with the `defaultApp` application, or nil after logging why not.
  public func createSession(log: ExampleLog) -> FPWCSApi2Session? {
    let options = FPWCSApi2SessionOptions()
    options.urlServer = url
    options.appKey = "defaultApp"
    do {
      return try FPWCSApi2.createSession(options)
    } catch {
      log.line("Failed to connect: \(error)")
      return nil
    }
  }
}

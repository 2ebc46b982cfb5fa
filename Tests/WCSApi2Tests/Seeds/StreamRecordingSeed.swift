// Seed 004 (StreamRecording, Objective-C) rendered in Swift against the ObjC-style API. UIKit
// and AVPlayer are replaced by the stand-ins and a recorded URL.
import FPWCSApi2Swift
import Foundation

final class StreamRecordingSeed {
  let connectUrl = SeedTextField("ws://127.0.0.1:8080/testStream")
  let remoteDisplay = SeedVideoContainer().videoView
  let recordLink = SeedTextField()
  let alerts = SeedAlerts()
  var url: URL?
  var streamName: String?
  var recordName: String?
  var isPad = false
  var played: [String] = []

  // 2. Session creation: scheme://host:port from the URL, the path is the stream name.
  func connect() -> FPWCSApi2Session? {
    let options = FPWCSApi2SessionOptions()
    url = URL(string: connectUrl.text ?? "")
    options.urlServer = "\(url?.scheme ?? "ws")://\(url?.host ?? ""):\(url?.port ?? 8080)"
    streamName = ((url?.path ?? "") as NSString).deletingPathExtension.replacingOccurrences(
      of: "/", with: "")
    options.appKey = "defaultApp"
    let session: FPWCSApi2Session
    do {
      session = try FPWCSApi2.createSession(options)
    } catch {
      alerts.present("Failed to connect", error.localizedDescription)
      return nil
    }
    session.on(.fpwcsSessionStatusEstablished) { rSession in self.onConnected(rSession) }
    session.on(.fpwcsSessionStatusDisconnected) { _ in self.onDisconnected() }
    session.on(.fpwcsSessionStatusFailed) { _ in self.onDisconnected() }
    session.connect()
    return session
  }

  // 3. Connected → publish.
  func onConnected(_ session: FPWCSApi2Session?) {
    _ = publishStream()
  }

  // 4. Publishing with record = true.
  func publishStream() -> FPWCSApi2Stream? {
    let session = FPWCSApi2.getSessions()[0]
    let options = FPWCSApi2StreamOptions()
    options.name = streamName
    options.display = remoteDisplay
    options.record = true
    if isPad {
      options.constraints = FPWCSApi2MediaConstraints(
        audio: true, videoWidth: 640, videoHeight: 480, videoFps: 15)
    }
    let stream: FPWCSApi2Stream
    do {
      stream = try session.createStream(options)
    } catch {
      alerts.present("Failed to publish", error.localizedDescription)
      return nil
    }
    stream.on(.fpwcsStreamStatusPublishing) { rStream in self.onPublishing(rStream) }
    stream.on(.fpwcsStreamStatusUnpublished) { rStream in self.onUnpublished(rStream) }
    stream.on(.fpwcsStreamStatusFailed) { _ in session.disconnect() }
    do {
      try stream.publish()
    } catch {
      alerts.present("Failed to publish", error.localizedDescription)
      session.disconnect()
    }
    return stream
  }

  // 5. Publishing: remember the record name (UNPUBLISHED carries it too).
  func onPublishing(_ stream: FPWCSApi2Stream?) {
    recordName = stream?.getRecordName()
  }

  func onUnpublished(_ stream: FPWCSApi2Stream?) {
    recordName = stream?.getRecordName() ?? recordName
  }

  // 6. Stop = disconnect.
  func startButtonStop() {
    if FPWCSApi2.getSessions().count > 0 {
      let session = FPWCSApi2.getSessions()[0]
      print("Disconnect session with server \(session.getServerUrl())")
      session.disconnect()
    } else {
      onDisconnected()
    }
  }

  // 7. Disconnected → the record's download link.
  func onDisconnected() {
    if let url, let recordName {
      let urlString = "http://\(url.host ?? ""):9091/client/records/\(recordName)"
      recordLink.text = urlString
      played.append(urlString)
    }
  }

  // The Streamer/Two-way samples find the published stream among the session's streams.
  func publishedStreams() -> [FPWCSApi2Stream] {
    FPWCSApi2.getSessions().first?.getStreams().filter { $0.isPublished() } ?? []
  }
}

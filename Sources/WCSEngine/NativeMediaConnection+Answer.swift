import Foundation
import WCSMediaSeam
import WCSProtocols

/// The answer: munging, negotiated payload types, send streams and the bandwidth estimator.
extension NativeMediaConnection {
  // MARK: - Answer

  func applyAnswer(_ sdp: String) -> Result<Void, MediaBackendError> {
    loop.assertInEventLoop()
    guard !closed else { return .failure(.closed) }
    guard let peerConnection else { return .failure(.answerRejected("no offer was created")) }
    var answer: SessionDescription
    do {
      answer = try SDPParser.parse(sdp).description
    } catch {
      return .failure(.answerRejected("unparsable SDP: \(error)"))
    }
    NativeAnswerMunging.apply(to: &answer, request: request)
    do {
      try peerConnection.setRemoteDescription(answer: SDPWriter.write(answer))
    } catch {
      // A refused answer (e.g. a repeated one) changes nothing of the negotiated session.
      return .failure(.answerRejected("\(error)"))
    }
    transportWideCCID = TransportWideCC.extensionID(in: answer)
    let negotiated =
      peerConnection.remoteAnswer.map(adoptPayloadTypes) ?? (audio: false, video: false)
    guard negotiated.audio || negotiated.video else {
      peerConnection.close()
      return .failure(
        .answerRejected("no common codec: the answer accepts none of Opus, VP8 and H.264"))
    }
    if negotiated.video, let error = adoptVideoCodec() {
      peerConnection.close()
      return .failure(error)
    }
    if negotiated.video { placeVideoDecoding() }
    // A kind the answer rejected (or left without our codec) is not sent or decoded.
    if !negotiated.video {
      videoSource?.stop()
      videoSource = nil
      videoTrack = nil
      videoReceiveTrack = nil
    }
    if !negotiated.audio {
      audioSource?.stop()
      audioSource = nil
      audioTrack = nil
      audioReceiveTrack = nil
    }
    if request.sends {
      setUpSendStreams(now: loop.mediaNow())
    }
    // Plays the negotiated payload types of the tracks that exist.
    playSession = RTPPlaySession(
      configuration: .init(
        localSSRC: localSSRC, videoPayloadType: videoReceiveTrack.map { _ in videoPayloadType },
        audioPayloadType: audioReceiveTrack.map { _ in audioPayloadType },
        rtxPayloadType: rtxPayloadType,
        transportWideCCID: request.receives ? transportWideCCID : nil,
        feedbackClockOrigin: mediaClockOrigin))
    schedulePoll()
    return .success(())
  }

  /// Takes the answer's payload types for Opus, VP8 and VP8's RTX; says which kinds have
  /// their codec accepted.
  func adoptPayloadTypes(_ analysis: SDPAnswerAnalysis) -> (audio: Bool, video: Bool) {
    var negotiated = (audio: false, video: false)
    for section in analysis.media where !section.isRejected {
      for codec in section.codecs {
        let name = codec.rtpMap.encodingName.lowercased()
        guard let payloadType = UInt8(exactly: codec.payloadType), payloadType < 128 else {
          continue
        }
        if section.kind == "audio", name == "opus", !negotiated.audio {
          audioPayloadType = payloadType
          negotiated.audio = true
        } else if section.kind == "video", name == "vp8", !negotiated.video {
          videoPayloadType = payloadType
          h264PacketizationMode = nil
          negotiated.video = true
        } else if section.kind == "video", name == "h264",
          !negotiated.video || prefersAnsweredH264,
          let mode = Self.h264PacketizationMode(codec.formatParameters)
        {
          videoPayloadType = payloadType
          h264PacketizationMode = mode
          negotiated.video = true
        }
      }
      guard section.kind == "video" else { continue }
      rtxPayloadType = nil
      for codec in section.codecs where codec.rtpMap.encodingName.lowercased() == "rtx" {
        let apt = codec.formatParameters?.parameters.first { $0.name == "apt" }?.value
        if apt.flatMap({ UInt8($0) }) == videoPayloadType {
          rtxPayloadType = UInt8(exactly: codec.payloadType)
        }
      }
    }
    return negotiated
  }

  func setUpSendStreams(now: MediaInstant) {
    let video = videoTrack.map { _ in
      RTPSendStream.Configuration(
        ssrc: videoSSRC, payloadType: videoPayloadType, clockRate: 90_000,
        retransmission: rtxPayloadType.map { RTPRetransmission(ssrc: rtxSSRC, payloadType: $0) },
        cname: cname, minBitrate: parameters.minVideoBitrate,
        maxBitrate: parameters.maxVideoBitrate, startBitrate: parameters.startVideoBitrate)
    }
    let audio = audioTrack.map { _ in
      RTPSendStream.Configuration(
        ssrc: audioSSRC, payloadType: audioPayloadType, clockRate: 48_000, cname: cname,
        minBitrate: 6_000, maxBitrate: 510_000, startBitrate: parameters.audioBitrate)
    }
    publishSession = RTPPublishSession(
      configuration: RTPPublishSession.Configuration(
        video: video, audio: audio, transportWideCCID: transportWideCCID),
      now: now, wallClock: NTPTimestamp(date: Date()))
  }
}

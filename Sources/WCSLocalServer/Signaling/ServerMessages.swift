import WCSTransport

/// Builders of the server→client messages (wcs-protocol.md §4). Every message has a `data`
/// array (§2: Web SDK 2.0 reads `data[0]` of every frame).
enum ServerMessages {
  static func text(_ name: String, _ data: [JSONValue]) -> String {
    WCSMessageCodec.encode(WCSMessage(name: name, data: data))
  }

  /// `ping` with `"data":[]` (§7.1, §8).
  static let ping = text("ping", [])

  static func getVersion(_ version: String) -> String { text("getVersion", [.string(version)]) }

  /// `fail [{status:"FAILED", info}]` (§4.1).
  static func fail(info: String) -> String {
    text("fail", [["status": "FAILED", "info": .string(info)]])
  }

  /// `setRemoteSDP [id, sdp, true]`: the server always answers the client's offer (§4.2).
  static func setRemoteSDP(mediaSessionId: String, sdp: String) -> String {
    text("setRemoteSDP", [.string(mediaSessionId), .string(sdp), true])
  }

  static func streamStatus(_ object: JSONValue) -> String {
    text("notifyStreamStatusEvent", [object])
  }

  /// `notifyStreamEvent [{mediaSessionId, type, payload?}]` (§4.6).
  static func streamEvent(mediaSessionId: String, type: String, payload: JSONValue?) -> String {
    var object: [String: JSONValue] = [
      "mediaSessionId": .string(mediaSessionId), "type": .string(type),
    ]
    if let payload { object["payload"] = payload }
    return text("notifyStreamEvent", [.object(object)])
  }
}

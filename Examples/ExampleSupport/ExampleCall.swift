import FPWCSApi2Swift
import Foundation
import Synchronization

extension ExampleLog {
  /// Prints and marks a call status as the iOS phone examples show it:
  /// `call 1002 ESTABLISHED` (event `"call ESTABLISHED"`); an ended call carries its reason.
  /// `event` is the status the callback was registered for; pass it, because the call's own
  /// status may already be a later one by the time the callback queue runs the callback.
  public func call(_ call: FPWCSApi2Call?, event: kFPWCSCallStatus? = nil) {
    let status = FPWCSApi2Model.callStatus(
      toString: event ?? call?.getStatus() ?? .fpwcsCallStatusNew)
    var text = "call \(call?.getCallee() ?? "") \(status)"
    if let info = call?.getInfo(), ["FAILED", "BUSY", "FINISH"].contains(status) {
      text += " (\(info))"
    }
    line(text)
    mark("call " + status, detail: text)
  }
}

/// The example's current call, set on the callback queue and read by the main flow.
public final class ExampleCallHolder: Sendable {
  private let current = Mutex<FPWCSApi2CallBox?>(nil)

  /// Empty.
  public init() {}

  /// The call, once created.
  public var call: FPWCSApi2Call? {
    get { current.withLock { $0?.call } }
    set { current.withLock { $0 = newValue.map(FPWCSApi2CallBox.init) } }
  }
}

/// `FPWCSApi2Call` is `Sendable`; the box only gives the Mutex a value type.
struct FPWCSApi2CallBox: Sendable {
  let call: FPWCSApi2Call
}

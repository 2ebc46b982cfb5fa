import Dispatch
import FPWCSApi2Swift

let arguments = CommandLine.arguments
let app = TwoWayStreamingApp(
  serverURL: arguments.count > 1 ? arguments[1] : "ws://127.0.0.1:8080",
  localName: "local", remoteName: "local")
app.start()
dispatchMain()

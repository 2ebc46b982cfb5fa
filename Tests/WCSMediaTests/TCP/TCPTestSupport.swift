import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSProtocols

/// A blocking TCP socket bound to 127.0.0.1 on a free port, outside any loop, and its address;
/// listening with `backlog` when given. Bound but not listening, it holds a port that refuses
/// connections and that no other process can take meanwhile. The caller closes it.
func loopbackTCPSocket(listening backlog: Int32?) throws -> (
  descriptor: Int32, address: ICETransportAddress
) {
  let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
  let bound = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
    }
  }
  guard descriptor >= 0, bound == 0, backlog.map({ listen(descriptor, $0) == 0 }) ?? true,
    let local = EventLoopTCPSocket.localAddress(of: descriptor)
  else {
    if descriptor >= 0 { close(descriptor) }
    throw XCTSkip("no TCP socket on 127.0.0.1")
  }
  return (descriptor, local)
}

/// Open descriptors of this process, to show that sockets are not leaked.
var openDescriptorCount: Int {
  (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
}

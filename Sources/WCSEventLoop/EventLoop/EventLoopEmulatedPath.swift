import WCSProtocols

/// One direction of an `EventLoopUDPSocket` through a `NetworkEmulator`: the driver of that
/// Sans-I/O value. A datagram due at once (nothing delayed ahead of it) goes on inline, as
/// without emulation; a later one is copied and held, in delivery order, until one loop timer
/// (armed for the earliest) hands it to `deliver`.
///
/// Loop-confined: created, used and closed on the socket's loop only.
final class EventLoopEmulatedPath {
  /// A held datagram.
  struct Held {
    /// When it is due, as an offset from the loop's origin.
    var time: Duration
    var bytes: [UInt8]
    var address: ICETransportAddress
  }

  let direction: NetworkDirection
  private let loop: EventLoop
  private var emulator: NetworkEmulator
  private let counters: NetworkEmulationCounters
  /// Hands a due datagram on (sends it, or gives it to the socket's handler); set by the socket.
  var deliver: (Held) -> Void = { _ in }
  /// Held datagrams by time; equal times in the order they were admitted.
  private var held = FrontQueue<Held>()
  private var timer: EventLoopTimer?
  private var timerTime: Duration?

  /// What this direction's emulator did so far.
  var statistics: NetworkEmulatorStatistics { emulator.statistics }

  init(
    direction: NetworkDirection, emulator: NetworkEmulator, counters: NetworkEmulationCounters,
    loop: EventLoop
  ) {
    self.direction = direction
    self.emulator = emulator
    self.counters = counters
    self.loop = loop
  }

  /// Admits `bytes` (from or to `address`) entering at `now` (an offset from the loop's
  /// origin). Returns how many times the caller delivers it itself, at once: 0 when it was
  /// dropped or is held for later, else 1 or 2 (duplicated).
  func admit(_ bytes: UnsafeRawBufferPointer, address: ICETransportAddress, now: Duration) -> Int {
    let verdict = emulator.admit(size: bytes.count, now: now)
    counters.count(verdict, direction: direction, now: now)
    guard case .deliver(let time, let copies, _) = verdict else { return 0 }
    // Due now and nothing held ahead of it: on at once, as without emulation.
    if time <= now, held.count == 0 { return copies }
    let datagram = Held(time: time, bytes: Array(bytes), address: address)
    for _ in 0..<copies { insert(datagram) }
    arm()
    return 0
  }

  /// Drops what is held and stops the timer (the socket closed).
  func close() {
    if let timer { loop.cancel(timer) }
    timer = nil
    timerTime = nil
    held.removeAll()
  }

  private func insert(_ datagram: Held) {
    // Usually the latest (in order); a reordered one goes back past the later ones.
    held.insert(datagram) { $0.time > datagram.time }
  }

  private func arm() {
    guard let due = held.first?.time else { return }
    if let timerTime, timerTime <= due { return }
    if let timer { loop.cancel(timer) }
    timerTime = due
    let reference = WeakReference(self)
    timer = loop.schedule(at: loop.origin + due) { reference.object?.fire() }
  }

  private func fire() {
    timer = nil
    timerTime = nil
    let now = Duration(attoseconds: loop.attosecondsNow())
    while let first = held.first, first.time <= now, let datagram = held.popFirst() {
      // May close the socket, and with it this path (then nothing is held any more).
      deliver(datagram)
    }
    arm()
  }
}

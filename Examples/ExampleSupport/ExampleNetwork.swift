import FPWCSApi2Swift
import Synchronization
import WCSMedia

/// `--network SPEC`: runs the example's own connections through WCSMedia's network emulator,
/// so its publisher or player meets the bad network on purpose.
///
/// The emulation sits on this program's side only, on both directions of each of its links
/// (what it sends and what it receives): the simplest correct meaning of "my publisher against
/// a bad network". The in-process local server's connections are not emulated (run
/// `wcs-local-server --network` for the server's side).
public enum ExampleNetwork {
  /// The option's lines for a `--help` text, with the spec syntax.
  public static let usage = """
      --network SPEC     emulate a bad network on this program's connections (both directions
                         of each link; the in-process local server's own side is left alone),
                         e.g. --network "loss=5%,delay=40ms,jitter=15ms,rate=1.5mbit".

    \(NetworkEmulation.specSyntax.split(separator: "\n", omittingEmptySubsequences: false)
      .map { "  " + $0 }.joined(separator: "\n"))
    """

  private static let installed = Mutex<NetworkEmulation?>(nil)

  /// The emulation `install` put on the SDK's engine, `nil` without `--network`; its
  /// `counters` say what it dropped, delayed and duplicated so far (for the summary).
  public static var current: NetworkEmulation? { installed.withLock { $0 } }

  /// Reads `--network` and, when it asks for more than the ideal network, makes the SDK's
  /// process-wide engine a `NativeMediaBackend` whose connections use it. Call before the
  /// first session or device call (the engine is made on first use).
  /// - Throws: `ExampleError.usage` with the offending token of a bad spec.
  public static func install(_ arguments: ExampleArguments, log: ExampleLog) throws(ExampleError) {
    guard let spec = arguments.string("network") else { return }
    let emulation: NetworkEmulation
    do {
      emulation = try NetworkEmulation(spec: spec)
    } catch {
      throw .usage("--network \(error)")
    }
    guard !emulation.isIdeal else { return }
    var configuration = NativeMediaBackend.Configuration()
    configuration.peerConnection.networkEmulation = emulation
    WCSApi2Environment.mediaBackendFactory = { [configuration] in
      NativeMediaBackend(configuration: configuration)
    }
    installed.withLock { $0 = emulation }
    log.line("network emulation on this program's connections: \(emulation.spec)")
  }
}

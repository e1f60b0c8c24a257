#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The write end of the live control's self-pipe, for the signal handler: a C function pointer
/// cannot capture it, and an atomic (Synchronization) needs macOS 15.
// Safety: written once, before the handlers that read it are installed; only they read it after.
nonisolated(unsafe) private var signalPipe: Int32 = -1

/// SIGINT, SIGTERM and SIGHUP ask the live read to stop: the handler only writes one byte to
/// the control's self-pipe (async-signal-safe); every wait of the reader watches that pipe.
package struct SignalStop {
  package static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

  package init(_ control: LiveControl) {
    signalPipe = control.writeDescriptor
    // A parent may have started us with these blocked (they are inherited: a thread pool's
    // thread spawning us); threads started from here on inherit this thread's mask.
    var unblocked = sigset_t()
    sigemptyset(&unblocked)
    for number in Self.signals { sigaddset(&unblocked, number) }
    _ = pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
    for number in Self.signals {
      _ = signal(number) { _ in
        var byte: UInt8 = 1
        _ = write(signalPipe, &byte, 1)
      }
    }
  }

  /// Back to the default dispositions (a second Ctrl-C after the end kills, as usual).
  package func restore() {
    for number in Self.signals { _ = signal(number, SIG_DFL) }
  }
}

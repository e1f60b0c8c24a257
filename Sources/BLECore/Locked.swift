import Dispatch

/// State shared by threads, reached only under its lock (`withLock`): the one place the
/// compiler's Sendable checking is waived for it, until Synchronization's `Mutex` (macOS 15)
/// can do the same with the compiler's help. Sound as long as nothing `body` returns, or
/// stores elsewhere, keeps a reference into the state (Sendable states cannot).
// Safety: every read and write of `state` happens inside `withLock`, between wait and signal.
package final class Locked<State>: @unchecked Sendable {
  private var state: State
  /// A semaphore of one: portable, nothing to allocate or free by hand.
  private let lock = DispatchSemaphore(value: 1)

  package init(_ state: State) { self.state = state }

  /// Runs `body` on the state, other threads waiting meanwhile.
  package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    lock.wait()
    defer { lock.signal() }
    return try body(&state)
  }
}

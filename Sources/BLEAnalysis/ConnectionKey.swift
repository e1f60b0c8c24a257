import BLEDecoder

/// A connection as analyses key their state by it: controller, handle, and which use of the
/// handle. The decoder numbers a handle's connections the same way each time it reads a
/// capture, so two reads (a slice's) name a connection alike.
package struct ConnectionKey: Hashable, Sendable {
  var adapter: UInt16
  var handle: UInt16
  var generation: Int

  init(_ label: ConnectionLabel) {
    adapter = label.adapter
    handle = label.handle
    generation = label.generation
  }
}

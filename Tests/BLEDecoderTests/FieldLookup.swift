import BLECore
@_exported import BLETestSupport
@testable import BLEDecoder

/// Dissects one record on a fresh or given dissector.
func dissect(_ kind: PacketKind, _ bytes: [UInt8], direction: Direction? = nil, adapter: UInt16 = 0, with dissector: inout Dissector, number: Int = 1) -> DissectedFrame {
  var frame = DissectedFrame()
  let record = CaptureRecord(timestamp: 0, adapter: adapter, direction: direction ?? (kind == .event ? .controllerToHost : .hostToController), kind: kind, bytes: bytes)
  dissector.dissect(record, number: number, into: &frame)
  return frame
}

func dissect(_ kind: PacketKind, _ bytes: [UInt8], direction: Direction? = nil) -> DissectedFrame {
  var dissector = Dissector()
  return dissect(kind, bytes, direction: direction, with: &dissector)
}

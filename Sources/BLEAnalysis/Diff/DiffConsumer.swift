import BLECore
import BLEDecoder
import BLEEngine

/// Collects what a comparison needs from one capture: the session summary and each
/// connection's procedure steps; at the end, the peers' GATT tables.
public final class DiffConsumer: FrameConsumer {
  // Used by the stream's consumer thread only, then read after `run` returns.
  @exclusivity(unchecked) var analyzer = SessionAnalyzer()
  @exclusivity(unchecked) var operations = OperationLog()
  @exclusivity(unchecked) var tables: [BDAddr: GATTAttributeTree] = [:]

  public init() {}

  public var fieldDetail: FieldDetail { .none }

  public func consume(_ frame: inout DissectedFrame) -> Bool {
    analyzer.add(&frame)
    operations.add(&frame)
    return true
  }

  public func finish(_ end: FrameStream.End) {
    analyzer.finish(databases: end.dissector.databases)
    for (server, database) in end.dissector.databases {
      guard case .peer(let address) = server, !database.isEmpty else { continue }
      tables[address] = database.attributeTree
    }
    operations.finish(tables: tables)
  }

  /// What the comparison reads, once the stream has run.
  public var side: DiffSide { DiffSide(summary: analyzer.summary, tables: tables, operations: operations) }
}

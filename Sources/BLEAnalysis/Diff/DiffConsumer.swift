import BLECore
import BLEDecoder
import BLEEngine

/// Collects what a comparison needs from one capture: the session summary and each
/// connection's procedure steps and exchanges; at the end, the GATT tables they were about. A
/// struct, run with `run(into: &consumer)`.
package struct DiffConsumer: FrameConsumer {
  var analyzer = SessionAnalyzer()
  var operations = OperationLog()
  var tables: [BDAddr: GATTAttributeTree] = [:]
  var tableSources: [BDAddr: GATTMapProvenance] = [:]
  var conformance = ConformanceAnalysis()

  package init() {}

  package var fieldDetail: FieldDetail { .none }

  package mutating func consume(_ frame: inout DissectedFrame) -> Bool {
    analyzer.add(&frame)
    operations.add(&frame)
    _ = conformance.consume(&frame)
    return true
  }

  package mutating func finish(_ end: FrameStream.End) {
    analyzer.finish(databases: end.dissector.databases)
    conformance.finish(end)
    let databases = end.dissector.databases
    // The table a connection's requests were about: the peer's, or the local device's when the
    // capturing host answered them (a peripheral's capture). Kept under the peer's address,
    // the device the comparison pairs.
    func server(_ connection: OperationLog.Connection) -> GATTServerIdentity? {
      if !connection.localIsClient { return connection.label.localServer }
      return connection.label.peer.map { .peer($0) }
    }
    // The central's requests first: on a link where both ends are clients, the table the
    // comparison calls the device's is the one the central used.
    let connections = operations.connections.filter(\.centralIsClient) + operations.connections.filter { !$0.centralIsClient }
    for connection in connections {
      guard let peer = connection.label.peer, tables[peer] == nil, let identity = server(connection),
        let database = databases[identity], !database.isEmpty
      else { continue }
      tables[peer] = database.attributeTree
      tableSources[peer] = database.provenance
    }
    // Peers the capture shows no requests to (a table learned from notifications alone).
    for (identity, database) in databases {
      guard case .peer(let address) = identity, tables[address] == nil, !database.isEmpty else { continue }
      tables[address] = database.attributeTree
      tableSources[address] = database.provenance
    }
    operations.finish { connection in server(connection).flatMap { databases[$0]?.attributeTree } }
  }

  /// What the comparison reads, once the stream has run.
  package var side: DiffSide {
    DiffSide(summary: analyzer.summary, tables: tables, operations: operations, tableSources: tableSources, findings: conformance.report(file: ""))
  }
}

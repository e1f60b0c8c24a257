import BLECapture
import BLECore
import BLEDecoder
import BLEEngine
import BLERender

/// `bledissect gatt FILE...`: each GATT server's attribute table as the capture's discovery
/// showed it, with the frame each entry was learned in; `--json` writes it as a GATT map
/// (docs/json.md, "GATT maps").
enum GATTCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "gatt",
    abstract: "Show each device's GATT attribute table (services, characteristics, descriptors).",
    usage: "gatt [options] <file>...",
    discussion: """
      Lists what the capture's discovery showed of each GATT server (a peer by its address,
      or the local device for captures taken on the server), as a tree: service (handle
      range), characteristic (value handle and properties), descriptors; '#N' is the frame
      each entry was learned in. --json writes one GATT map per capture (docs/json.md).
      Several files are read in parallel (-j) and printed in the order given, each after a
      '==> FILE <==' line (text) or with its name in "capture" (JSON); the exit status is
      the worst of the files'.
      """,
    options: [
      OptionSpec(name: "json", short: nil, kind: .flag, help: "Write a GATT map: one JSON object per capture, on one line."),
      jobsOption,
      stopAtDamageOption,
    ] + DecodingOptions.specs,
    minimumPositionals: 1,
    maximumPositionals: Int.max)

  static func run(_ arguments: ParsedArguments, _ context: CLIContext) -> Int32 {
    let jobs: Int
    do { jobs = try BatchRunner.jobCount(arguments) } catch {
      return BLEDissectCLI.usageError(error.message, command: configuration.name, context)
    }
    let json = arguments.has("json")
    let damage = damagePolicy(arguments)
    let maps: DecodingOptions
    do {
      maps = try DecodingOptions.parse(arguments, context)
    } catch {
      return BLEDissectCLI.usageError(error.message, command: configuration.name, context)
    }
    return BatchRunner.run(files: arguments.positionals, jobs: jobs, header: json ? nil : fileHeader, context) { file, output, context in
      listTables(file, json: json, damage: damage, maps: maps, output: output, context)
    }
  }

  static func listTables(_ path: Argument, json: Bool, damage: DamagePolicy, maps: DecodingOptions = DecodingOptions(), output: JobOutput, _ context: CLIContext) -> Int32 {
    let reader: any CaptureReader
    switch context.openCapture(path, damage: damage) {
    case .success(let opened): reader = opened
    case .failure(let code): return code.status
    }
    var options = FrameStream.Options()
    options.threading = output.threading
    maps.apply(to: &options)
    let consumer = GATTConsumer()
    let end = FrameStream(source: reader, options: options).run(into: consumer)
    let devices = consumer.devices(end.dissector.databases)
    maps.finish(end, capture: path.display, context, devices: devices)
    if json {
      GATTMapWriter.write(devices, capture: path.display, to: &output.buffer)
    } else {
      GATTTreeWriter.write(devices, to: &output.buffer)
    }
    output.handOver()
    return context.finishRead(path, reader: reader, frames: end.frames, failure: end.failure)
  }
}

/// `-j`, shared by the commands that take several files.
let jobsOption = OptionSpec(
  name: "jobs", short: "j", kind: .value(valueName: "n"),
  help: "Read up to n files at once (default: one per processor); output stays in file order.")

/// The line before each file's text output in a batch, as `head` and `tail` write it.
@Sendable func fileHeader(_ file: Argument) -> String { "==> \(file.display) <==\n" }

/// One GATT server's table and what else the capture said about it.
struct GATTDevice {
  var server: GATTServerIdentity
  var tree: GATTAttributeTree
  var addressType: AddressType?
  var name: String?
  /// The Database Hash (0x2B2A) value last read from it.
  var databaseHash: [UInt8]?
  /// Whether the capture's own discovery showed part of the table (not only a map given).
  var capturedEntries = true
  /// Where the table came from (the capture, a map, the cache, a layout).
  var source = GATTSource.capture
  /// Which map or cache file, and when it was learned, for tables not from the capture.
  var provenance: GATTMapProvenance?
}

/// Collects, per server, what the tables do not hold: the last Database Hash and Device Name
/// read, and the peer's address type. Bounded like the dissector's own tables.
final class GATTConsumer: FrameConsumer {
  static let maximumServers = GATTDatabaseTable.maximumDatabases
  var fieldDetail: FieldDetail { .none }
  private var hashes: [GATTServerIdentity: [UInt8]] = [:]
  private var names: [GATTServerIdentity: String] = [:]
  private var addressTypes: [BDAddr: AddressType] = [:]

  func consume(_ frame: inout DissectedFrame) -> Bool {
    guard !frame.attributes.isEmpty, let connection = frame.connection else { return true }
    if let peer = connection.peer, let type = connection.peerType, addressTypes.count < Self.maximumServers || addressTypes[peer] != nil {
      addressTypes[peer] = type
    }
    // By type, not by dynamic casts (`as?` searches the conformances on every attribute). The
    // closures capture no part of the frame: that would copy it whole.
    let direction = frame.direction
    let opcode = frame.attOpcode
    frame.forEachValue(as: DatabaseHash.self) { _, hash in
      let server = Self.server(direction: direction, attOpcode: opcode, connection)
      if hashes.count < Self.maximumServers || hashes[server] != nil { hashes[server] = hash.bytes }
    }
    frame.forEachValue(as: DeviceName.self) { operation, name in
      guard operation == .read else { return }
      let server = Self.server(direction: direction, attOpcode: opcode, connection)
      if names.count < Self.maximumServers || names[server] != nil { names[server] = name.text }
    }
    return true
  }

  /// The server whose value a frame carries: the capturing host when it sent the value (a
  /// capture taken on the server), else the peer, by address when known, as the dissector keys
  /// its databases. Values travel server to client except in writes.
  static func server(direction: Direction?, attOpcode: UInt8?, _ connection: ConnectionLabel) -> GATTServerIdentity {
    let fromServer = !(attOpcode.map { ATTMethodKind(opcode: $0).isClientToServer } ?? false)
    if let direction, (direction == .hostToController) == fromServer { return connection.localServer }
    if let peer = connection.peer { return .peer(peer) }
    return .connection(adapter: connection.adapter, handle: connection.handle, generation: connection.generation)
  }

  /// Every non-empty table, peers by address first, then local devices, then the rest.
  func devices(_ databases: [GATTServerIdentity: GATTDatabase]) -> [GATTDevice] {
    var devices: [GATTDevice] = []
    for (server, database) in databases where !database.isEmpty {
      var address: BDAddr?
      if case .peer(let peer) = server { address = peer }
      devices.append(GATTDevice(
        server: server, tree: database.attributeTree, addressType: address.flatMap { addressTypes[$0] },
        name: names[server], databaseHash: hashes[server] ?? database.reportedHash, capturedEntries: database.hasCapturedEntries, source: database.origin,
        provenance: database.provenance))
    }
    return devices.sorted { Self.sortKey($0.server).lexicographicallyPrecedes(Self.sortKey($1.server)) }
  }

  static func sortKey(_ server: GATTServerIdentity) -> [UInt64] {
    switch server {
    case .peer(let address): return [0, address.rawValue]
    case .local(let adapter): return [1, UInt64(adapter)]
    case let .connection(adapter, handle, generation): return [2, UInt64(adapter), UInt64(handle), UInt64(max(generation, 0))]
    }
  }
}

/// The text tree.
enum GATTTreeWriter {
  static func write(_ devices: [GATTDevice], to out: inout OutputBuffer) {
    if devices.isEmpty {
      out.append("no GATT discovery in this capture\n")
      return
    }
    for (index, device) in devices.enumerated() {
      if index > 0 { out.byte(0x0A) }
      var lines: [(text: String, frame: Int)] = []
      for service in device.tree.services {
        let kind = service.primary ? "service" : "secondary service"
        lines.append(("  \(kind) \(hex(service.start))–\(hex(service.end)) \(named(service.uuid, service.name))", service.learnedIn))
        for include in service.includes {
          lines.append(("    include \(hex(include.handle))", include.learnedIn))
        }
        for characteristic in service.characteristics { add(characteristic, indent: "    ", to: &lines) }
      }
      if !device.tree.characteristicsOutsideServices.isEmpty {
        lines.append(("  (no service known)", 0))
        for characteristic in device.tree.characteristicsOutsideServices { add(characteristic, indent: "    ", to: &lines) }
      }
      if !device.tree.otherHandles.isEmpty {
        lines.append(("  (other handles)", 0))
        for handle in device.tree.otherHandles {
          lines.append(("    \(hex(handle.handle)) \(named(handle.uuid, handle.name))", handle.learnedIn))
        }
      }
      out.append(string: heading(device))
      out.byte(0x0A)
      // Frames in one column, so the tree reads down the left and the frames down the right.
      let column = min((lines.map { $0.text.count }.max() ?? 0) + 2, 72)
      for line in lines {
        out.append(string: line.text)
        if line.frame > 0 {
          out.spaces(max(column - line.text.count, 1))
          out.byte(UInt8(ascii: "#"))
          out.decimal(line.frame)
        }
        out.byte(0x0A)
      }
    }
  }

  static func add(_ characteristic: GATTCharacteristicEntry, indent: String, to lines: inout [(text: String, frame: Int)]) {
    let properties = characteristic.propertyNames.map { $0.description.replacingOccurrences(of: "_", with: " ") }
    var text = "\(indent)\(hex(characteristic.valueHandle)) \(named(characteristic.uuid, characteristic.name))"
    text += properties.isEmpty ? "" : ": " + properties.joined(separator: ", ")
    lines.append((text, characteristic.learnedIn))
    for descriptor in characteristic.descriptors {
      lines.append(("\(indent)  \(hex(descriptor.handle)) \(named(descriptor.uuid, descriptor.name))", descriptor.learnedIn))
    }
  }

  static func heading(_ device: GATTDevice) -> String {
    var text: String
    switch device.server {
    case .peer(let address): text = address.description + (device.addressType.map { " (\($0.name))" } ?? "")
    case .local(let adapter): text = "local device (hci\(adapter))"
    case let .connection(adapter, handle, generation): text = "hci\(adapter) connection handle \(handle) (connection \(generation), address unknown)"
    }
    if let name = device.name { text += " \"\(printable(name))\"" }
    let services = device.tree.services.count
    let characteristics = device.tree.services.reduce(device.tree.characteristicsOutsideServices.count) { $0 + $1.characteristics.count }
    text += ": \(services) service\(services == 1 ? "" : "s"), \(characteristics) characteristic\(characteristics == 1 ? "" : "s")"
    if let hash = device.databaseHash { text += ", database hash \(Hex.string(hash))" }
    switch device.source {
    case .capture: break
    case .imported: text += " (from a map given with --gatt)"
    case .cache: text += " (from the cache)"
    case .layout: text += " (by layout: the peer is not in the capture)"
    case .inferred: text += " (inferred)"
    }
    return text
  }

  static func hex(_ handle: UInt16) -> String { Hex.prefixed(UInt64(handle), width: 4) }

  static func named(_ uuid: BluetoothUUID, _ name: Name?) -> String {
    name.map { "\($0) (\(uuid))" } ?? uuid.description
  }

  /// A name from the wire, kept on its line (`Escaping`).
  static func printable(_ text: String) -> String { Escaping.escaped(text, .line) }
}

/// The GATT map: one JSON object per capture (docs/json.md, "GATT maps").
enum GATTMapWriter {
  static let version = 1

  /// `learned`: when the tables were saved (the cache's files say it).
  static func write(_ devices: [GATTDevice], capture: String, learned: String? = nil, to out: inout OutputBuffer) {
    out.append(#"{"format":"bledissect-gatt-map","version":"#)
    out.decimal(version)
    out.append(#","capture":"#)
    out.jsonString(capture)
    if let learned {
      out.append(#","learned":"#)
      out.jsonString(learned)
    }
    out.append(#","devices":["#)
    for (index, device) in devices.enumerated() {
      if index > 0 { out.byte(UInt8(ascii: ",")) }
      writeDevice(device, to: &out)
    }
    out.append("]}\n")
  }

  static func writeDevice(_ device: GATTDevice, to out: inout OutputBuffer) {
    switch device.server {
    case .peer(let address):
      out.append(#"{"server":"peer","address":""#)
      out.address(address)
      out.byte(UInt8(ascii: "\""))
      if let type = device.addressType {
        out.append(#","address_type":"#)
        out.jsonString(type.name)
      }
    case .local(let adapter):
      out.append(#"{"server":"local","index":"#)
      out.decimal(Int(adapter))
    case let .connection(adapter, handle, generation):
      out.append(#"{"server":"connection","index":"#)
      out.decimal(Int(adapter))
      out.append(#","conn":"#)
      out.decimal(Int(handle))
      out.append(#","conn_generation":"#)
      out.decimal(generation)
    }
    if let name = device.name {
      out.append(#","name":"#)
      out.jsonString(name)
    }
    if let hash = device.databaseHash {
      out.append(#","database_hash":""#)
      out.hexBytes(hash[...])
      out.byte(UInt8(ascii: "\""))
    }
    if device.source != .capture {
      out.append(#","source":""#)
      out.append(device.source.key)
      out.byte(UInt8(ascii: "\""))
      if let provenance = device.provenance {
        out.append(#","map":"#)
        out.jsonString(provenance.file ?? provenance.origin)
        if let learned = provenance.learned {
          out.append(#","learned":"#)
          out.jsonString(learned)
        }
      }
    }
    out.append(#","services":["#)
    for (index, service) in device.tree.services.enumerated() {
      if index > 0 { out.byte(UInt8(ascii: ",")) }
      out.append(#"{"start":"#)
      out.decimal(Int(service.start))
      out.append(#","end":"#)
      out.decimal(Int(service.end))
      writeUUID(service.uuid, service.name, to: &out)
      out.append(service.primary ? #","primary":true"# : #","primary":false"#)
      writeFrame(service.learnedIn, to: &out)
      if !service.includes.isEmpty {
        out.append(#","includes":"#)
        writeHandles(service.includes, to: &out)
      }
      out.append(#","characteristics":"#)
      writeCharacteristics(service.characteristics, to: &out)
      out.byte(UInt8(ascii: "}"))
    }
    out.byte(UInt8(ascii: "]"))
    if !device.tree.characteristicsOutsideServices.isEmpty {
      out.append(#","characteristics_outside_services":"#)
      writeCharacteristics(device.tree.characteristicsOutsideServices, to: &out)
    }
    if !device.tree.otherHandles.isEmpty {
      out.append(#","other_handles":"#)
      writeHandles(device.tree.otherHandles, to: &out)
    }
    out.byte(UInt8(ascii: "}"))
  }

  static func writeCharacteristics(_ characteristics: [GATTCharacteristicEntry], to out: inout OutputBuffer) {
    out.byte(UInt8(ascii: "["))
    for (index, characteristic) in characteristics.enumerated() {
      if index > 0 { out.byte(UInt8(ascii: ",")) }
      out.append(#"{"declaration_handle":"#)
      out.decimal(Int(characteristic.declarationHandle))
      out.append(#","value_handle":"#)
      out.decimal(Int(characteristic.valueHandle))
      writeUUID(characteristic.uuid, characteristic.name, to: &out)
      out.append(#","properties":"#)
      out.decimal(Int(characteristic.properties))
      out.append(#","property_names":["#)
      for (nameIndex, name) in characteristic.propertyNames.enumerated() {
        if nameIndex > 0 { out.byte(UInt8(ascii: ",")) }
        out.jsonString(name)
      }
      out.byte(UInt8(ascii: "]"))
      writeFrame(characteristic.learnedIn, to: &out)
      out.append(#","descriptors":"#)
      writeHandles(characteristic.descriptors, to: &out)
      out.byte(UInt8(ascii: "}"))
    }
    out.byte(UInt8(ascii: "]"))
  }

  static func writeHandles(_ handles: [GATTDescriptorEntry], to out: inout OutputBuffer) {
    out.byte(UInt8(ascii: "["))
    for (index, entry) in handles.enumerated() {
      if index > 0 { out.byte(UInt8(ascii: ",")) }
      out.append(#"{"handle":"#)
      out.decimal(Int(entry.handle))
      writeUUID(entry.uuid, entry.name, to: &out)
      writeFrame(entry.learnedIn, to: &out)
      out.byte(UInt8(ascii: "}"))
    }
    out.byte(UInt8(ascii: "]"))
  }

  static func writeUUID(_ uuid: BluetoothUUID, _ name: Name?, to out: inout OutputBuffer) {
    out.append(#","uuid":""#)
    out.uuid(uuid)
    out.byte(UInt8(ascii: "\""))
    if let name {
      out.append(#","name":"#)
      out.jsonString(name)
    }
  }

  static func writeFrame(_ frame: Int, to out: inout OutputBuffer) {
    guard frame > 0 else { return }
    out.append(#","learned_in_frame":"#)
    out.decimal(frame)
  }
}

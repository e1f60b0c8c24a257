import BLEAnalysis
import BLECore
import BLEDecoder

/// `summary --json`: one object per file, on one line (docs/json.md, "Summary objects"). Times
/// ending in `_s` are seconds since the capture's first frame; absent values are left out.
package enum SummaryJSON {
  static let version = 1

  package static func write(_ report: SummaryReport, to out: inout OutputBuffer) {
    var json = JSONWriter(out: out)
    let summary = report.summary
    json.open()
    json.int("v", version)
    json.string("kind", "summary")
    json.string("file", report.file)
    json.string("format", report.format)
    json.int("frames", summary.frames)
    if let first = summary.firstTimestamp { json.timestamp("start_ts", first) }
    json.micros("duration_s", summary.duration)
    if report.damage != nil || report.skippedPlaces > 0 {
      json.open("damaged")
      if let damage = report.damage { json.string("message", damage) }
      json.int("skipped_bytes", Int(clamping: report.skippedBytes))
      json.int("skipped_places", report.skippedPlaces)
      json.close()
    }
    if let findings = report.findings, !findings.groups.isEmpty {
      json.open("findings")
      json.int("errors", findings.errors)
      json.int("warnings", findings.warnings)
      json.open("rules")
      for (rule, count) in findings.countsByRule { json.int(rule.id, count) }
      json.close()
      json.close()
    }
    if !report.tablesFromElsewhere.isEmpty {
      json.openArray("gatt_maps")
      for (server, provenance) in report.tablesFromElsewhere {
        json.open()
        json.string("server", server.description)
        json.string("source", "\(provenance.source.key)")
        json.string("map", provenance.file ?? provenance.origin)
        if let learned = provenance.learned { json.string("learned", learned) }
        json.close()
      }
      json.closeArray()
    }
    json.openArray("devices")
    for device in summary.devices { self.device(device, summary, &json) }
    json.closeArray()
    json.int("untracked_device_reports", summary.untrackedDeviceReports)
    json.openArray("attempts")
    for attempt in summary.attempts { self.attempt(attempt, summary, &json) }
    json.closeArray()
    json.int("attempts_not_listed", summary.attemptsNotListed)
    json.openArray("connections")
    for connection in summary.connections { self.connection(connection, summary, &json) }
    json.closeArray()
    json.int("connections_not_listed", summary.connectionsNotListed)
    json.openArray("att_latency")
    for procedure in summary.latencies.sorted(by: { $0.opcode < $1.opcode }) where procedure.sketch.count > 0 {
      json.open()
      json.int("request", Int(procedure.opcode))
      if let name = AssignedNumbers.attOpcodeName(procedure.opcode) { json.string("request_name", "\(name)") }
      json.int("count", procedure.sketch.count)
      json.int("errors", procedure.errors)
      for (key, value) in [("min_ms", procedure.sketch.minimum), ("median_ms", procedure.sketch.carriedQuantile(0.5)), ("p95_ms", procedure.sketch.carriedQuantile(0.95)), ("max_ms", procedure.sketch.maximum)] {
        if let value { json.number(key, value / 1000) }
      }
      json.close()
    }
    json.closeArray()
    json.close()
    json.out.byte(0x0A)
    out = json.out
  }

  static func device(_ device: DeviceSummary, _ summary: SessionSummary, _ json: inout JSONWriter) {
    json.open()
    json.string("address", "\(device.address)")
    if let type = device.addressType { json.string("address_type", "\(type.name)") }
    if let identity = device.identity { json.string("identity", "\(identity)") }
    if let type = device.identityType { json.string("identity_type", "\(type.name)") }
    if let name = device.name { json.string("name", name) }
    if let name = device.advertisedName { json.string("advertised_name", name) }
    if let name = device.deviceName { json.string("device_name", name) }
    if let appearance = device.appearance {
      json.int("appearance", Int(appearance))
      if let name = AssignedNumbers.appearanceName(appearance) { json.string("appearance_name", "\(name)") }
    }
    if let company = device.company {
      json.int("company", Int(company))
      if let name = AssignedNumbers.companyName(company) { json.string("company_name", "\(name)") }
    }
    if let name = device.manufacturerName { json.string("manufacturer_name", name) }
    json.int("advertising_reports", device.advertisingReports)
    if let rssi = device.weakestRSSI { json.int("rssi_min", Int(rssi)) }
    if let rssi = device.strongestRSSI { json.int("rssi_max", Int(rssi)) }
    json.micros("first_seen_s", summary.offset(device.firstSeen))
    json.micros("last_seen_s", summary.offset(device.lastSeen))
    json.int("connections", device.connectionCount)
    json.openArray("services")
    for service in device.services {
      json.open()
      json.int("start", Int(service.start))
      json.int("end", Int(service.end))
      json.uuid("uuid", service.uuid)
      json.bool("primary", service.primary)
      json.close()
    }
    json.closeArray()
    json.close()
  }

  static func attempt(_ attempt: ConnectionAttempt, _ summary: SessionSummary, _ json: inout JSONWriter) {
    json.open()
    if let frame = attempt.frame { json.int("frame", frame) }
    json.micros("t_s", summary.offset(attempt.time))
    if let peer = attempt.peer { json.string("peer", "\(peer)") }
    if let type = attempt.peerType { json.string("peer_type", "\(type.name)") }
    json.bool("le", attempt.isLE)
    switch attempt.outcome {
    case .connected(let connection):
      json.string("outcome", "connected")
      if let connection { json.int("connection", connection) }
    case .rejected(let status):
      json.string("outcome", "rejected")
      json.hciStatus("status", status)
    case .failed(let status):
      json.string("outcome", "failed")
      json.hciStatus("status", status)
    case .cancelled:
      json.string("outcome", "cancelled")
    case .neverCompleted:
      json.string("outcome", "never_completed")
    }
    if let frame = attempt.endFrame { json.int("end_frame", frame) }
    json.bool("cancel_requested", attempt.cancelRequested)
    json.close()
  }

  static func parameters(_ key: String, _ parameters: ConnectionParameters, _ json: inout JSONWriter) {
    json.open(key)
    json.number("interval_ms", parameters.intervalMilliseconds)
    json.int("latency", Int(parameters.latency))
    json.number("supervision_timeout_ms", parameters.supervisionTimeoutMilliseconds)
    json.close()
  }

  static func connection(_ connection: ConnectionSummary, _ summary: SessionSummary, _ json: inout JSONWriter) {
    json.open()
    json.int("number", connection.number)
    json.int("adapter", Int(connection.adapter))
    json.int("handle", Int(connection.handle))
    json.int("generation", connection.generation)
    if let local = connection.localAddress { json.string("local_address", "\(local)") }
    if let peer = connection.peer { json.string("peer", "\(peer)") }
    if let type = connection.peerType { json.string("peer_type", "\(type.name)") }
    if let role = connection.role { json.string("role", role == .central ? "central" : "peripheral") }
    json.bool("start_seen", connection.startSeen)
    json.int("start_frame", connection.startFrame)
    json.micros("start_s", summary.offset(connection.start))
    if let frame = connection.endFrame { json.int("end_frame", frame) }
    if let end = connection.end { json.micros("end_s", summary.offset(end)) }
    json.micros("duration_s", connection.duration)
    switch connection.ending {
    case .ended: json.string("ending", "ended")
    case .openAtEnd: json.string("ending", "open_at_end")
    case .lastHeard: json.string("ending", "last_heard")
    case let .endedUnseen(frame, _, device):
      json.string("ending", "ended_unseen")
      json.int("heard_elsewhere_frame", frame)
      json.string("heard_elsewhere_device", "\(device)")
    case let .handleReused(number, frame):
      json.string("ending", "handle_reused")
      json.int("reused_by_connection", number)
      json.int("reused_frame", frame)
    }
    json.int("last_heard_frame", connection.lastHeardFrame)
    json.micros("last_heard_s", summary.offset(connection.lastHeard))
    if let reason = connection.disconnectReason { json.hciStatus("disconnect_reason", reason) }
    if let initiator = connection.initiator { json.string("disconnected_by", initiator.rawValue) }
    if let reason = connection.disconnectRequestReason { json.hciStatus("disconnect_request_reason", reason) }
    if let opening = connection.openingParameters { parameters("parameters", opening, &json) }
    if let now = connection.parameters { parameters("parameters_final", now, &json) }
    json.openArray("updates")
    for update in connection.updates {
      json.open()
      json.int("frame", update.frame)
      json.micros("t_s", summary.offset(update.time))
      json.hciStatus("status", update.status)
      json.number("interval_ms", update.parameters.intervalMilliseconds)
      json.int("latency", Int(update.parameters.latency))
      json.number("supervision_timeout_ms", update.parameters.supervisionTimeoutMilliseconds)
      json.close()
    }
    json.closeArray()
    json.int("updates_not_listed", connection.updatesNotListed)
    if let mtu = connection.mtu { json.int("mtu", mtu) }
    if let frame = connection.mtuFrame { json.int("mtu_frame", frame) }
    json.openArray("eatt_channels")
    for channel in connection.eattChannels { json.element(Int(channel)) }
    json.closeArray()
    if let phy = connection.transmitPHY { json.int("phy_tx", Int(phy)) }
    if let phy = connection.receivePHY { json.int("phy_rx", Int(phy)) }
    if let value = connection.maxTransmitOctets { json.int("max_tx_octets", Int(value)) }
    if let value = connection.maxTransmitTime { json.int("max_tx_time_us", Int(value)) }
    if let value = connection.maxReceiveOctets { json.int("max_rx_octets", Int(value)) }
    if let value = connection.maxReceiveTime { json.int("max_rx_time_us", Int(value)) }
    if let version = connection.remoteVersion { json.int("remote_version", Int(version)) }
    if let manufacturer = connection.remoteManufacturer {
      json.int("remote_manufacturer", Int(manufacturer))
      if let name = AssignedNumbers.companyName(manufacturer) { json.string("remote_manufacturer_name", "\(name)") }
    }
    if let air = connection.air { self.air(air, &json) }
    security(connection.security, summary, &json)
    json.int("att_pdus", connection.attPDUs)
    errors("errors", connection.errors, &json)
    json.openArray("characteristics")
    for activity in connection.characteristics { characteristic(activity, summary, &json) }
    json.closeArray()
    json.int("untracked_operations", connection.untrackedOperations)
    json.openArray("subscriptions")
    for subscription in connection.subscriptions {
      json.open()
      json.int("frame", subscription.frame)
      json.micros("t_s", summary.offset(subscription.time))
      json.int("handle", Int(subscription.handle))
      if let uuid = subscription.characteristic { json.uuid("characteristic", uuid) }
      json.int("value", Int(subscription.value))
      json.bool("notifications", subscription.notifications)
      json.bool("indications", subscription.indications)
      json.string("outcome", subscription.outcome.rawValue)
      if let code = subscription.errorCode {
        json.int("error", Int(code))
        if let name = AssignedNumbers.attErrorName(code) { json.string("error_name", "\(name)") }
      }
      if let frame = subscription.responseFrame { json.int("response_frame", frame) }
      json.close()
    }
    json.closeArray()
    json.int("subscriptions_not_listed", connection.subscriptionsNotListed)
    if let hr = connection.heartRate { heartRate(hr, summary, &json) }
    if let battery = connection.battery {
      json.open("battery")
      json.int("readings", battery.readings)
      for (key, reading) in [("first", battery.first), ("last", battery.last), ("min", battery.minimum), ("max", battery.maximum)] {
        json.open(key)
        json.int("percent", Int(reading.percent))
        json.micros("t_s", summary.offset(reading.time))
        json.int("frame", reading.frame)
        json.close()
      }
      json.close()
    }
    json.close()
  }

  static func air(_ air: AirLinkSummary, _ json: inout JSONWriter) {
    json.open("air")
    json.int("packets", air.packets)
    json.int("empty", air.empty)
    json.int("retransmissions", air.retransmissions)
    json.int("damaged", air.damaged)
    json.int("missed", air.missed)
    json.int("decrypted", air.decrypted)
    json.int("sealed", air.sealed)
    json.int("stored_decrypted", air.storedDecrypted)
    json.int("sniffer_gaps", air.snifferGaps)
    if let longest = air.longestSnifferGap {
      json.micros("longest_sniffer_gap_s", longest.microseconds)
      json.int("longest_sniffer_gap_frame", longest.frame)
    }
    for (key, statistics) in zip(["central_rssi", "peripheral_rssi"], air.signal) {
      guard let mean = statistics.mean else { continue }
      json.open(key)
      json.int("count", statistics.count)
      json.int("min", Int(statistics.weakest))
      json.int("max", Int(statistics.strongest))
      json.number("mean", (mean * 10).rounded() / 10)
      json.close()
    }
    json.close()
  }

  static func security(_ security: SecuritySummary, _ summary: SessionSummary, _ json: inout JSONWriter) {
    json.open("security")
    if let frame = security.pairingFrame { json.int("pairing_frame", frame) }
    if let time = security.pairingTime { json.micros("pairing_s", summary.offset(time)) }
    if let secure = security.secureConnections { json.bool("secure_connections", secure) }
    if let method = security.method { json.string("method", method.rawValue) }
    if let reason = security.failureReason {
      json.int("failure_reason", Int(reason))
      if let name = SecurityManager.failureReasonName(reason) { json.string("failure_reason_name", "\(name)") }
    }
    if let local = security.failureSentByLocalHost { json.string("failure_sent_by", local ? "local_host" : "peer") }
    json.bool("keys_distributed", security.keysDistributed)
    json.bool("encrypted", security.encrypted)
    if let since = security.encryptedSince { json.micros("encrypted_since_s", summary.offset(since)) }
    json.int("encryption_failures", security.encryptionFailures)
    if let status = security.lastEncryptionStatus { json.hciStatus("last_encryption_status", status) }
    json.close()
  }

  static func errors(_ key: String, _ errors: [ErrorCount], _ json: inout JSONWriter) {
    json.openArray(key)
    for error in errors {
      json.open()
      json.int("request", Int(error.request))
      if let name = AssignedNumbers.attOpcodeName(error.request) { json.string("request_name", "\(name)") }
      json.int("code", Int(error.code))
      if let name = AssignedNumbers.attErrorName(error.code) { json.string("code_name", "\(name)") }
      json.int("count", error.count)
      json.close()
    }
    json.closeArray()
  }

  static func characteristic(_ activity: CharacteristicActivity, _ summary: SessionSummary, _ json: inout JSONWriter) {
    json.open()
    json.int("handle", Int(activity.handle))
    json.string("served_by", activity.servedLocally ? "local" : "peer")
    if let uuid = activity.uuid { json.uuid("uuid", uuid) }
    if activity.source != .capture { json.string("source", "\(activity.source.key)") }
    json.bool("descriptor", activity.isDescriptor)
    json.int("reads", activity.reads)
    json.int("writes", activity.writes)
    json.int("write_commands", activity.writeCommands)
    json.int("notifications", activity.notifications)
    json.int("indications", activity.indications)
    if let first = activity.firstValue { json.micros("first_value_s", summary.offset(first)) }
    if let last = activity.lastValue { json.micros("last_value_s", summary.offset(last)) }
    if let rate = activity.rate { json.number("rate_hz", rate) }
    json.openArray("longest_gaps")
    for gap in activity.longestGaps {
      json.open()
      json.micros("after_s", summary.offset(gap.start))
      json.micros("seconds", gap.microseconds)
      json.bool("until_end", gap.untilEnd)
      json.close()
    }
    json.closeArray()
    errors("errors", activity.errors, &json)
    json.close()
  }

  static func spans(_ key: String, _ spans: [ClosedTimeSpan], _ summary: SessionSummary, _ json: inout JSONWriter) {
    json.openArray(key)
    for span in spans {
      json.open()
      json.micros("start_s", summary.offset(span.start))
      json.micros("end_s", summary.offset(span.end))
      json.close()
    }
    json.closeArray()
  }

  static func heartRate(_ hr: HeartRateSummary, _ summary: SessionSummary, _ json: inout JSONWriter) {
    json.open("heart_rate")
    json.int("measurements", hr.measurements)
    if let value = hr.bpm.minimum { json.number("bpm_min", value) }
    if let value = hr.bpm.mean { json.number("bpm_mean", value) }
    if let value = hr.bpm.maximum { json.number("bpm_max", value) }
    json.int("zero_readings", hr.zeroReadings)
    if hr.flagCounts.contains(where: { $0 > 0 }) {
      json.open("flags")
      for (entry, value) in zip(HeartRateFlags.all, hr.flagCounts) where value > 0 { json.int(entry.word, value) }
      json.close()
    }
    json.int("left_out_of_rate", hr.leftOutOfRate)
    json.int("rr_count", hr.rr.count)
    if let value = hr.rr.mean { json.number("rr_mean_ms", value) }
    if let value = hr.successive.rmssd { json.number("rmssd_ms", value) }
    if let value = hr.rr.standardDeviation { json.number("sdnn_ms", value) }
    json.int("contact_detected", hr.contactDetected)
    json.int("contact_not_detected", hr.contactNotDetected)
    json.int("contact_loss_count", hr.contactLossSpans)
    json.micros("contact_loss_s", hr.contactLossMicroseconds)
    spans("contact_loss", hr.contactLoss, summary, &json)
    if let median = hr.intervals.quantile(0.5) { json.number("median_interval_s", median / 1000) }
    json.int("dropout_count", hr.dropoutCount)
    spans("dropouts", hr.dropouts, summary, &json)
    if let energy = hr.energyExpended { json.int("energy_expended_kj", Int(energy)) }
    json.close()
  }
}

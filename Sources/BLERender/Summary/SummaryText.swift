import BLEAnalysis
import BLECore
import BLEDecoder

/// `summary` as text: what a person reads in one screen for a typical session. Long lists are
/// cut (the JSON has everything kept), each cut saying how much was left out.
package enum SummaryText {
  /// Connections shown in full; further ones get one line each, up to `compactConnections`.
  static let detailedConnections = 16
  static let compactConnections = 64
  /// Devices seen only advertising, the most heard first.
  static let advertisers = 8
  static let characteristicRows = 24
  static let subscriptionRows = 12
  static let parameterRows = 8
  /// The label column of a connection's key–value lines.
  static let labelWidth = 12

  package static func write(_ report: SummaryReport, to out: inout OutputBuffer) {
    var text = Lines()
    let summary = report.summary
    header(report, &text)
    devices(summary, &text)
    attempts(summary, &text)
    for connection in summary.connections.prefix(detailedConnections) {
      self.connection(connection, summary, &text)
    }
    compact(summary, &text)
    latency(summary, &text)
    out.append(string: text.text)
  }

  // MARK: - Sections

  static func header(_ report: SummaryReport, _ text: inout Lines) {
    let summary = report.summary
    text.line("\(report.file): \(report.format)")
    var span = "  \(count(summary.frames, "frame"))"
    if let first = summary.firstTimestamp {
      var date = OutputBuffer(fd: nil)
      date.utcDateTime(first)
      span += " over \(duration(summary.duration)), from \(date.text) UTC"
    }
    text.line(span)
    let connected = summary.attempts.filter { if case .connected = $0.outcome { return true } else { return false } }.count
    var counts = "  \(count(summary.devices.count, "device")), \(count(summary.connections.count + summary.connectionsNotListed, "connection"))"
    if !summary.attempts.isEmpty || summary.attemptsNotListed > 0 {
      counts += ", \(count(summary.attempts.count + summary.attemptsNotListed, "connection attempt")) (\(connected) connected)"
    }
    text.line(counts)
    if let damage = report.damage { text.line("  damaged: read up to the damage: \(damage)") }
    if report.skippedPlaces > 0 {
      text.line("  damaged: skipped \(count(Int(clamping: report.skippedBytes), "byte")) in \(count(report.skippedPlaces, "place"))")
    }
    for (server, provenance) in report.tablesFromElsewhere { text.line("  " + Words.provenance(server, provenance)) }
    if let findings = report.findings, !findings.groups.isEmpty {
      let rules = findings.countsByRule.map { "\($0.rule.id) ×\($0.count)" }.joined(separator: ", ")
      text.line("  rules broken: \(count(findings.errors, "error")), \(count(findings.warnings, "warning")) (\(rules)); 'bledissect check' names the frames")
    }
  }

  static func devices(_ summary: SessionSummary, _ text: inout Lines) {
    guard !summary.devices.isEmpty else { return }
    let connected = summary.devices.filter { $0.connectionCount > 0 }
    let advertising = summary.devices.filter { $0.connectionCount == 0 }.sorted { $0.advertisingReports > $1.advertisingReports }
    text.blank()
    text.line("Devices")
    for device in connected {
      var title = "  \(device.address)"
      if let type = device.addressType { title += " (\(type.name))" }
      if let name = device.name { title += "  \"\(Escaping.escaped(name, .quoted))\"" }
      if let appearance = device.appearance { title += "  " + appearanceText(appearance) }
      text.line(title)
      var rows = Table(minimumWidths: [labelWidth])
      if let identity = device.identity {
        rows.add(["    identity", "\(identity)" + (device.identityType.map { " (\($0.name))" } ?? "")])
      }
      if let advertised = device.advertisedName, device.deviceName != nil, advertised != device.deviceName {
        rows.add(["    advertised as", "\"\(Escaping.escaped(advertised, .quoted))\""])
      }
      var maker: [String] = []
      if let name = device.manufacturerName { maker.append(Escaping.escaped(name, .line)) }
      if let company = device.company { maker.append("advertised company " + companyText(company)) }
      if !maker.isEmpty { rows.add(["    maker", maker.joined(separator: "; ")]) }
      var seen = count(device.connectionCount, "connection")
      if device.advertisingReports > 0 { seen += ", " + count(device.advertisingReports, "advertising report") + rssiText(device) }
      rows.add(["    seen", seen])
      if !device.services.isEmpty {
        rows.add(["    services", device.services.map { uuidName($0.uuid) }.joined(separator: ", ")])
      }
      text.table(rows)
    }
    guard !advertising.isEmpty else { return }
    text.line("  advertising only:")
    var rows = Table()
    for device in advertising.prefix(advertisers) {
      var what = device.name.map { "\"\($0)\"" } ?? ""
      if let appearance = device.appearance { what += (what.isEmpty ? "" : " ") + appearanceText(appearance) }
      if let company = device.company { what += (what.isEmpty ? "" : " ") + companyText(company) }
      rows.add(["    \(device.address)", device.addressType.map { "\($0.name)" } ?? "", count(device.advertisingReports, "report") + rssiText(device), what])
    }
    text.table(rows)
    if advertising.count > advertisers { text.line("    … \(count(advertising.count - advertisers, "more device")) seen advertising (--json lists them)") }
    if summary.untrackedDeviceReports > 0 {
      text.line("    … \(count(summary.untrackedDeviceReports, "report")) from addresses beyond the first \(SessionSummary.Limits.devices), not described")
    }
  }

  static func attempts(_ summary: SessionSummary, _ text: inout Lines) {
    let unsuccessful = summary.attempts.filter { if case .connected = $0.outcome { return false } else { return true } }
    guard !unsuccessful.isEmpty else { return }
    text.blank()
    text.line("Connection attempts that did not connect")
    var rows = Table()
    for attempt in unsuccessful.prefix(16) {
      let outcome: String
      switch attempt.outcome {
      case .connected: outcome = "connected"
      case .rejected(let status): outcome = "rejected: " + errorText(status)
      case .failed(let status): outcome = "failed: " + errorText(status)
      case .cancelled: outcome = "cancelled by the host"
      case .neverCompleted: outcome = "never completed"
      }
      rows.add(["  " + seconds(summary.offset(attempt.time)), attempt.frame.map { "#\($0)" } ?? "", attempt.peer.map { "\($0)" } ?? "accept list", outcome])
    }
    text.table(rows, rightAligned: [0])
    if unsuccessful.count > 16 { text.line("  … \(count(unsuccessful.count - 16, "more attempt")) (--json lists them)") }
  }

  static func connection(_ connection: ConnectionSummary, _ summary: SessionSummary, _ text: inout Lines) {
    text.blank()
    var title = "Connection \(connection.number)  \(connection.peer.map { "\($0)" } ?? "peer unknown")"
    if let peer = connection.peer, let device = summary.devices.first(where: { $0.address == peer }), let name = device.name { title += " \"\(Escaping.escaped(name, .quoted))\"" }
    title += ", handle \(connection.handle)"
    if let role = connection.role { title += ", as \(role == .central ? "central" : "peripheral")" }
    text.line(title)
    var rows = Table(minimumWidths: [labelWidth])
    let start = connection.startSeen ? seconds(summary.offset(connection.start)) : "before the capture (first seen \(seconds(summary.offset(connection.start))))"
    let end: String
    switch connection.ending {
    case .ended: end = connection.end.map { seconds(summary.offset($0)) } ?? "ended"
    case .openAtEnd: end = "still open at the end"
    case .lastHeard, .handleReused, .endedUnseen: end = "last heard at \(seconds(summary.offset(connection.lastHeard))) (#\(connection.lastHeardFrame))"
    }
    rows.add(["  time", "\(start) → \(end) (\(duration(connection.duration)))"])
    switch connection.ending {
    case .lastHeard:
      let silenceMicroseconds = Timestamp.elapsed(from: connection.lastHeard, to: connection.captureEnd)
      let silence = duration(silenceMicroseconds)
      if let timeout = connection.parameters?.supervisionTimeout, silenceMicroseconds > Int64(timeout) * 10_000 {
        rows.add(["  ended", "not seen: nothing heard for the last \(silence) of the capture, longer than its supervision timeout: the devices dropped the link, or the sniffer lost it"])
      } else {
        let interval = connection.parameters.map { ", a link carries a packet every \(fixed2($0.intervalMilliseconds)) ms" } ?? ""
        rows.add(["  ended", "not seen: nothing heard for the last \(silence) of the capture\(interval); the capture cannot tell whether it went on"])
      }
    case let .handleReused(number, frame):
      rows.add(["  ended", "not captured: its handle was taken by connection \(number) at #\(frame)"])
    case let .endedUnseen(frame, time, device):
      let after = duration(Timestamp.elapsed(from: connection.lastHeard, to: time))
      let who = device == connection.peer ? "the peripheral" : "the central"
      rows.add(["  ended", "not seen (encrypted, or missed by the sniffer): \(who) \(device) advertised to be connected at #\(frame), \(after) after the link's last packet"])
    case .ended, .openAtEnd:
      break
    }
    if let reason = connection.disconnectReason {
      let who: String
      switch connection.initiator ?? .unknown {
      case .localHost: who = "by the local host"
      case .peer: who = "by the peer"
      case .linkLost: who = "link lost"
      case .unknown: who = "by an unknown side"
      }
      rows.add(["  ended", "\(who): \(errorText(reason))"])
    }
    // The parameters at connection, then every update.
    if let opening = connection.openingParameters {
      rows.add(["  parameters", parametersText(opening)])
    } else if !connection.updates.isEmpty {
      rows.add(["  parameters", "not seen at connection"])
    }
    do {
      for update in connection.updates.prefix(parameterRows) {
        let what = update.status == 0 ? parametersText(update.parameters) : "update failed: " + errorText(update.status)
        rows.add(["    " + seconds(summary.offset(update.time)), what])
      }
      let more = max(connection.updates.count - parameterRows, 0) + connection.updatesNotListed
      if more > 0 { rows.add(["", "… \(count(more, "more update"))"]) }
    }
    rows.add(["  link", linkText(connection)])
    if let air = connection.air { rows.add(["  air", airText(air)]) }
    rows.add(["  security", securityText(connection, summary)])
    text.table(rows)
    subscriptions(connection, summary, &text)
    characteristics(connection, summary, &text)
    errors(connection, &text)
    heartRate(connection, summary, &text)
    if let battery = connection.battery {
      var line = "\(battery.first.percent) % at \(seconds(summary.offset(battery.first.time)))"
      if battery.readings > 1 {
        line += " → \(battery.last.percent) % at \(seconds(summary.offset(battery.last.time)))"
        line += " (min \(battery.minimum.percent) % at \(seconds(summary.offset(battery.minimum.time))), max \(battery.maximum.percent) % at \(seconds(summary.offset(battery.maximum.time))); \(count(battery.readings, "reading")))"
      }
      var rows = Table(minimumWidths: [labelWidth])
      rows.add(["  battery", line])
      text.table(rows)
    }
  }

  static func subscriptions(_ connection: ConnectionSummary, _ summary: SessionSummary, _ text: inout Lines) {
    guard !connection.subscriptions.isEmpty else { return }
    text.line("  subscriptions")
    var rows = Table()
    for subscription in connection.subscriptions.prefix(subscriptionRows) {
      let what: String
      switch (subscription.notifications, subscription.indications) {
      case (true, true): what = "notifications + indications"
      case (true, false): what = "notifications on"
      case (false, true): what = "indications on"
      case (false, false): what = "off"
      }
      let outcome: String
      switch subscription.outcome {
      case .accepted: outcome = "accepted"
      case .rejected: outcome = "rejected: " + attErrorText(subscription.errorCode ?? 0)
      case .unacknowledged: outcome = "sent as command"
      case .noResponse: outcome = "no response"
      }
      let name = subscription.characteristicName.map { "\($0)" } ?? subscription.characteristic.map(uuidName) ?? "CCCD 0x" + hex(subscription.handle)
      rows.add(["    " + seconds(summary.offset(subscription.time)), name, what, outcome])
    }
    text.table(rows, rightAligned: [0])
    let more = max(connection.subscriptions.count - subscriptionRows, 0) + connection.subscriptionsNotListed
    if more > 0 { text.line("    … \(count(more, "more change"))") }
  }

  static func characteristics(_ connection: ConnectionSummary, _ summary: SessionSummary, _ text: inout Lines) {
    // Descriptors are left out (their writes are the subscriptions above), unless they failed.
    // The usual server's first (the peer; the local device on a peripheral's capture), then
    // the other side's, under a line naming it: both ends of a link may serve GATT.
    let localIsUsualServer = connection.role == .peripheral
    let shown = connection.characteristics.filter { activity in
      let used = activity.reads > 0 || activity.pushed > 0 || (!activity.isDescriptor && activity.writes.saturatingAdd(activity.writeCommands) > 0)
      return used || !activity.errors.isEmpty
    }.sorted { ($0.servedLocally != localIsUsualServer ? 1 : 0, $0.handle) < ($1.servedLocally != localIsUsualServer ? 1 : 0, $1.handle) }
    guard !shown.isEmpty else { return }
    var rows = Table()
    rows.add(["  characteristic", "handle", "reads", "writes", "notified", "rate", "longest silence"])
    var saidOtherServer = false
    for activity in shown.prefix(characteristicRows) {
      if activity.servedLocally != localIsUsualServer && !saidOtherServer {
        saidOtherServer = true
        rows.add(["  served by " + otherServerName(connection, local: activity.servedLocally), "", "", "", "", "", ""])
      }
      var name = activity.name.map { "\($0)" } ?? activity.uuid.map(uuidName) ?? "unknown"
      switch activity.source {
      case .capture: break
      case .imported: name += " (map)"
      case .cache: name += " (cached map)"
      case .layout: name += " (by layout)"
      case .inferred: name += " (inferred)"
      }
      var pushed = activity.notifications > 0 ? "\(activity.notifications)" : ""
      if activity.indications > 0 { pushed += (pushed.isEmpty ? "" : " + ") + "\(activity.indications) ind" }
      let writes = activity.writes.saturatingAdd(activity.writeCommands)
      let rate = activity.rate.map { fixed($0, places: 2) + " /s" } ?? ""
      var silence = ""
      if let gap = activity.longestGaps.first, activity.pushed > 1 {
        silence = duration(gap.microseconds) + (gap.untilEnd ? " at the end" : " after " + seconds(summary.offset(gap.start)))
        if stopped(gap, activity) { silence += "  notifications stopped" }
      }
      rows.add(["    " + name, "0x" + hex(activity.handle), activity.reads > 0 ? "\(activity.reads)" : "", writes > 0 ? "\(writes)" : "", pushed, rate, silence])
    }
    text.table(rows, rightAligned: [2, 3, 4, 5])
    if shown.count > characteristicRows { text.line("    … \(count(shown.count - characteristicRows, "more characteristic"))") }
    if connection.untrackedOperations > 0 {
      text.line("    … \(count(connection.untrackedOperations, "operation")) on handles beyond the first \(SessionSummary.Limits.characteristics)")
    }
  }

  /// The side serving attributes other than the usual server: the local side (by its address
  /// on a sniffed link, whose central it is) or the peer.
  static func otherServerName(_ connection: ConnectionSummary, local: Bool) -> String {
    guard local else { return "the peer" + (connection.peer.map { " \($0)" } ?? "") }
    if let address = connection.localAddress { return "the central \(address)" }
    return "the local device (hci\(connection.adapter))"
  }

  /// Whether values stopped: a silence that ran to the link's (or capture's) end, with no value
  /// after it, longer than a slow stream's: max(2 s, 3 × the mean interval).
  static func stopped(_ gap: Gap, _ activity: CharacteristicActivity) -> Bool {
    guard gap.untilEnd, let rate = activity.rate, rate > 0 else { return false }
    let meanInterval = 1_000_000 / rate
    return Double(gap.microseconds) > max(2_000_000, 3 * meanInterval)
  }

  static func errors(_ connection: ConnectionSummary, _ text: inout Lines) {
    guard !connection.errors.isEmpty else { return }
    let words = connection.errors.map { error in
      let request = AssignedNumbers.attOpcodeName(error.request).map { "\($0)" } ?? "opcode 0x" + hex8(error.request)
      return "\(attErrorText(error.code)) ×\(error.count) (\(request))"
    }
    var rows = Table(minimumWidths: [labelWidth])
    rows.add(["  ATT errors", words.joined(separator: ", ")])
    text.table(rows)
  }

  static func heartRate(_ connection: ConnectionSummary, _ summary: SessionSummary, _ text: inout Lines) {
    guard let hr = connection.heartRate else { return }
    var rows = Table(minimumWidths: [labelWidth])
    if let minimum = hr.bpm.minimum, let mean = hr.bpm.mean, let maximum = hr.bpm.maximum {
      rows.add(["  heart rate", "\(real(minimum, places: 0)) / \(fixed(mean, places: 1)) / \(real(maximum, places: 0)) bpm (min / mean / max), \(count(hr.measurements, "measurement"))"])
    } else {
      rows.add(["  heart rate", "\(count(hr.measurements, "measurement")), none with a heart rate"])
    }
    // Doubtful values are facts: counted, and those with a doubtful rate left out of the above.
    let flagged = zip(HeartRateFlags.all, hr.flagCounts).filter { $0.1 > 0 }.map { "\($0.1) \($0.0.word)" }
    if !flagged.isEmpty {
      var line = flagged.joined(separator: ", ")
      if hr.leftOutOfRate > 0 { line += "; \(hr.leftOutOfRate) left out of min / mean / max" }
      rows.add(["    flagged", line])
    }
    if hr.rr.count > 0 {
      var line = "\(count(hr.rr.count, "interval")), mean \(fixed(hr.rr.mean ?? 0, places: 1)) ms"
      line += ", RMSSD " + (hr.successive.rmssd.map { fixed($0, places: 1) + " ms" } ?? "n/a")
      line += ", SDNN " + (hr.rr.standardDeviation.map { fixed($0, places: 1) + " ms" } ?? "n/a")
      rows.add(["    RR", line])
    }
    if hr.contactLossSpans > 0 {
      let first = hr.contactLoss.first.map { ", first at " + seconds(summary.offset($0.start)) } ?? ""
      rows.add(["    contact", "lost \(count(hr.contactLossSpans, "time")), \(duration(hr.contactLossMicroseconds)) in all\(first)"])
    } else if hr.contactDetected > 0 {
      rows.add(["    contact", "detected throughout"])
    }
    if hr.dropoutCount > 0 {
      let longest = hr.dropouts.max { $0.microseconds < $1.microseconds }
      let where_ = longest.map { ", longest \(duration($0.microseconds)) after \(seconds(summary.offset($0.start)))" } ?? ""
      rows.add(["    dropouts", "\(hr.dropoutCount)\(where_)"])
    } else if hr.measurements > 1 {
      rows.add(["    dropouts", "none"])
    }
    if let median = hr.intervals.quantile(0.5) {
      rows.add(["    interval", "median \(duration(Int64(median * 1000))) between measurements"])
    }
    text.table(rows)
  }

  static func compact(_ summary: SessionSummary, _ text: inout Lines) {
    let rest = summary.connections.dropFirst(detailedConnections)
    guard !rest.isEmpty || summary.connectionsNotListed > 0 else { return }
    text.blank()
    text.line("More connections")
    var rows = Table()
    for connection in rest.prefix(compactConnections) {
      let end = connection.end.map { seconds(summary.offset($0)) } ?? "open"
      let reason = connection.disconnectReason.map { errorText($0) } ?? ""
      rows.add(["  \(connection.number)", connection.peer.map { "\($0)" } ?? "", seconds(summary.offset(connection.start)) + " → " + end, "\(connection.attPDUs) ATT", reason])
    }
    text.table(rows, rightAligned: [0, 3])
    let more = max(rest.count - compactConnections, 0)
    if more > 0 { text.line("  … \(count(more, "more connection")) (--json lists them)") }
    if summary.connectionsNotListed > 0 {
      text.line("  … \(count(summary.connectionsNotListed, "connection")) beyond the first \(SessionSummary.Limits.connections), counted only")
    }
  }

  static func latency(_ summary: SessionSummary, _ text: inout Lines) {
    let procedures = summary.latencies.filter { $0.sketch.count > 0 }.sorted { $0.sketch.count > $1.sketch.count || ($0.sketch.count == $1.sketch.count && $0.opcode < $1.opcode) }
    guard !procedures.isEmpty else { return }
    text.blank()
    var rows = Table()
    rows.add(["ATT latency (ms)", "count", "min", "median", "p95", "max", "errors"])
    for procedure in procedures {
      let name = AssignedNumbers.attOpcodeName(procedure.opcode).map { "\($0)" } ?? "opcode 0x" + hex8(procedure.opcode)
      let sketch = procedure.sketch
      func ms(_ value: Double?) -> String { value.map { fixed($0 / 1000, places: 3) } ?? "" }
      // A quantile the sample cannot carry is left out: "-" (min and max say all there is).
      func quantile(_ q: Double) -> String { sketch.carriedQuantile(q).map { ms($0) } ?? "-" }
      rows.add(["  " + name, "\(sketch.count)", ms(sketch.minimum), quantile(0.5), quantile(0.95), ms(sketch.maximum), procedure.errors > 0 ? "\(procedure.errors)" : ""])
    }
    text.table(rows, rightAligned: [1, 2, 3, 4, 5, 6])
  }

  // MARK: - Words

  /// "930 packets (832 empty), 6 retransmissions, 3 with a bad CRC, 2 missed by the sniffer;
  /// central -50 dBm (-58 to -44), peripheral -61 dBm".
  static func airText(_ air: AirLinkSummary) -> String {
    var parts = ["\(count(air.packets, "packet")) (\(air.empty) empty)"]
    if air.retransmissions > 0 { parts.append(count(air.retransmissions, "retransmission")) }
    if air.damaged > 0 { parts.append("\(air.damaged) with a bad CRC") }
    if air.missed > 0 { parts.append("\(air.missed) missed by the sniffer") }
    if air.decrypted > 0 { parts.append("\(air.decrypted) decrypted") }
    if air.sealed > 0 { parts.append("\(air.sealed) left encrypted") }
    if air.storedDecrypted > 0 { parts.append("\(air.storedDecrypted) stored already decrypted") }
    if let longest = air.longestSnifferGap {
      let times = air.snifferGaps == 1 ? "" : " (\(count(air.snifferGaps, "time")), longest)"
      parts.append("the sniffer heard nothing for \(duration(longest.microseconds))\(times) before #\(longest.frame), and the link went on")
    }
    var text = parts.joined(separator: ", ")
    var signals: [String] = []
    for (side, statistics) in zip(["central", "peripheral"], air.signal) {
      guard let mean = statistics.mean else { continue }
      var words = "\(side) \(Int(mean.rounded())) dBm"
      if statistics.weakest != statistics.strongest { words += " (\(statistics.weakest) to \(statistics.strongest))" }
      signals.append(words)
    }
    if !signals.isEmpty { text += "; " + signals.joined(separator: ", ") }
    return text
  }

  static func linkText(_ connection: ConnectionSummary) -> String {
    var parts: [String] = []
    // ATT's MTU is said of links that carried ATT (a BR/EDR audio link carries none).
    if let mtu = connection.mtu {
      parts.append("ATT MTU \(mtu)")
    } else {
      parts.append(connection.attPDUs > 0 ? "ATT MTU 23 (no exchange seen)" : "no ATT")
    }
    if !connection.eattChannels.isEmpty { parts.append("EATT \(count(connection.eattChannels.count, "bearer"))") }
    if let transmit = connection.transmitPHY, let receive = connection.receivePHY {
      parts.append(transmit == receive ? "PHY \(phyName(transmit))" : "PHY \(phyName(transmit)) out, \(phyName(receive)) in")
    }
    if let transmit = connection.maxTransmitOctets, let receive = connection.maxReceiveOctets {
      parts.append("data length \(transmit) out, \(receive) in (octets)")
    }
    if let version = connection.remoteVersion {
      var words = "peer controller \(coreVersion(version))"
      if let manufacturer = connection.remoteManufacturer { words += " by " + companyText(manufacturer) }
      parts.append(words)
    }
    return parts.joined(separator: "; ")
  }

  static func securityText(_ connection: ConnectionSummary, _ summary: SessionSummary) -> String {
    let security = connection.security
    var parts: [String] = []
    if let time = security.pairingTime {
      var pairing = "paired at \(seconds(summary.offset(time)))"
      if let secure = security.secureConnections { pairing += secure ? ", LE Secure Connections" : ", legacy pairing" }
      if let method = security.method { pairing += ", " + methodText(method) }
      if let reason = security.failureReason {
        pairing = "pairing failed at \(seconds(summary.offset(time))): \(SecurityManager.failureReasonName(reason).map { "\($0)" } ?? "reason 0x" + hex8(reason))"
        if let local = security.failureSentByLocalHost { pairing += local ? " (sent by the local host)" : " (sent by the peer)" }
      } else if security.keysDistributed {
        pairing += ", keys distributed"
      }
      parts.append(pairing)
    }
    if let since = security.encryptedSince {
      var words = "encrypted from \(seconds(summary.offset(since)))" + (security.encrypted ? "" : ", later turned off")
      if let air = connection.air, air.decrypted == 0, air.storedDecrypted == 0, air.sealed > 0 {
        // A sniffed link no key opened: say how one could be given.
        let how: String
        if security.secureConnections == true {
          how = "--ltk or --keys-from; LE Secure Connections keys cannot be worked out from a sniffed pairing"
        } else if security.method == .outOfBand {
          how = "--ltk, --keys-from or --tk HEX (the out-of-band TK)"
        } else if security.method == .passkeyEntry {
          how = "--ltk, --keys-from, --passkey N or --find-passkey"
        } else {
          how = "--ltk or --keys-from"
        }
        words += " (no key: \(count(air.sealed, "packet")) left encrypted; try \(how))"
      }
      parts.append(words)
    } else {
      parts.append("not encrypted")
    }
    if security.encryptionFailures > 0 {
      parts.append("encryption failed \(count(security.encryptionFailures, "time")) (\(errorText(security.lastEncryptionStatus ?? 0)))")
    }
    return parts.joined(separator: "; ")
  }

  static func methodText(_ method: SecuritySummary.Method) -> String {
    switch method {
    case .justWorks: return "Just Works"
    case .passkeyEntry: return "Passkey Entry"
    case .numericComparison: return "Numeric Comparison"
    case .outOfBand: return "Out of Band"
    }
  }

  static func parametersText(_ parameters: ConnectionParameters) -> String {
    "interval \(fixed2(parameters.intervalMilliseconds)) ms, latency \(parameters.latency), timeout \(real(parameters.supervisionTimeoutMilliseconds, places: 0)) ms"
  }

  static func rssiText(_ device: DeviceSummary) -> String {
    guard let strongest = device.strongestRSSI, let weakest = device.weakestRSSI else { return "" }
    return strongest == weakest ? ", \(strongest) dBm" : ", \(weakest) to \(strongest) dBm"
  }

  static func phyName(_ phy: UInt8) -> String {
    switch phy {
    case 1: return "1M"
    case 2: return "2M"
    case 3: return "Coded"
    default: return "0x" + hex8(phy)
    }
  }

  /// The Core version of an LL version number (Assigned Numbers §2.1).
  static func coreVersion(_ version: UInt8) -> String {
    let names: [UInt8: String] = [6: "4.0", 7: "4.1", 8: "4.2", 9: "5.0", 10: "5.1", 11: "5.2", 12: "5.3", 13: "5.4", 14: "6.0"]
    return names[version].map { "Bluetooth \($0)" } ?? "version 0x" + hex8(version)
  }

  static func errorText(_ code: UInt8) -> String {
    (AssignedNumbers.hciErrorName(code).map { "\($0)" } ?? "error") + " (0x" + hex8(code) + ")"
  }

  static func attErrorText(_ code: UInt8) -> String {
    AssignedNumbers.attErrorName(code).map { "\($0)" } ?? "error 0x" + hex8(code)
  }

  static func appearanceText(_ value: UInt16) -> String {
    AssignedNumbers.appearanceName(value).map { "\($0)" } ?? "appearance 0x" + hex(value)
  }

  static func companyText(_ id: UInt16) -> String {
    // 0xFFFF is no company: the reserved value for tests and devices without one.
    if id == 0xFFFF { return "0xffff (none)" }
    return (AssignedNumbers.companyName(id).map { "\($0) " } ?? "") + "(0x" + hex(id) + ")"
  }

  static func uuidName(_ uuid: BluetoothUUID) -> String {
    GATTDatabase.name(uuid).map { "\($0)" } ?? uuid.description
  }

  static func count(_ number: Int, _ noun: String) -> String { Words.count(number, noun) }

  static func hex(_ value: UInt16) -> String { String(Hex.prefixed(UInt64(value), width: 4).dropFirst(2)) }
  static func hex8(_ value: UInt8) -> String { String(Hex.prefixed(UInt64(value), width: 2).dropFirst(2)) }

  static func real(_ value: Double, places: UInt8) -> String {
    var out = OutputBuffer(fd: nil)
    out.real(value, places: places)
    return out.text
  }

  static func fixed2(_ value: Double) -> String { fixed(value, places: 2) }

  /// `value` with exactly `places` decimals (columns of numbers line up).
  static func fixed(_ value: Double, places: Int) -> String {
    guard let decimal = FixedDecimal(value, places: UInt8(places)) else { return value.description }
    var fraction = decimal.digits > 0 ? String(decimal.fraction) : ""
    fraction = String(repeating: "0", count: max(decimal.digits - fraction.count, 0)) + fraction
    fraction += String(repeating: "0", count: max(places - decimal.digits, 0))
    return (decimal.negative ? "-" : "") + "\(decimal.whole)" + (places > 0 ? "." + fraction : "")
  }

  /// Seconds since the capture's first frame, to the millisecond: `20.568 s`.
  static func seconds(_ micros: Int64) -> String {
    let milliseconds = (micros.magnitude / 500 + 1) / 2  // rounded half up, no overflow
    let fraction = String(milliseconds % 1000)
    return (micros < 0 ? "-" : "") + "\(milliseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction + " s"
  }

  /// A length of time: milliseconds under a second, else seconds to the millisecond, with
  /// minutes and hours when long.
  static func duration(_ micros: Int64) -> String {
    if micros.magnitude < 1_000_000 {
      let milliseconds = Double(micros) / 1000
      return fixed(milliseconds, places: micros.magnitude < 10_000 ? 1 : 0) + " ms"
    }
    let whole = micros.magnitude / 1_000_000
    guard whole >= 120 else { return seconds(micros) }
    // Long spans in minutes (and hours): `3 min 56.258 s`, `2 h 05 min 10 s`.
    let (hours, minutes) = (whole / 3600, whole % 3600 / 60)
    let rest = seconds(Int64(clamping: micros.magnitude % 60_000_000))
    let sign = micros < 0 ? "-" : ""
    return sign + (hours > 0 ? "\(hours) h \(minutes < 10 ? "0" : "")\(minutes) min \(whole % 60) s" : "\(minutes) min \(rest)")
  }
}

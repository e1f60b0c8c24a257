import BLECore
import BLEDecoder

/// The words of a header line for frames ATT does not describe, from their typed facts
/// (`HeaderFact`): the title, the protocol above HCI it belongs to, and what follows the title.
/// The wording lives here, not in the decoders; names come from the decoders' tables.
enum HeaderWords {
  /// The title a frame's facts give it: an L2CAP frame's kind, a signaling or SMP command's
  /// name, else the HCI packet's (a command's or event's name), else the record's.
  // Inlined where renderers call it: a call would copy the whole frame (600 bytes) for it.
  @inline(__always) static func title(_ frame: borrowing DissectedFrame) -> Name {
    switch frame.header {
    case .channelData, .psmData: return "Data"
    case .kFrame, .unplacedKFrame: return "K-frame"
    case .sdu: return "SDU"
    case let .signaling(commands, unfinished):
      if let code = commands.first?.code ?? unfinished { return L2CAPSignaling.name(code) }
    case .securityManager(let command):
      if let code = command.code { return SecurityManager.name(code) }
    case .advertisingPDU(let type, _, _, _): return AdvertisingPDU.name(type)
    case .connectIndication: return "CONNECT_IND"
    case let .dataPDU(llid, length, _, _): return llid == 1 && length == 0 ? "Empty PDU" : (llid == 3 ? "LL Control" : "LL Data")
    case .damagedAirPacket: return "CRC error"
    case .linkControl(let control): return LinkControl.name(control.opcode)
    case .vendorDebugRecord: return "Vendor debug record"
    case .sdp(let fact): return SDP.name(fact.pdu)
    case .rfcomm(let fact): return rfcommTitle(fact)
    default:
      break
    }
    switch frame.hci {
    case .command(let opcode): return HCICommand.name(opcode)
    case let .event(code, subevent): return subevent.map(LEMetaEvent.subeventName) ?? HCIEvent.name(code)
    case .acl: return "ACL Data"
    case .sco: return "SCO Data"
    case .iso: return "ISO Data"
    case .none: return frame.record.kind.recordTitle
    }
  }

  /// "L2CAP", "SMP", "SDP" or "RFCOMM" when the frame's facts are above HCI (ATT frames are the
  /// caller's). Inlined where renderers call it, as `title`.
  @inline(__always) static func layerLabel(_ frame: borrowing DissectedFrame) -> Name {
    switch frame.header {
    case .channelData, .psmData, .kFrame, .unplacedKFrame, .sdu, .signaling: return "L2CAP"
    case .securityManager: return "SMP"
    case .sdp: return "SDP"
    case .rfcomm: return "RFCOMM"
    default: return ""
    }
  }

  /// Writes what follows the title. Frequent facts (ACL data, completed packets) are written
  /// as parts, without building a string.
  // Inlined where renderers call it: a call would copy the whole frame (600 bytes) for it.
  @inline(__always) static func write(_ frame: borrowing DissectedFrame, into line: inout SummaryLine) {
    switch frame.header {
    case .none, .unplacedKFrame:
      return
    case let .aclData(continuation, length, reassembly):
      line.append(.text(continuation ? "continuation, " : "start, "))
      line.append(.number(length))
      line.append(.text(" bytes"))
      reassemblyWords(reassembly, into: &line)
    case let .completedPackets(packets, handles):
      line.append(.number(packets))
      line.append(.text(packets == 1 ? " packet" : " packets"))
      if handles != 1 {
        line.append(.text(" on "))
        line.append(.number(handles))
        line.append(.text(" handles"))
      }
    case let .channelData(cid, length):
      channelWords("channel ", cid, length, into: &line)
    case let .psmData(psm, length):
      channelWords("PSM ", psm, length, into: &line)
    case let .kFrame(have, expected):
      line.append(.text("SDU part: "))
      line.append(.number(have))
      line.append(.text(" of "))
      line.append(.number(expected))
      line.append(.text(" bytes"))
    case let .sdu(psm, bytes):
      channelWords("PSM ", psm, bytes.count, into: &line)
      line.append(.text(": "))
      line.append(.bytes(frame.valueBytes(bytes)))
    case let .signaling(commands, unfinished):
      let text = signalingWords(commands, unfinished: unfinished)
      if let code = commands.first?.code ?? unfinished {
        line.append(.string(dropping(L2CAPSignaling.name(code), from: text)))
      } else {
        line.append(.string(text))
      }
    case .securityManager(let command):
      guard let code = command.code else { return }
      line.append(.string(dropping(SecurityManager.name(code), from: securityManagerWords(command))))
    case let .advertisingPDU(type, advertiser, other, name):
      advertisingWords(type, advertiser, other, name, into: &line)
    case let .dataPDU(llid, length, encrypted, reassembly):
      dataPDUWords(llid, length, encrypted, reassembly, into: &line)
    default:
      line.append(.string(textWords(frame.header)))
    }
  }

  // MARK: - Air packets (most of an air capture: written as parts, no String built)

  /// "D0:B1:ED:00:48:52 \"name\"", "C0:B1:ED:00:50:48 → D0:B1:ED:00:48:52" (SCAN_REQ: the
  /// scanner first), "A → B" (ADV_DIRECT_IND: the advertiser first).
  static func advertisingWords(_ type: UInt8, _ advertiser: BDAddr?, _ other: BDAddr?, _ name: String?, into line: inout SummaryLine) {
    guard let advertiser else { return }
    // Two addresses, an arrow and quotes: 48 bytes, and the name's.
    line.compose(maximumBytes: 48 &+ (name?.utf8.count ?? 0)) { words in
      func address(_ address: BDAddr?) {
        if let address { words.address(address) } else { words.byte(UInt8(ascii: "?")) }
      }
      switch type {
      case 1:
        words.address(advertiser)
        words.text(" → ")
        address(other)
      case 3:
        address(other)
        words.text(" → ")
        words.address(advertiser)
      default:
        words.address(advertiser)
        if let other {
          words.text(" → ")
          words.address(other)
        }
        if let name {
          words.text(" \"")
          words.string(name)
          words.byte(UInt8(ascii: "\""))
        }
      }
    }
  }

  /// "start, 27 bytes (L2CAP fragment: 27 of 29 bytes)", "continuation, 6 bytes, encrypted";
  /// nothing for an empty PDU (its title says it).
  static func dataPDUWords(_ llid: UInt8, _ length: Int, _ encrypted: Bool, _ reassembly: ACLReassemblyFact, into line: inout SummaryLine) {
    if length == 0 { return }
    // An LL control PDU is titled so only when encrypted (else its opcode is the title).
    if llid != 3 { line.append(.text(llid == 2 ? "start, " : "continuation, ")) }
    line.append(.number(length))
    line.append(.text(encrypted ? " bytes, encrypted" : " bytes"))
    reassemblyWords(reassembly, into: &line)
  }

  /// What reassembly made of ACL data or an LL data PDU: ", retransmission",
  /// " (L2CAP fragment: 27 of 29 bytes)".
  static func reassemblyWords(_ reassembly: ACLReassemblyFact, into line: inout SummaryLine) {
    switch reassembly {
    case .none: break
    case .dropped: line.append(.text(", not part of any PDU"))
    case .retransmission: line.append(.text(", retransmission"))
    case let .fragment(have, expected):
      line.append(.text(" (L2CAP fragment: "))
      line.append(.number(have))
      if let expected {
        line.append(.text(" of "))
        line.append(.number(expected))
      }
      line.append(.text(" bytes)"))
    }
  }

  /// "PSM 0x0080, 12 bytes", "channel 0x0041, 3 bytes".
  static func channelWords(_ what: Name, _ number: UInt16, _ length: Int, into line: inout SummaryLine) {
    line.append(.text(what))
    line.append(.hex(UInt64(number), width: 4))
    line.append(.text(", "))
    line.append(.number(length))
    line.append(.text(" bytes"))
  }

  /// A summary that begins with the title (a command's own name) is shown without it.
  static func dropping(_ title: Name, from text: String) -> String {
    let title = title.description
    if text.hasPrefix(title + ": ") { return String(text.dropFirst(title.count + 2)) }
    return text == title ? "" : text
  }

  // MARK: - HCI commands, events and notes

  /// The words of the less frequent facts (HCI parameters, notes, air packets), as text.
  static func textWords(_ fact: HeaderFact) -> String {
    switch fact {
    case .handle(let handle): return "handle \(handle)"
    case .address(let address): return address.description
    case .status(let status): return errorText(status)
    case .toggle(let enable): return enable ? "enable" : "disable"
    case .deviceName(let name): return "\"" + name + "\""
    case .byteCount(let count): return "\(count) bytes"
    case .slots(let slots): return slotsText(slots)
    case let .handleLength(handle, length): return "handle \(handle) dlen \(length)"
    case .unknownCommand(let opcode):
      return "opcode \(hex(opcode, 4)) (OGF \(hex(HCICommand.ogf(opcode), 2)), OCF \(hex(HCICommand.ocf(opcode), 4)))"
    case .unknownEvent(let code): return "event code " + hex(code, 2)
    case .unknownRecord(let type): return "type " + hex(type, type > 0xFF ? 4 : 2)
    case let .vendorDebugRecord(handle, length): return "ACL handle \(hex(handle, 4)), \(length) bytes (Qualcomm's, to Android's stack; not a connection)"

    case let .disconnect(handle, reason):
      return "handle \(handle), " + (AssignedNumbers.hciErrorName(reason)?.description ?? "reason " + hex(reason, 2))
    case .anonymousAdvertisers: return "anonymous advertisers"
    case let .advertisingSet(set, bytes): return "set \(set)" + (bytes.map { ", \($0) bytes" } ?? "")
    case let .advertisingSetsEnable(enable, sets): return enable ? "enable" : (sets == 0 ? "disable all" : "disable")
    case .scanType(let active): return active.map { $0 ? "active" : "passive" } ?? ""
    case let .scanEnable(enable, filterDuplicates):
      return !enable ? "disable" : (filterDuplicates ? "enable, filter duplicates" : "enable")
    case .connect(let peer): return peer?.description ?? "filter accept list"
    case .advertisingType(let type): return name(HCICommand.advertisingTypeName(type))

    case let .acceptConnection(address, role):
      return address.description + (ClassicHCI.acceptRoleName(role).map { ", " + $0.description } ?? "")
    case let .refuse(address, reason): return address.description + ", " + errorText(reason)
    case let .setEncryption(handle, enabled): return "handle \(handle), " + (enabled ? "on" : "off")
    case let .featuresPage(handle, page): return (handle.map { "handle \($0), " } ?? "") + "page \(page)"
    case let .ioCapability(address, capability, authentication):
      return address.description + " " + (ClassicHCI.ioCapabilityName(capability)?.description ?? "IO capability " + hex(capability, 2))
        + (ClassicHCI.authenticationRequirementsName(authentication).map { ", " + $0.description } ?? "")
    case let .holdOrSniff(handle, minimum, maximum):
      return "handle \(handle), " + (minimum == maximum ? slotsText(maximum) : slotsText(minimum) + " to " + slotsText(maximum))
    case let .switchRole(address, role): return address.description + (LEMetaEvent.roleName(role).map { " to " + $0.description } ?? "")
    case let .linkPolicy(handle, settings):
      return (handle.map { "handle \($0): " } ?? "") + ClassicHCI.linkPolicyText(settings)
    case .storedLinkKey(let address): return address?.description ?? "all"
    case .linkKeys(let count): return count == 1 ? "1 key" : "\(count) keys"
    case let .linkSupervisionTimeout(handle, slots): return (handle.map { "handle \($0), " } ?? "") + slotsText(slots)
    case .classOfDevice(let value):
      let major = UInt8((value >> 8) & 0x1F)
      return (ClassicHCI.majorDeviceClassName(major)?.description ?? "major class \(major)") + " (" + hex(value, 6) + ")"
    case .accessCodes(let laps): return laps.map(lapText).joined(separator: ", ")
    case let .inquiry(lap, length, responses):
      // 1.28 s steps: the hundredths are exact.
      let hundredths = Int(length) * 128
      let fraction = hundredths % 100
      return lapText(lap) + ", \(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction) s"
        + (responses != 0 ? ", up to \(responses) responses" : "")
    case let .eventFilter(type, address):
      return name(HCICommand.eventFilterName(type)) + (address.map { ", " + $0.description } ?? "")
    case .classicScanEnable(let value): return name(ClassicHCI.scanEnableName(value))
    case .classicScanType(let value): return name(ClassicHCI.scanTypeName(value))
    case .inquiryMode(let value): return name(ClassicHCI.inquiryModeName(value))

    case let .addressOutcome(address, status): return address.description + " " + errorText(status)
    case let .disconnectionComplete(status, reason): return status == 0 ? errorText(reason) : "failed: " + errorText(status)
    case let .encryptionChange(status, enabled):
      return status == 0 ? (enabled ? "encryption on" : "encryption off") : errorText(status)
    case let .commandComplete(opcode, error): return HCICommand.name(opcode).description + (error.map { ": " + errorText($0) } ?? "")
    case let .commandStatus(opcode, status):
      return HCICommand.name(opcode).description + (status == 0 ? ": pending" : ": " + errorText(status))
    case let .leConnectionComplete(peer, role): return "\(peer) as " + (role == 0 ? "central" : "peripheral")
    case let .advertisingReport(address, type, rssi):
      return address.description + (type.map { " " + (LEMetaEvent.advertisingEventName($0)?.description ?? "?") } ?? "") + " \(rssi) dBm"
    case .connectionParameters(let parameters):
      return "interval " + hundredths(parameters.interval, 125) + " ms, latency \(parameters.latency), timeout "
        + hundredths(parameters.supervisionTimeout, 1000) + " ms"
    case let .dataLength(transmit, receive): return "TX \(transmit), RX \(receive) octets"
    case let .phys(transmit, receive):
      return "TX " + (LEMetaEvent.phyName(transmit)?.description ?? "?") + ", RX " + (LEMetaEvent.phyName(receive)?.description ?? "?")
    case .channelSelectionAlgorithm(let algorithm): return algorithm == 0 ? "#1" : (algorithm == 1 ? "#2" : "")
    case let .connectionRequest(address, linkType, classOfDevice):
      return address.description + (ClassicHCI.linkTypeName(linkType).map { ", " + $0.description } ?? "")
        + (ClassicHCI.majorDeviceClassName(UInt8((classOfDevice >> 8) & 0x1F)).map { ", " + $0.description } ?? "")
    case let .remoteName(address, status, name):
      return address.description + (status == 0 ? " \"" + name + "\"" : " " + errorText(status))
    case let .roleChange(address, status, role):
      return address.description + (status != 0 ? " " + errorText(status) : (LEMetaEvent.roleName(role).map { " as " + $0.description } ?? ""))
    case let .modeChange(mode, interval):
      return (ClassicHCI.modeName(mode)?.description ?? "mode " + hex(mode, 2)) + (mode != 0 ? ", " + slotsText(interval) : "")
    case let .linkKeyNotification(address, keyType):
      return address.description + ", " + (ClassicHCI.keyTypeName(keyType)?.description ?? "key type " + hex(keyType, 2))
    case .maxSlots(let slots): return slots == 1 ? "1 slot" : "\(slots) slots"
    case let .pageScanRepetitionMode(address, mode):
      return address.description + (ClassicHCI.pageScanRepetitionModeName(mode).map { " " + $0.description } ?? "")
    case let .passkey(address, value):
      // Six decimal digits, as the user sees them (Core Vol 4 Part E §7.7.42: 0 to 999999).
      let digits = String(value)
      return address.description + " " + String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    case let .keypress(address, type): return address.description + (ClassicHCI.keypressName(type).map { ", " + $0.description } ?? "")
    case let .inquiryResults(count, first): return count == 1 ? first?.description ?? "" : "\(count) responses"
    case let .extendedInquiryResult(address, rssi, name):
      return address.description + ", \(rssi) dBm" + (name.map { ", \"" + $0 + "\"" } ?? "")
    case let .synchronousConnectionComplete(address, linkType, status):
      return address.description + (ClassicHCI.linkTypeName(linkType).map { " " + $0.description } ?? "") + " " + errorText(status)

    case let .connectIndication(initiator, advertiser, _, accessAddress, interval):
      return "\(initiator) → \(advertiser), access address " + hex(accessAddress, 8) + ", interval " + hundredths(interval, 125) + " ms"
    case .linkControl(let control): return linkControlWords(control)
    case let .damagedAirPacket(advertising, length):
      return (advertising ? "advertising PDU, " : "data PDU, ") + "\(length) bytes, not decoded"

    case let .indexAdded(name, address): return "\(name) \(address)"
    case let .indexInfo(address, manufacturer):
      return "\(address) " + (AssignedNumbers.companyName(manufacturer)?.description ?? "")
    case let .note(from, text): return (from.map { $0 + ": " } ?? "") + text
    case .sdp(let fact): return sdpWords(fact)
    case .rfcomm(let fact): return rfcommWords(fact)

    case .none, .aclData, .completedPackets, .channelData, .psmData, .kFrame, .unplacedKFrame, .sdu, .signaling, .securityManager,
      .advertisingPDU, .dataPDU:
      return ""  // written as parts by `write`
    }
  }

  /// The inquiry access codes with a name (Assigned Numbers §2.2): GIAC, LIAC.
  static func lapText(_ lap: UInt32) -> String {
    switch lap {
    case 0x9E8B33: return "GIAC"
    case 0x9E8B00: return "LIAC"
    default: return "LAP " + hex(lap, 6)
    }
  }

  // MARK: - LL control

  static func linkControlWords(_ control: LinkControlFact) -> String {
    switch control {
    case .opcode: return ""
    case let .connectionUpdate(interval, latency, timeout, instant):
      return "interval " + hundredths(interval, 125) + " ms, latency \(latency), timeout " + hundredths(timeout, 1000) + " ms at event \(instant)"
    case let .channelMap(used, instant): return "\(used) channels at event \(instant)"
    case .terminate(let reason): return errorText(reason)
    case let .version(version, company, subversion):
      return "Bluetooth " + (HCICommand.coreVersionName(version)?.description ?? hex(version, 2)) + ", "
        + (AssignedNumbers.companyName(company)?.description ?? "company " + hex(company, 4)) + ", subversion " + hex(subversion, 4)
    case let .reject(rejected, error): return (rejected.map { LinkControl.name($0).description + ": " } ?? "") + errorText(error)
    case .unknownResponse(let type): return LinkControl.name(type).description
    case let .connectionParameters(_, minimum, maximum, latency, timeout):
      return "interval " + hundredths(minimum, 125) + "–" + hundredths(maximum, 125) + " ms, latency \(latency), timeout " + hundredths(timeout, 1000) + " ms"
    case let .length(_, receive, _, transmit, _): return "RX \(receive), TX \(transmit) octets"
    case let .phyPreferences(_, transmit, receive):
      return "TX " + phys(transmit) + "; RX " + phys(receive)
    case let .phyUpdate(toPeripheral, toCentral, instant):
      return "to peripheral " + phys(toPeripheral) + ", to central " + phys(toCentral) + " at event \(instant)"
    case .features(_, let mask): return hex(mask, 16)
    case .encryptionRequest, .encryptionResponse: return ""
    }
  }

  /// PHY bits in words ("LE 1M, LE 2M"); none set: "unchanged" (LL_PHY_UPDATE_IND) or "any".
  static func phys(_ bits: UInt8) -> String {
    bits == 0 ? "unchanged" : HCICommand.bitText(UInt64(bits), LinkControl.phyBits)
  }

  // MARK: - L2CAP signaling and SMP

  /// Each command's name and details, joined by "; "; a command that did not decode by its name.
  static func signalingWords(_ commands: [SignalingCommand], unfinished: UInt8?) -> String {
    var parts = commands.map { command in
      let details = signalingDetails(command)
      return signalingName(command.code) + (details.isEmpty ? "" : ": " + details)
    }
    if let unfinished { parts.append(signalingName(unfinished)) }
    return parts.joined(separator: "; ")
  }

  static func signalingName(_ code: UInt8) -> String {
    L2CAPSignaling.knownName(code)?.description ?? "Signaling command " + hex(code, 2)
  }

  static func signalingDetails(_ command: SignalingCommand) -> String {
    typealias S = L2CAPSignaling
    switch command {
    case let .commandReject(_, reason, mtu, local, remote):
      var text = S.rejectReasonName(reason)?.description ?? "reason " + hex(reason, 4)
      if let mtu { text += " (MTU \(mtu))" }
      if let local, let remote { text += " (local " + hex(local, 4) + ", remote " + hex(remote, 4) + ")" }
      return text
    case let .connectionRequest(_, psm, source): return psmText(psm) + ", source CID " + hex(source, 4)
    case let .connectionResponse(_, destination, source, result):
      return "destination CID " + hex(destination, 4) + ", source CID " + hex(source, 4) + ", " + resultText(S.connectionResultName(result), result)
    case let .configurationRequest(_, destination, options): return "destination CID " + hex(destination, 4) + optionsText(options)
    case let .configurationResponse(_, source, result, options):
      return "source CID " + hex(source, 4) + ", " + resultText(S.configurationResultName(result), result) + optionsText(options)
    case let .disconnectionRequest(_, destination, source), let .disconnectionResponse(_, destination, source):
      return "destination CID " + hex(destination, 4) + ", source CID " + hex(source, 4)
    case let .echo(_, _, length): return "\(length) byte\(length == 1 ? "" : "s")"
    case let .informationRequest(_, type): return S.infoTypeName(type)?.description ?? "info type " + hex(type, 4)
    case let .informationResponse(_, type, result, mtu):
      return (S.infoTypeName(type)?.description ?? "info type " + hex(type, 4)) + ", "
        + (result == 0 ? "success" : (result == 1 ? "not supported" : "result " + hex(result, 4))) + (mtu.map { ", MTU \($0)" } ?? "")
    case let .connectionParameterUpdateRequest(_, minimum, maximum, latency, timeout):
      return "interval " + hundredths(minimum, 125) + "–" + hundredths(maximum, 125) + " ms, latency \(latency), timeout \(Int(timeout) * 10) ms"
    case let .connectionParameterUpdateResponse(_, result):
      return result == 0 ? "accepted" : (result == 1 ? "rejected" : "result " + hex(result, 4))
    case let .leCreditConnectionRequest(_, psm, source, mtu, mps, credits):
      return "SPSM " + psmText(psm) + ", source CID " + hex(source, 4) + ", MTU \(mtu), MPS \(mps), credits \(credits)"
    case let .leCreditConnectionResponse(_, destination, mtu, mps, credits, result):
      if result != 0 { return resultText(S.leCreditResultName(result), result) }
      return "destination CID " + hex(destination, 4) + ", MTU \(mtu), MPS \(mps), credits \(credits)"
    case let .flowControlCredit(_, cid, credits): return "CID " + hex(cid, 4) + ", credits \(credits)"
    case let .creditBasedConnectionRequest(_, psm, mtu, mps, credits, sources):
      return "SPSM " + psmText(psm) + ", MTU \(mtu), MPS \(mps), credits \(credits), source CIDs " + cidsText(sources)
    case let .creditBasedConnectionResponse(_, mtu, mps, credits, result, destinations):
      return resultText(S.creditBasedResultName(result), result) + ", MTU \(mtu), MPS \(mps), credits \(credits), destination CIDs "
        + cidsText(destinations)
    case let .creditBasedReconfigureRequest(_, mtu, mps, destinations):
      return "MTU \(mtu), MPS \(mps), destination CIDs " + cidsText(destinations)
    case let .creditBasedReconfigureResponse(_, result): return resultText(S.reconfigureResultName(result), result)
    case .other: return ""
    }
  }

  static func optionsText(_ options: [SignalingCommand.ConfigurationOption]) -> String {
    var text = ""
    for option in options {
      switch option {
      case .mtu(let mtu): text += ", MTU \(mtu)"
      case .mode(let mode): if let name = L2CAPSignaling.modeName(mode) { text += ", " + name.description + " mode" }
      }
    }
    return text
  }

  /// `0x0001 (SDP)` or `0x0081`.
  static func psmText(_ psm: UInt16) -> String {
    hex(psm, 4) + (L2CAPSignaling.psmName(psm).map { " (" + $0.description + ")" } ?? "")
  }

  static func resultText(_ name: Name?, _ value: UInt16) -> String { name?.description ?? "result " + hex(value, 4) }

  static func cidsText(_ cids: [UInt16]) -> String { cids.isEmpty ? "none" : cids.map { hex($0, 4) }.joined(separator: ", ") }

  /// The command's name and details ("Pairing Request: NoInputNoOutput, bonding, key size 16").
  static func securityManagerWords(_ command: SMPCommandFact) -> String {
    guard let code = command.code else { return "" }
    let name = SecurityManager.knownName(code)?.description ?? "SMP command " + hex(code, 2)
    let details = securityManagerDetails(command)
    return details.isEmpty ? name : name + ": " + details
  }

  static func securityManagerDetails(_ command: SMPCommandFact) -> String {
    switch command {
    case .empty, .code: return ""
    case let .pairing(_, io, oob, auth, keySize):
      return (SecurityManager.ioCapabilityName(io)?.description ?? "IO capability " + hex(io, 2)) + (oob == 1 ? ", OOB" : "")
        + authRequirementsText(auth) + ", key size \(keySize)"
    case .pairingFailed(let reason): return SecurityManager.failureReasonName(reason)?.description ?? "reason " + hex(reason, 2)
    case .centralIdentification(let ediv): return "EDIV " + hex(ediv, 4)
    case let .identityAddress(address, type):
      return address.description + (type == 0 ? " (public)" : (type == 1 ? " (random static)" : ""))
    case .securityRequest(let auth): return String(authRequirementsText(auth).dropFirst(2))
    case .keypressNotification(let type): return SecurityManager.keypressName(type)?.description ?? "type " + hex(type, 2)
    }
  }

  /// ", bonding, MITM, SC" (each part led by ", "); "no bonding" is said only when nothing else
  /// is set (Core Vol 3 Part H §3.5.1).
  static func authRequirementsText(_ value: UInt8) -> String {
    var text = ""
    switch value & 0x03 {
    case 0: if value & 0x3C == 0 { text += ", no bonding" }
    case 1: text += ", bonding"
    default: text += ", bonding flags \(value & 0x03)"
    }
    if value & 0x04 != 0 { text += ", MITM" }
    if value & 0x08 != 0 { text += ", SC" }
    if value & 0x10 != 0 { text += ", keypress" }
    if value & 0x20 != 0 { text += ", CT2" }
    return text
  }

  // MARK: - Numbers and names

  static func errorText(_ code: UInt8) -> String {
    AssignedNumbers.hciErrorName(code)?.description ?? "error " + hex(code, 2)
  }

  static func name(_ name: Name?) -> String { name?.description ?? "" }

  static func hex(_ value: some BinaryInteger, _ width: Int) -> String { Hex.prefixed(UInt64(value), width: width) }

  /// Slots of 0.625 ms, exact: "500 ms", "8.125 ms".
  static func slotsText(_ slots: UInt16) -> String { FixedDecimal(units: UInt64(slots) * 625, places: 3).text + " ms" }

  /// `raw × scale / 100` with two decimals (`scale` in hundredths: 125 for 1.25 ms units).
  static func hundredths(_ raw: UInt16, _ scale: Int) -> String {
    let hundredths = Int(raw) * scale
    let fraction = hundredths % 100
    return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
  }
}

/// Every diagnostic bledissect gives, by kind: its stable code (what JSON's `"code"` holds, what a
/// conformance check or a filter matches), its severity and layer, and what it means. The one
/// catalogue: a creation site names a kind, never a severity or layer of its own;
/// docs/diagnostics.md lists the same codes (a test keeps the two equal).
public struct DiagnosticKind: Sendable, Hashable, CustomStringConvertible {
  /// `layer.what_happened`, lowercase: stable across releases (a code is never reused).
  public let code: String
  public let severity: Diagnostic.Severity
  public let layer: ProtocolLayer
  /// What the code means, in one sentence.
  public let meaning: String

  init(_ code: String, _ severity: Diagnostic.Severity, _ layer: ProtocolLayer, _ meaning: String) {
    self.code = code
    self.severity = severity
    self.layer = layer
    self.meaning = meaning
  }

  public var description: String { code }

  public static func == (a: DiagnosticKind, b: DiagnosticKind) -> Bool { a.code == b.code }
  public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

extension DiagnosticKind {
  public static let captureClockBroken = DiagnosticKind("capture.clock_broken", .note, .capture, "The capture's record clock goes backwards or jumps: times from here on are as the file gives them or as the frames' order allows.")
  public static let hciCommandTrailingBytes = DiagnosticKind("hci.command_trailing_bytes", .warning, .hci, "Bytes after an HCI command's parameters.")
  public static let hciEventTrailingBytes = DiagnosticKind("hci.event_trailing_bytes", .warning, .hci, "Bytes after an HCI event's parameters.")
  public static let hciDataTrailingBytes = DiagnosticKind("hci.data_trailing_bytes", .warning, .hci, "Bytes beyond an HCI data packet's length field.")
  public static let hciDataTruncatedByWriter = DiagnosticKind("hci.data_truncated_by_writer", .note, .hci, "The capture holds fewer data bytes than the packet declared (the capture's writer cut it).")
  public static let hciConnectionForgotten = DiagnosticKind("hci.connection_forgotten", .note, .hci, "More connections open at once than bledissect tracks: the oldest is forgotten.")
  public static let hciDisconnectNotCaptured = DiagnosticKind("hci.disconnect_not_captured", .warning, .hci, "A connection handle opened again while still open: its disconnection was not captured.")
  public static let hciHandleWithoutConnect = DiagnosticKind("hci.handle_without_connect", .note, .hci, "Data on a connection handle never seen connecting (the capture started mid-connection).")
  public static let linkLayerCRCBad = DiagnosticKind("ll.crc_bad", .warning, .linkLayer, "The sniffer found the packet's CRC wrong: it is not decoded.")
  public static let linkLayerTrailingBytes = DiagnosticKind("ll.trailing_bytes", .warning, .linkLayer, "Bytes after a sniffed packet's CRC.")
  public static let linkLayerAfterLinkEnd = DiagnosticKind("ll.after_link_end", .note, .linkLayer, "A data packet on an access address after its link ended: not decoded.")
  public static let linkLayerAccessAddressWithoutConnect = DiagnosticKind("ll.access_address_without_connect", .note, .linkLayer, "Data on an access address whose CONNECT_IND was not sniffed (the capture started mid-connection).")
  public static let linkLayerSnifferGap = DiagnosticKind("ll.sniffer_gap", .note, .linkLayer, "The sniffer heard nothing on a link for longer than its supervision timeout, and the link went on: the sniffer lost its hops.")
  public static let linkLayerParametersTakeEffect = DiagnosticKind("ll.parameters_take_effect", .note, .linkLayer, "A connection or PHY update takes effect at its instant.")
  public static let linkLayerStoredDecrypted = DiagnosticKind("ll.stored_decrypted", .note, .linkLayer, "The capture holds the link's encrypted packets already decrypted, MIC removed: decoded as plain text.")
  public static let linkLayerDirectionFlagWrong = DiagnosticKind("ll.direction_flag_wrong", .warning, .linkLayer, "The sniffer's direction flag is wrong: the MIC verifies only as sent by the other side.")
  public static let linkLayerMICFailed = DiagnosticKind("ll.mic_failed", .warning, .linkLayer, "The MIC does not verify with the link's key: the packet is damaged, or too many packets were missed.")
  public static let linkLayerKeyTriesExhausted = DiagnosticKind("ll.key_tries_exhausted", .warning, .linkLayer, "Not decrypted: the capture used up the key tries it may spend.")
  public static let linkLayerNoKey = DiagnosticKind("ll.no_key", .note, .linkLayer, "No key given opens the link's encrypted packets.")
  public static let linkLayerPacketsMissed = DiagnosticKind("ll.packets_missed", .warning, .linkLayer, "Packets from one side were missed by the sniffer (SN/NESN show it).")
  public static let linkLayerTKOutOfBand = DiagnosticKind("ll.tk_out_of_band", .note, .linkLayer, "No passkey fits a sniffed legacy pairing: its TK came out of band.")
  public static let linkLayerKeyFound = DiagnosticKind("ll.key_found", .note, .linkLayer, "A key was found or derived for the link (from a sniffed pairing, a passkey search or a key file).")
  public static let linkLayerLinkSilent = DiagnosticKind("ll.link_silent", .note, .linkLayer, "Nothing heard on a link for longer than it may be silent, and neither device is heard elsewhere: dropped by the devices or lost by the sniffer.")
  public static let linkLayerLinkLost = DiagnosticKind("ll.link_lost", .note, .linkLayer, "A link silent for longer than its supervision timeout while the sniffer hears one of its devices: the link was lost.")
  public static let linkLayerLinkReplaced = DiagnosticKind("ll.link_replaced", .note, .linkLayer, "A new link takes a silent link's access address: the old one was lost.")
  public static let l2capKFrameExceedsMPS = DiagnosticKind("l2cap.kframe_exceeds_mps", .warning, .l2cap, "An L2CAP K-frame longer than the channel's MPS.")
  public static let l2capChannelTrailingBytes = DiagnosticKind("l2cap.channel_trailing_bytes", .warning, .l2cap, "Bytes after a fixed channel's PDU.")
  public static let l2capReassemblyMemoryDropped = DiagnosticKind("l2cap.reassembly_memory_dropped", .warning, .l2cap, "Incomplete PDUs held more bytes than bledissect keeps: those on other links are dropped.")
  public static let l2capPDUDropped = DiagnosticKind("l2cap.pdu_dropped", .warning, .l2cap, "An incomplete L2CAP PDU is dropped (its link ended, or a piece of it may be lost).")
  public static let l2capPDUInterrupted = DiagnosticKind("l2cap.pdu_interrupted", .warning, .l2cap, "A new L2CAP PDU starts while the previous one is incomplete: that one is dropped.")
  public static let l2capContinuationWithoutStart = DiagnosticKind("l2cap.continuation_without_start", .warning, .l2cap, "A continuation fragment with no PDU started.")
  public static let l2capPDUTrailingBytes = DiagnosticKind("l2cap.pdu_trailing_bytes", .warning, .l2cap, "More bytes than the L2CAP length field says.")
  public static let l2capSDUStartTooShort = DiagnosticKind("l2cap.sdu_start_too_short", .warning, .l2cap, "The first K-frame of an SDU is too short for the SDU length field.")
  public static let l2capSDUExceedsMTU = DiagnosticKind("l2cap.sdu_exceeds_mtu", .warning, .l2cap, "An SDU length larger than the channel's MTU.")
  public static let l2capSDUTrailingBytes = DiagnosticKind("l2cap.sdu_trailing_bytes", .warning, .l2cap, "More bytes than the SDU length says.")
  public static let sdpTrailingBytes = DiagnosticKind("sdp.trailing_bytes", .warning, .sdp, "Bytes after an SDP PDU's parameters (its parameter length says fewer).")
  public static let sdpTransactionMismatch = DiagnosticKind("sdp.transaction_mismatch", .warning, .sdp, "An SDP response whose transaction ID is not that of the request it follows.")
  public static let sdpContinuationUnmatched = DiagnosticKind("sdp.continuation_unmatched", .note, .sdp, "An SDP response continues one whose earlier parts are not in the capture (or its continuation state differs): its part is shown, not joined.")
  public static let sdpResponseTooLong = DiagnosticKind("sdp.response_too_long", .warning, .sdp, "A response split over several SDP PDUs grew past what bledissect joins (64 KiB): its parts are shown, not joined.")
  public static let sdpElementsTooDeep = DiagnosticKind("sdp.elements_too_deep", .warning, .sdp, "SDP data elements nested deeper than bledissect decodes (16 levels): the deeper ones are shown as bytes.")
  public static let sdpTooManyElements = DiagnosticKind("sdp.too_many_elements", .warning, .sdp, "More SDP data elements in one list than bledissect decodes (4096): the rest are shown as bytes.")
  public static let sdpAttributeListMalformed = DiagnosticKind("sdp.attribute_list_malformed", .warning, .sdp, "An SDP attribute list that is not pairs of a 16-bit attribute ID and a value in ascending ID order.")
  public static let rfcommFCSBad = DiagnosticKind("rfcomm.fcs_bad", .warning, .rfcomm, "An RFCOMM frame whose FCS does not match its header: the frame is marked malformed.")
  public static let rfcommTrailingBytes = DiagnosticKind("rfcomm.trailing_bytes", .warning, .rfcomm, "Bytes after an RFCOMM frame's FCS, or after its multiplexer message.")
  public static let attPDUExceedsMTU = DiagnosticKind("att.pdu_exceeds_mtu", .warning, .att, "An ATT PDU longer than the ATT_MTU in force.")
  public static let attResponseWithoutRequest = DiagnosticKind("att.response_without_request", .warning, .att, "A response with no request pending.")
  public static let attResponseMismatch = DiagnosticKind("att.response_mismatch", .warning, .att, "A response that does not answer the pending request.")
  public static let attErrorNamesOtherRequest = DiagnosticKind("att.error_names_other_request", .warning, .att, "An Error Response naming another request than the pending one.")
  public static let attConfirmationWithoutIndication = DiagnosticKind("att.confirmation_without_indication", .warning, .att, "A Handle Value Confirmation with no indication pending.")
  public static let attRequestWhilePending = DiagnosticKind("att.request_while_pending", .warning, .att, "A request sent while an earlier one is still pending.")
  public static let attIndicationWhileUnconfirmed = DiagnosticKind("att.indication_while_unconfirmed", .warning, .att, "An indication sent while an earlier one is not confirmed.")
  public static let attTimestampBackwards = DiagnosticKind("att.timestamp_backwards", .warning, .att, "A response timed before its request: no latency.")
  public static let attUnrequestedDiscoveryResponse = DiagnosticKind("att.unrequested_discovery_response", .note, .att, "A Read By Type Response with no request seen: its entries are read as characteristic declarations.")
  public static let attReadBlobNotContinuing = DiagnosticKind("att.read_blob_not_continuing", .note, .att, "A Read Blob that does not continue a read of the same value.")
  public static let attReadMultipleUnsplittable = DiagnosticKind("att.read_multiple_unsplittable", .note, .att, "Read Multiple values that cannot be split (a value's length is not fixed).")
  public static let attPrepareQueueFull = DiagnosticKind("att.prepare_queue_full", .warning, .att, "The prepared-write queue holds as much as bledissect keeps: later parts are counted, not kept.")
  public static let attPrepareResponseDiffers = DiagnosticKind("att.prepare_response_differs", .warning, .att, "A Prepare Write Response that differs from its request.")
  public static let attPrepareQueueCancelled = DiagnosticKind("att.prepare_queue_cancelled", .note, .att, "A prepared-write queue cancelled.")
  public static let attPreparedPartsDropped = DiagnosticKind("att.prepared_parts_dropped", .warning, .att, "Prepared parts beyond the queue's limit are not in the written values.")
  public static let attDiscoveryOutsideRange = DiagnosticKind("att.discovery_outside_range", .warning, .att, "A discovery response lists a handle outside the range its request asked for.")
  public static let attDiscoveryOutOfOrder = DiagnosticKind("att.discovery_out_of_order", .warning, .att, "A discovery response lists handles out of ascending order.")
  // `annotate --check`: a rule of the specifications the frame proves broken (docs/check.md);
  // the message names the rule, the side at fault and the clause. One kind per layer.
  public static let hciRuleBroken = DiagnosticKind("hci.rule_broken", .warning, .hci, "The controller reports a protocol failure of the peer (annotate --check; docs/check.md).")
  public static let linkLayerRuleBroken = DiagnosticKind("ll.rule_broken", .warning, .linkLayer, "An LL control PDU breaks a rule of the specifications (annotate --check; docs/check.md).")
  public static let advertisingRuleBroken = DiagnosticKind("advertising.rule_broken", .warning, .advertising, "The advertising data breaks a rule of the specifications (annotate --check; docs/check.md).")
  public static let l2capRuleBroken = DiagnosticKind("l2cap.rule_broken", .warning, .l2cap, "An L2CAP signaling or SMP command breaks a rule of the specifications (annotate --check; docs/check.md).")
  public static let attRuleBroken = DiagnosticKind("att.rule_broken", .warning, .att, "An ATT PDU breaks a rule of the specifications (annotate --check; docs/check.md).")
  public static let gattRuleBroken = DiagnosticKind("gatt.rule_broken", .warning, .gatt, "A GATT procedure or descriptor breaks a rule of the specifications (annotate --check; docs/check.md).")
  public static let profileRuleBroken = DiagnosticKind("profile.rule_broken", .warning, .profile, "A characteristic value breaks a rule of its service's specification (annotate --check; docs/check.md).")
  public static let gattLabelledInHindsight = DiagnosticKind("gatt.labelled_in_hindsight", .note, .gatt, "A value labelled after the fact, from later values that made the guess.")
  public static let gattTableForgotten = DiagnosticKind("gatt.table_forgotten", .note, .gatt, "A GATT table forgotten: more servers or attributes than bledissect keeps.")
  public static let gattServiceChanged = DiagnosticKind("gatt.service_changed", .note, .gatt, "Service Changed: a handle range is forgotten until rediscovered.")
  public static let gattTableFromMap = DiagnosticKind("gatt.table_from_map", .note, .gatt, "A GATT table taken from a map given with --gatt.")
  public static let gattTableFromCache = DiagnosticKind("gatt.table_from_cache", .note, .gatt, "A GATT table taken from the cache of earlier captures.")
  public static let gattTableByHash = DiagnosticKind("gatt.table_by_hash", .note, .gatt, "A GATT table known by its Database Hash.")
  public static let gattTableByLayout = DiagnosticKind("gatt.table_by_layout", .note, .gatt, "A GATT table matched by layout to a connection whose peer is not in the capture.")
  public static let gattLayoutsAmbiguous = DiagnosticKind("gatt.layouts_ambiguous", .note, .gatt, "Several known GATT tables fit a connection whose peer is not in the capture: none is applied.")
  public static let gattTableDropped = DiagnosticKind("gatt.table_dropped", .note, .gatt, "A table from elsewhere dropped because the traffic contradicts it.")
  public static let profileTrailingBytes = DiagnosticKind("profile.trailing_bytes", .warning, .profile, "Bytes after a characteristic value's format.")
  public static let profileReservedBits = DiagnosticKind("profile.reserved_bits", .warning, .profile, "Reserved bits set in a flags or bit-field value.")
  public static let profileReservedFeatureBits = DiagnosticKind("profile.reserved_feature_bits", .note, .profile, "Feature bits the specification reserves (a later version may define them).")
  public static let profileReservedValue = DiagnosticKind("profile.reserved_value", .warning, .profile, "A field holds a value the specification reserves.")
  public static let profileInvalidValue = DiagnosticKind("profile.invalid_value", .warning, .profile, "A field holds a value the specification does not allow (a date, connection parameters, a handle range).")
  public static let profileOutOfRange = DiagnosticKind("profile.out_of_range", .warning, .profile, "A value outside its plausible or specified range (bpm, RR interval, percent).")
  public static let profileStringNULPadded = DiagnosticKind("profile.string_nul_padded", .note, .profile, "A string value ends with NUL bytes (the format has no terminator).")
  public static let profileStringInvalidUTF8 = DiagnosticKind("profile.string_invalid_utf8", .warning, .profile, "A string value is not valid UTF-8.")
  public static let profileVendorCodeUnknown = DiagnosticKind("profile.vendor_code_unknown", .note, .profile, "A vendor protocol's code that bledissect's reference does not know.")
  public static let profileVendorStatusUnknown = DiagnosticKind("profile.vendor_status_unknown", .warning, .profile, "A vendor protocol's status that bledissect's reference does not know.")
  public static let profileVendorValueUndecoded = DiagnosticKind("profile.vendor_value_undecoded", .warning, .profile, "A vendor value whose layout is unknown: its bytes are not decoded.")
  public static let profileVendorLayoutGuessed = DiagnosticKind("profile.vendor_layout_guessed", .note, .profile, "A vendor value read with the only layout that fits, not its type's usual one.")
  public static let profileVendorValueUnexpected = DiagnosticKind("profile.vendor_value_unexpected", .note, .profile, "A vendor value unlike what the reference describes.")
  public static let profileReportMapDamaged = DiagnosticKind("profile.report_map_damaged", .warning, .profile, "A HID Report Map whose items break the descriptor's structure: an item cut by the value's end, a collection left open or closed twice.")

  /// Every kind, in the catalogue's order.
  public static let all: [DiagnosticKind] = [
    .captureClockBroken,
    .hciCommandTrailingBytes,
    .hciEventTrailingBytes,
    .hciDataTrailingBytes,
    .hciDataTruncatedByWriter,
    .hciConnectionForgotten,
    .hciDisconnectNotCaptured,
    .hciHandleWithoutConnect,
    .linkLayerCRCBad,
    .linkLayerTrailingBytes,
    .linkLayerAfterLinkEnd,
    .linkLayerAccessAddressWithoutConnect,
    .linkLayerSnifferGap,
    .linkLayerParametersTakeEffect,
    .linkLayerStoredDecrypted,
    .linkLayerDirectionFlagWrong,
    .linkLayerMICFailed,
    .linkLayerKeyTriesExhausted,
    .linkLayerNoKey,
    .linkLayerPacketsMissed,
    .linkLayerTKOutOfBand,
    .linkLayerKeyFound,
    .linkLayerLinkSilent,
    .linkLayerLinkLost,
    .linkLayerLinkReplaced,
    .l2capKFrameExceedsMPS,
    .l2capChannelTrailingBytes,
    .l2capReassemblyMemoryDropped,
    .l2capPDUDropped,
    .l2capPDUInterrupted,
    .l2capContinuationWithoutStart,
    .l2capPDUTrailingBytes,
    .l2capSDUStartTooShort,
    .l2capSDUExceedsMTU,
    .l2capSDUTrailingBytes,
    .sdpTrailingBytes,
    .sdpTransactionMismatch,
    .sdpContinuationUnmatched,
    .sdpResponseTooLong,
    .sdpElementsTooDeep,
    .sdpTooManyElements,
    .sdpAttributeListMalformed,
    .rfcommFCSBad,
    .rfcommTrailingBytes,
    .attPDUExceedsMTU,
    .attResponseWithoutRequest,
    .attResponseMismatch,
    .attErrorNamesOtherRequest,
    .attConfirmationWithoutIndication,
    .attRequestWhilePending,
    .attIndicationWhileUnconfirmed,
    .attTimestampBackwards,
    .attUnrequestedDiscoveryResponse,
    .attReadBlobNotContinuing,
    .attReadMultipleUnsplittable,
    .attPrepareQueueFull,
    .attPrepareResponseDiffers,
    .attPrepareQueueCancelled,
    .attPreparedPartsDropped,
    .attDiscoveryOutsideRange,
    .attDiscoveryOutOfOrder,
    .hciRuleBroken,
    .linkLayerRuleBroken,
    .advertisingRuleBroken,
    .l2capRuleBroken,
    .attRuleBroken,
    .gattRuleBroken,
    .profileRuleBroken,
    .gattLabelledInHindsight,
    .gattTableForgotten,
    .gattServiceChanged,
    .gattTableFromMap,
    .gattTableFromCache,
    .gattTableByHash,
    .gattTableByLayout,
    .gattLayoutsAmbiguous,
    .gattTableDropped,
    .profileTrailingBytes,
    .profileReservedBits,
    .profileReservedFeatureBits,
    .profileReservedValue,
    .profileInvalidValue,
    .profileOutOfRange,
    .profileStringNULPadded,
    .profileStringInvalidUTF8,
    .profileVendorCodeUnknown,
    .profileVendorStatusUnknown,
    .profileVendorValueUndecoded,
    .profileVendorLayoutGuessed,
    .profileVendorValueUnexpected,
    .profileReportMapDamaged,
  ]
}

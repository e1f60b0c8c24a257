#!/usr/bin/env python3
"""Generate the Swift assigned-number lookup tables for the BLEDecoder module.

Reads the reference data in <reference>/assigned-numbers/ (see its SOURCE.md):

  derived/*.json                          {"description", "sources", "field_notes", "entries": [...]}
  nordic-bluetooth-numbers-database/*.json  (BSD-3-Clause, Nordic Semiconductor ASA)

and writes one `Generated+<Topic>.swift` file per table into the output directory.
Every table becomes a `switch` over integer codes returning `Name?`, so lookups
never allocate. Output is deterministic (entries sorted by code); re-running the script
on unchanged data produces byte-identical files.

Usage:
  Scripts/generate-tables.py [--reference DIR] [--output DIR]

Defaults: --reference <repo>/../shared/reference, --output <repo>/Sources/BLEDecoder/AssignedNumbers,
where <repo> is the parent directory of this script's directory.

Python 3 standard library only.
"""

import argparse
import json
import os
import re
import sys
import unicodedata

SCRIPT_NAME = "Scripts/generate-tables.py"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_REFERENCE = os.path.normpath(os.path.join(REPO, "..", "shared", "reference"))
DEFAULT_OUTPUT = os.path.join(REPO, "Sources", "BLEDecoder", "AssignedNumbers")

DERIVED = "derived"
NORDIC = "nordic-bluetooth-numbers-database"

HEX4 = re.compile(r"^[0-9A-Fa-f]{4}$")
UUID128 = re.compile(r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$")
HEX_CODE = re.compile(r"^0[xX][0-9A-Fa-f]+$")
HEX_RANGE = re.compile(r"^(0[xX][0-9A-Fa-f]+)\s*-\s*(0[xX][0-9A-Fa-f]+)$")


def warn(message):
    print("generate-tables: warning: " + message, file=sys.stderr)


def fail(message):
    print("generate-tables: error: " + message, file=sys.stderr)
    sys.exit(1)


# ---------------------------------------------------------------------------
# Swift literal helpers
# ---------------------------------------------------------------------------

def swift_string(name):
    """Return `name` as a Swift string literal (with quotes)."""
    out = []
    for ch in name:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"):
            # Control, format (bidi overrides, zero-width), separators, unassigned:
            # keep the source readable and unambiguous.
            out.append("\\u{%X}" % ord(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def hex_literal(value, bits):
    return "0x%0*X" % (bits // 4, value)


def clean_name(raw, where):
    if not isinstance(raw, str):
        fail("%s: name is not a string: %r" % (where, raw))
    name = raw.strip()
    if not name:
        warn("%s: empty name, entry skipped" % where)
        return None
    return name


def comment_lines(text, prefix="// "):
    lines = []
    for line in text.splitlines():
        line = line.rstrip()
        lines.append((prefix + line).rstrip())
    return lines


# ---------------------------------------------------------------------------
# Data loading
# ---------------------------------------------------------------------------

class Reference:
    def __init__(self, root):
        self.root = root
        self.base = os.path.join(root, "assigned-numbers")
        if not os.path.isdir(self.base):
            fail("no assigned-numbers directory under %s" % root)
        self._nordic_notice = None

    def path(self, rel):
        return os.path.join(self.base, rel)

    def load(self, rel):
        try:
            with open(self.path(rel), encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError) as e:
            fail("cannot read %s: %s" % (self.path(rel), e))

    def derived(self, name):
        rel = DERIVED + "/" + name
        data = self.load(rel)
        if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
            fail("%s: expected an object with an 'entries' array" % rel)
        return rel, data

    def nordic(self, name):
        rel = NORDIC + "/" + name
        data = self.load(rel)
        if not isinstance(data, list):
            fail("%s: expected a JSON array" % rel)
        return rel, data

    def nordic_notice(self):
        """Source line + the verbatim BSD-3-Clause licence text (must travel with the data)."""
        if self._nordic_notice is None:
            commit = None
            try:
                with open(self.path("SOURCE.md"), encoding="utf-8") as f:
                    m = re.search(r"NordicSemiconductor/bluetooth-numbers-database.{0,200}?([0-9a-f]{40})",
                                  f.read(), re.S)
                    if m:
                        commit = m.group(1)
            except OSError:
                pass
            try:
                with open(self.path(NORDIC + "/LICENSE"), encoding="utf-8") as f:
                    licence = f.read().strip()
            except OSError:
                fail("missing %s/LICENSE (the BSD-3-Clause notice must travel with the data)" % NORDIC)
            source = "Source: github.com/NordicSemiconductor/bluetooth-numbers-database, v1/"
            if commit:
                source += " @ " + commit
            lines = [source, "Licence: BSD-3-Clause, Nordic Semiconductor ASA. Licence text:", ""]
            lines += licence.splitlines()
            self._nordic_notice = lines
        return self._nordic_notice


# ---------------------------------------------------------------------------
# Table building
# ---------------------------------------------------------------------------

def parse_hex_code(text, bits, where):
    if not isinstance(text, str) or not HEX_CODE.match(text.strip()):
        fail("%s: bad hex code %r" % (where, text))
    value = int(text.strip(), 16)
    if value >= 1 << bits:
        fail("%s: code %r does not fit in %d bits" % (where, text, bits))
    return value


def add_unique(table, key, name, where, show_key):
    """First entry for a code wins; later ones produce a warning."""
    if key in table:
        if table[key] == name:
            warn("%s: duplicate entry for %s (%r), keeping the first" % (where, show_key(key), name))
        else:
            warn("%s: duplicate entry for %s: %r vs %r, keeping the first (%r)"
                 % (where, show_key(key), table[key], name, table[key]))
        return
    table[key] = name


def derived_table(ref, filename, key_field, bits, allow_ranges=False):
    """Return (rel, data, {code: name}, [(lo, hi, name)]) for a derived/*.json file."""
    rel, data = ref.derived(filename)
    singles = {}
    ranges = []
    for i, entry in enumerate(data["entries"]):
        where = "%s entry %d" % (rel, i)
        name = clean_name(entry.get("name"), where)
        if name is None:
            continue
        raw = entry.get(key_field)
        m = HEX_RANGE.match(raw.strip()) if isinstance(raw, str) else None
        if m:
            if not allow_ranges:
                fail("%s: unexpected range code %r" % (where, raw))
            lo = parse_hex_code(m.group(1), bits, where)
            hi = parse_hex_code(m.group(2), bits, where)
            if lo > hi:
                fail("%s: empty range %r" % (where, raw))
            ranges.append((lo, hi, name))
            continue
        code = parse_hex_code(raw, bits, where)
        add_unique(singles, code, name, rel, lambda k: hex_literal(k, bits))
    # Ranges must not overlap single codes or each other (Swift would warn/mis-order).
    ranges.sort()
    for j, (lo, hi, name) in enumerate(ranges):
        if j and ranges[j - 1][1] >= lo:
            fail("%s: overlapping ranges around %s" % (rel, hex_literal(lo, bits)))
        for code in singles:
            if lo <= code <= hi:
                fail("%s: code %s lies inside range %s...%s"
                     % (rel, hex_literal(code, bits), hex_literal(lo, bits), hex_literal(hi, bits)))
    return rel, data, singles, ranges


def uuid16_tables(ref, filename, nordic=True):
    """16-bit entries of a UUID file -> (rel, {uuid16: name}); 128-bit entries -> list."""
    if nordic:
        rel, entries = ref.nordic(filename)
    else:
        rel, data = ref.derived(filename)
        entries = data["entries"]
    short = {}
    long_ = []
    for i, entry in enumerate(entries):
        where = "%s entry %d" % (rel, i)
        name = clean_name(entry.get("name"), where)
        if name is None:
            continue
        uuid = entry.get("uuid")
        if not isinstance(uuid, str):
            fail("%s: missing uuid" % where)
        uuid = uuid.strip()
        if HEX4.match(uuid):
            add_unique(short, int(uuid, 16), name, rel, lambda k: "%04X" % k)
        elif UUID128.match(uuid):
            long_.append((uuid.upper(), name))
        else:
            warn("%s: unrecognised uuid %r, entry skipped" % (where, uuid))
    return rel, short, long_


# ---------------------------------------------------------------------------
# Swift emission
# ---------------------------------------------------------------------------

def header(rels, attribution):
    # Tables kept in this repository (Scripts/data) are named as they are; the rest come from
    # the shared reference.
    files = ", ".join(r if r.startswith("Scripts/") else "shared/reference/assigned-numbers/" + r for r in rels)
    lines = ["// Generated by %s from %s — do not edit." % (SCRIPT_NAME, files), "//"]
    lines += [("// " + a).rstrip() if a else "//" for a in attribution]
    lines.append("")
    return lines


def derived_attribution(data):
    sources = data.get("sources") or []
    if isinstance(sources, str):
        sources = [sources]
    return ["Data sources (attribution):"] + ["  - " + str(s) for s in sources]


def doc_lines(text):
    return comment_lines(text, prefix="  /// ")


def switch_function(name, param_label, param, swift_type, bits, singles, ranges=(), doc=()):
    lines = []
    lines += list(doc)
    sig_param = param if param_label == param else "%s %s" % (param_label, param)
    lines.append("  public static func %s(%s: %s) -> Name? {" % (name, sig_param, swift_type))
    lines.append("    switch %s {" % param)
    items = [(code, code, n) for code, n in singles.items()] + list(ranges)
    for lo, hi, n in sorted(items):
        if lo == hi:
            pattern = hex_literal(lo, bits)
        else:
            pattern = "%s...%s" % (hex_literal(lo, bits), hex_literal(hi, bits))
        lines.append("    case %s: return %s" % (pattern, swift_string(n)))
    lines.append("    default: return nil")
    lines.append("    }")
    lines.append("  }")
    return lines


def extension_file(head, functions):
    lines = list(head)
    lines.append("import BLECore")
    lines.append("")
    lines.append("extension AssignedNumbers {")
    for i, fn in enumerate(functions):
        if i:
            lines.append("")
        lines += fn
    lines.append("}")
    return "\n".join(lines) + "\n"


class Writer:
    def __init__(self, output):
        self.output = output
        self.written = []

    def write(self, topic, text):
        os.makedirs(self.output, exist_ok=True)
        path = os.path.join(self.output, "Generated+%s.swift" % topic)
        old = None
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                old = f.read()
        if old != text:
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            state = "written"
        else:
            state = "unchanged"
        self.written.append((path, state))


# ---------------------------------------------------------------------------
# Individual tables
# ---------------------------------------------------------------------------

DERIVED_TABLES = [
    # (topic, file, key field, bits, swift type, function, parameter label, parameter, allow ranges, summary)
    ("HCICommands", "hci_commands.json", "opcode", 16, "UInt16", "hciCommandName", "_", "opcode", False,
     "Name of an HCI command, by opcode (`OGF << 10 | OCF`, as read little-endian off the wire)."),
    ("HCIEvents", "hci_events.json", "code", 8, "UInt8", "hciEventName", "_", "code", False,
     "Name of an HCI event, by event code (first byte of an HCI event packet)."),
    ("HCILESubevents", "hci_le_subevents.json", "code", 8, "UInt8", "hciLESubeventName", "_", "code", False,
     "Name of an LE Meta event (0x3E) subevent, by subevent code."),
    ("HCIErrors", "hci_errors.json", "code", 8, "UInt8", "hciErrorName", "_", "code", False,
     "Name of an HCI / Controller error code (Status and Reason fields)."),
    ("ATTOpcodes", "att_opcodes.json", "opcode", 8, "UInt8", "attOpcodeName", "_", "opcode", False,
     "Name of an ATT PDU, by opcode (including the Command and Signature flag bits)."),
    ("ATTErrors", "att_errors.json", "code", 8, "UInt8", "attErrorName", "_", "code", True,
     "Name of an ATT Error Response error code; reserved / application ranges return the range name."),
    ("L2CAPSignaling", "l2cap_signaling_codes.json", "code", 8, "UInt8", "l2capSignalingName", "_", "code", False,
     "Name of an L2CAP signaling command code."),
    ("ADTypes", "ad_types.json", "type", 8, "UInt8", "adTypeName", "_", "type", False,
     "Name of an advertising / EIR data (AD) type."),
]


def gen_derived(ref, writer):
    for topic, filename, key, bits, stype, fname, label, param, ranges_ok, summary in DERIVED_TABLES:
        rel, data, singles, ranges = derived_table(ref, filename, key, bits, ranges_ok)
        doc = ["  /// " + summary, "  ///"]
        doc += doc_lines("Data: " + str(data.get("description", "")).strip())
        notes = str(data.get("field_notes", "")).strip()
        if notes:
            doc += doc_lines("Notes: " + notes)
        doc.append("  /// - Returns: the name, or `nil` for a code not in the table.")
        fn = switch_function(fname, label, param, stype, bits, singles, ranges, doc)
        writer.write(topic, extension_file(header([rel], derived_attribution(data)), [fn]))


def gen_companies(ref, writer):
    rel, entries = ref.nordic("company_ids.json")
    table = {}
    for i, entry in enumerate(entries):
        where = "%s entry %d" % (rel, i)
        code = entry.get("code")
        if not isinstance(code, int) or isinstance(code, bool) or not 0 <= code <= 0xFFFF:
            warn("%s: code %r is not a 16-bit integer, entry skipped" % (where, code))
            continue
        name = clean_name(entry.get("name"), where)
        if name is None:
            continue
        add_unique(table, code, name, rel, lambda k: "0x%04X" % k)
    doc = [
        "  /// Bluetooth company identifier (manufacturer specific data, PnP ID, LMP version ...).",
        "  /// - Returns: the company name, or `nil` for an unassigned identifier.",
    ]
    fn = switch_function("companyName", "_", "id", "UInt16", 16, table, doc=doc)
    writer.write("CompanyIDs", extension_file(header([rel], ref.nordic_notice()), [fn]))


def gen_appearance(ref, writer):
    rel, entries = ref.nordic("gap_appearance.json")
    table = {}
    for i, cat in enumerate(entries):
        where = "%s category entry %d" % (rel, i)
        c = cat.get("category")
        if not isinstance(c, int) or not 0 <= c < 1 << 10:
            warn("%s: category %r does not fit in 10 bits, skipped" % (where, c))
            continue
        cname = clean_name(cat.get("name"), where)
        if cname is None:
            continue
        # The category alone (subcategory 0, "generic") is the category name. The
        # Nordic file never lists a subcategory 0; if it ever does, the category name wins.
        add_unique(table, c << 6, cname, rel, lambda k: "0x%04X" % k)
        for j, sub in enumerate(cat.get("subcategory") or []):
            swhere = "%s subcategory %d" % (where, j)
            v = sub.get("value")
            if not isinstance(v, int) or not 0 <= v < 1 << 6:
                warn("%s: value %r does not fit in 6 bits, skipped" % (swhere, v))
                continue
            sname = clean_name(sub.get("name"), swhere)
            if sname is None:
                continue
            if v == 0:
                warn("%s: explicit subcategory 0 (%r) ignored, category name used" % (swhere, sname))
                continue
            add_unique(table, c << 6 | v, "%s: %s" % (cname, sname), rel, lambda k: "0x%04X" % k)
    doc = [
        "  /// GAP Appearance value (`category << 6 | subcategory`).",
        "  ///",
        "  /// A bare category (subcategory 0) returns the category name, e.g. `Heart Rate Sensor`;",
        "  /// a subcategory returns `Category: Subcategory`, e.g. `Heart Rate Sensor: Heart Rate Belt`.",
        "  /// - Returns: the name, or `nil` for an unassigned value.",
    ]
    fn = switch_function("appearanceName", "_", "value", "UInt16", 16, table, doc=doc)
    writer.write("Appearance", extension_file(header([rel], ref.nordic_notice()), [fn]))


def gen_uuids(ref, writer):
    kinds = [
        # topic, file, nordic?, function, summary
        ("Declarations", "declarations.json", False, "declarationName16",
         "GATT declaration attribute type (0x2800 Primary Service ... 0x2803 Characteristic)."),
        ("ServiceUUIDs", "service_uuids.json", True, "serviceName16", "16-bit GATT service UUID."),
        ("CharacteristicUUIDs", "characteristic_uuids.json", True, "characteristicName16",
         "16-bit GATT characteristic UUID."),
        ("DescriptorUUIDs", "descriptor_uuids.json", True, "descriptorName16", "16-bit GATT descriptor UUID."),
    ]
    long_sources = []  # (rel, [(uuid, name)]) in priority order: services, characteristics, descriptors
    for topic, filename, nordic, fname, summary in kinds:
        if nordic:
            rel, short, long_ = uuid16_tables(ref, filename, nordic=True)
            attribution = ref.nordic_notice()
            long_sources.append((rel, long_))
        else:
            rel, short, long_ = uuid16_tables(ref, filename, nordic=False)
            _, data = ref.derived(filename)
            attribution = derived_attribution(data)
            if long_:
                warn("%s: 128-bit entries ignored" % rel)
        doc = ["  /// " + summary, "  /// - Returns: the name, or `nil` for a UUID not in the table."]
        fn = switch_function(fname, "_", "uuid", "UInt16", 16, short, doc=doc)
        writer.write(topic, extension_file(header([rel], attribution), [fn]))

    # Vendor and member UUIDs the Nordic database lacks, kept in this repository (facts from
    # shared/reference/gatt-payloads.md): 16-bit member services, and more 128-bit entries.
    vendor_rel = "Scripts/data/vendor_uuids.json"
    with open(os.path.join(REPO, vendor_rel), encoding="utf-8") as handle:
        vendor_entries = json.load(handle)["entries"]
    vendor_short = {}
    vendor_long = []
    for i, entry in enumerate(vendor_entries):
        uuid = entry["uuid"].strip()
        name = clean_name(entry["name"], "%s entry %d" % (vendor_rel, i))
        if HEX4.match(uuid):
            add_unique(vendor_short, int(uuid, 16), name, vendor_rel, lambda k: "%04X" % k)
        elif UUID128.match(uuid):
            vendor_long.append((uuid.upper(), name))
    doc = ["  /// SIG member (vendor) 16-bit service UUID from Scripts/data/vendor_uuids.json.",
           "  /// - Returns: the name, or `nil` for a UUID not in the table."]
    writer.write("VendorUUIDs", extension_file(
        header([vendor_rel], ["Numbers and names transcribed from shared/reference/gatt-payloads.md (sources named there)."]),
        [switch_function("memberServiceName16", "_", "uuid", "UInt16", 16, vendor_short, doc=doc)]))
    long_sources.append((vendor_rel, vendor_long))

    # 128-bit UUIDs: first hit wins in the order services, characteristics, descriptors, vendor.
    table = {}
    for rel, long_ in long_sources:
        for uuid, name in long_:
            hexdigits = uuid.replace("-", "")
            key = (int(hexdigits[:16], 16), int(hexdigits[16:], 16))
            add_unique(table, key, name, "128-bit UUIDs (%s)" % rel, lambda k: uuid)
    by_high = {}
    for (high, low), name in table.items():
        by_high.setdefault(high, {})[low] = name
    fn = [
        "  /// Name of a vendor 128-bit UUID (service, characteristic or descriptor; first hit wins",
        "  /// in that order).",
        "  ///",
        "  /// `high` is the first 16 hex digits of the UUID as printed",
        "  /// (`6E400001-B5A3-F393-E0A9-E50E24DCCA9E` -> `high = 0x6E400001B5A3F393`,",
        "  /// `low = 0xE0A9E50E24DCCA9E`); on the wire ATT sends the 16 bytes little-endian.",
        "  /// - Returns: the name, or `nil` for a UUID not in the table.",
        "  public static func uuid128Name(high: UInt64, low: UInt64) -> Name? {",
        "    switch high {",
    ]
    for high in sorted(by_high):
        fn.append("    case %s:" % hex_literal(high, 64))
        fn.append("      switch low {")
        for low in sorted(by_high[high]):
            fn.append("      case %s: return %s" % (hex_literal(low, 64), swift_string(by_high[high][low])))
        fn.append("      default: return nil")
        fn.append("      }")
    fn += ["    default: return nil", "    }", "  }"]

    combined = [
        "  /// Name of any 16-bit GATT UUID: declarations, then services, then characteristics,",
        "  /// then descriptors (first hit wins).",
        "  /// - Returns: the name, or `nil` for a UUID in none of the tables.",
        "  public static func uuid16Name(_ uuid: UInt16) -> Name? {",
        "    if let name = declarationName16(uuid) { return name }",
        "    if let name = serviceName16(uuid) { return name }",
        "    if let name = characteristicName16(uuid) { return name }",
        "    if let name = descriptorName16(uuid) { return name }",
        "    if let name = memberServiceName16(uuid) { return name }",
        "    return nil",
        "  }",
    ]
    rels = [NORDIC + "/" + f for f in ("service_uuids.json", "characteristic_uuids.json",
                                        "descriptor_uuids.json")]
    writer.write("GATTUUIDs", extension_file(header(rels, ref.nordic_notice()), [fn, combined]))


def gen_hid(writer):
    """HID usage pages, usages and country codes, kept in this repository (Scripts/data,
    written by Scripts/extract-hid-usages.py from usb.ids)."""
    rel = "Scripts/data/hid_usages.json"
    with open(os.path.join(REPO, rel), encoding="utf-8") as handle:
        data = json.load(handle)
    pages = {}
    for i, entry in enumerate(data["pages"]):
        add_unique(pages, parse_hex_code(entry["page"], 16, "%s page %d" % (rel, i)),
                   clean_name(entry["name"], "%s page %d" % (rel, i)), rel, lambda k: "%02X" % k)
    usages = {}
    for i, entry in enumerate(data["usages"]):
        where = "%s usage %d" % (rel, i)
        page = parse_hex_code(entry["page"], 16, where)
        usage = parse_hex_code(entry["usage"], 16, where)
        add_unique(usages, page << 16 | usage, clean_name(entry["name"], where), rel, lambda k: "%08X" % k)
    countries = {}
    for i, entry in enumerate(data["countries"]):
        code = int(entry["code"])
        if not 0 <= code <= 0xFF:
            fail("%s country %d: code %r out of range" % (rel, i, entry["code"]))
        add_unique(countries, code, clean_name(entry["name"], "%s country %d" % (rel, i)), rel, lambda k: "%d" % k)
    functions = [
        switch_function("hidUsagePageName", "_", "page", "UInt16", 16, pages, doc=[
            "  /// Name of a HID usage page (HID Usage Tables), from Scripts/data/hid_usages.json.",
            "  /// - Returns: the name, or `nil` for a page not in the table (vendor pages among them)."]),
        switch_function("hidUsageName", "_", "usage", "UInt32", 32, usages, doc=[
            "  /// Name of a HID usage by its extended usage (`page << 16 | id`), for the pages the",
            "  /// table keeps (Generic Desktop, Keyboard/Keypad, LED, Button, Consumer, Digitizer).",
            "  /// - Returns: the name, or `nil` for a usage not in the table."]),
        switch_function("hidCountryName", "_", "code", "UInt8", 8, countries, doc=[
            "  /// Name of a HID country code (bCountryCode, HID 1.11 §6.2.1).",
            "  /// - Returns: the name, or `nil` for a code not in the table."]),
    ]
    writer.write("HIDUsages", extension_file(header([rel], [str(x) for x in data.get("sources", [])]), functions))


def gen_sdp(writer):
    """Service Discovery Protocol tables, kept in this repository (Scripts/data/sdp.json)."""
    rel = "Scripts/data/sdp.json"
    with open(os.path.join(REPO, rel), encoding="utf-8") as handle:
        data = json.load(handle)

    def table(key, code_field, bits, parse):
        result = {}
        for i, entry in enumerate(data[key]):
            where = "%s %s entry %d" % (rel, key, i)
            name = clean_name(entry.get("name"), where)
            if name is None:
                continue
            add_unique(result, parse(entry.get(code_field), bits, where), name, rel + " " + key,
                       lambda k: hex_literal(k, bits))
        return result

    def uuid16(text, bits, where):
        if not isinstance(text, str) or not HEX4.match(text.strip()):
            fail("%s: bad 16-bit UUID %r" % (where, text))
        return int(text, 16)

    pdus = table("pdus", "id", 8, parse_hex_code)
    errors = table("error_codes", "code", 16, parse_hex_code)
    protocols = table("protocols", "uuid", 16, uuid16)
    classes = table("service_classes", "uuid", 16, uuid16)
    for code in protocols:
        if code in classes:
            fail("%s: UUID %04X is both a protocol and a service class" % (rel, code))
    uuids = dict(protocols)
    uuids.update(classes)
    universal = table("universal_attributes", "id", 16, parse_hex_code)
    language = table("language_attributes", "offset", 16, parse_hex_code)

    # Profile-specific attributes: class -> id -> name, and the ids every defining class names alike.
    by_class = {}
    names_by_id = {}
    for i, entry in enumerate(data["profile_attributes"]):
        where = "%s profile_attributes entry %d" % (rel, i)
        name = clean_name(entry.get("name"), where)
        code = parse_hex_code(entry.get("id"), 16, where)
        if code in universal:
            fail("%s: profile attribute %s is a universal attribute" % (where, hex_literal(code, 16)))
        for service_class in entry.get("classes") or []:
            value = uuid16(service_class, 16, where)
            if value not in classes:
                fail("%s: class %04X is not in service_classes" % (where, value))
            add_unique(by_class.setdefault(value, {}), code, name, rel + " profile_attributes",
                       lambda k: hex_literal(k, 16))
        names_by_id.setdefault(code, set()).add(name)
    unambiguous = {code: names.pop() for code, names in names_by_id.items() if len(names) == 1}

    functions = [
        switch_function("sdpPDUName", "_", "id", "UInt8", 8, pdus, doc=[
            "  /// Name of an SDP PDU, by PDU ID (Core Vol 3 Part B §4.2).",
            "  /// - Returns: the name, or `nil` for an ID not in the table."]),
        switch_function("sdpErrorName", "_", "code", "UInt16", 16, errors, doc=[
            "  /// Name of an SDP Error Response's ErrorCode (Core Vol 3 Part B §4.4.1).",
            "  /// - Returns: the name, or `nil` for a reserved code."]),
        switch_function("sdpUUIDName", "_", "uuid", "UInt16", 16, uuids, doc=[
            "  /// Name of a protocol (0x0001–0x0100) or service class / profile (0x1000 on) UUID as SDP",
            "  /// records carry them (Assigned Numbers, Service Discovery).",
            "  /// - Returns: the name, or `nil` for a UUID not in the table."]),
        switch_function("sdpUniversalAttributeName", "_", "id", "UInt16", 16, universal, doc=[
            "  /// Name of a universal attribute (Core Vol 3 Part B §5.1), the same in every record.",
            "  /// - Returns: the name, or `nil` for an identifier that is not universal."]),
        switch_function("sdpLanguageAttributeName", "offset", "offset", "UInt16", 16, language, doc=[
            "  /// Name of a language-based attribute, by its offset from a language base (0x0100 for",
            "  /// the primary language): ServiceName, ServiceDescription, ProviderName.",
            "  /// - Returns: the name, or `nil` for an offset with none."]),
    ]
    fn = [
        "  /// Name of a profile-specific attribute (0x0200 on), by the service class whose record",
        "  /// holds it: the same identifier means different things in different profiles.",
        "  /// - Returns: the name, or `nil` when the class defines no such attribute.",
        "  public static func sdpProfileAttributeName(serviceClass: UInt16, id: UInt16) -> Name? {",
        "    switch serviceClass {",
    ]
    for service_class in sorted(by_class):
        fn.append("    case %s:" % hex_literal(service_class, 16))
        fn.append("      switch id {")
        for code in sorted(by_class[service_class]):
            fn.append("      case %s: return %s" % (hex_literal(code, 16), swift_string(by_class[service_class][code])))
        fn.append("      default: return nil")
        fn.append("      }")
    fn += ["    default: return nil", "    }", "  }"]
    functions.append(fn)
    functions.append(switch_function("sdpProfileAttributeNameAnyClass", "_", "id", "UInt16", 16, unambiguous, doc=[
        "  /// Name of a profile-specific attribute whose identifier every class that defines it names",
        "  /// alike (0x0311 SupportedFeatures): for records whose class is not known.",
        "  /// - Returns: the name, or `nil` when classes name the identifier differently."]))
    attribution = ["Data sources (attribution):"] + ["  - " + str(s) for s in data.get("sources") or []]
    writer.write("SDP", extension_file(header([rel], attribution), functions))


def main(argv=None):
    parser = argparse.ArgumentParser(description="Generate BLEDecoder assigned-number tables.")
    parser.add_argument("--reference", default=DEFAULT_REFERENCE,
                        help="reference directory containing assigned-numbers/ (default: %(default)s)")
    parser.add_argument("--output", default=DEFAULT_OUTPUT,
                        help="directory for the Generated+*.swift files (default: %(default)s)")
    args = parser.parse_args(argv)

    ref = Reference(os.path.abspath(args.reference))
    writer = Writer(os.path.abspath(args.output))
    gen_derived(ref, writer)
    gen_companies(ref, writer)
    gen_appearance(ref, writer)
    gen_uuids(ref, writer)
    gen_hid(writer)
    gen_sdp(writer)
    for path, state in writer.written:
        print("%s: %s" % (state, os.path.relpath(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

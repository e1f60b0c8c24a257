#!/usr/bin/env python3
"""Write Scripts/data/hid_usages.json from the USB ID Repository's usb.ids.

usb.ids (Debian package `usb.ids`, /var/lib/usbutils/usb.ids; the database may be used under
the GPL-2.0-or-later or the BSD-3-Clause licence) lists the HID Usage Tables' pages (`HUT`
lines) with their usages (tab-indented lines) and the HID country codes (`HCC` lines,
decimal). This script keeps numbers and names only:

  pages:     every usage page's name;
  usages:    the usages of the pages a BLE HID device's Report Map uses most (Generic
             Desktop, Keyboard/Keypad, LEDs, Button, Consumer, Digitizer);
  countries: bCountryCode names (HID 1.11 §6.2.1).

A few names are spelled as the HID Usage Tables 1.5 spell them where usb.ids words them
otherwise (`NAME_FIXES`, each with its section); the rest are as usb.ids has them.

Usage:
  Scripts/extract-hid-usages.py [--usb-ids FILE] [--output FILE]

Then run Scripts/generate-tables.py, which turns the JSON into
Sources/BLEDecoder/AssignedNumbers/Generated+HIDUsages.swift.

Python 3 standard library only.
"""

import argparse
import json
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUTPUT = os.path.join(REPO, "Scripts", "data", "hid_usages.json")
DEFAULT_USB_IDS = "/var/lib/usbutils/usb.ids"

# Pages whose usages are kept.
USAGE_PAGES = [0x01, 0x07, 0x08, 0x09, 0x0C, 0x0D]

# Names the HID Usage Tables 1.5 give differently from usb.ids: (page, usage) -> (name, section).
NAME_FIXES = {
    (0x01, 0x30): ("X", "HUT 1.5 §4.2"),
    (0x01, 0x31): ("Y", "HUT 1.5 §4.2"),
    (0x01, 0x32): ("Z", "HUT 1.5 §4.2"),
    (0x01, 0x33): ("Rx", "HUT 1.5 §4.2"),
    (0x01, 0x34): ("Ry", "HUT 1.5 §4.2"),
    (0x01, 0x35): ("Rz", "HUT 1.5 §4.2"),
    (0x01, 0x40): ("Vx", "HUT 1.5 §4.4"),
    (0x01, 0x41): ("Vy", "HUT 1.5 §4.4"),
    (0x01, 0x42): ("Vz", "HUT 1.5 §4.4"),
    (0x01, 0x43): ("Vbrx", "HUT 1.5 §4.4"),
    (0x01, 0x44): ("Vbry", "HUT 1.5 §4.4"),
    (0x01, 0x45): ("Vbrz", "HUT 1.5 §4.4"),
    (0x01, 0x46): ("Vno", "HUT 1.5 §4.4"),
    (0x01, 0x05): ("Game Pad", "HUT 1.5 §4.1"),
    (0x08, 0x0A): ("Tone Enable", "HUT 1.5 §11 (usb.ids: a typo)"),
}

PAGE_FIXES = {
    0x07: ("Keyboard/Keypad", "HUT 1.5 §10"),
    0x08: ("LED", "HUT 1.5 §11"),
    0x09: ("Button", "HUT 1.5 §12"),
}

HUT = re.compile(r"^HUT ([0-9a-fA-F]{2})\s+(.+?)\s*$")
USAGE = re.compile(r"^\t([0-9a-fA-F]{3,4})\s+(.+?)\s*$")
HCC = re.compile(r"^HCC ([0-9]{2})\s+(.+?)\s*$")
VERSION = re.compile(r"^# Version:\s*(\S+)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--usb-ids", default=DEFAULT_USB_IDS)
    parser.add_argument("--output", default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    try:
        with open(args.usb_ids, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError as error:
        print("extract-hid-usages: cannot read %s (%s); apt-get install usb.ids" % (args.usb_ids, error.strerror), file=sys.stderr)
        return 1

    version = None
    pages = {}
    usages = {}
    countries = {}
    page = None
    for line in lines:
        match = VERSION.match(line)
        if match and version is None:
            version = match.group(1)
        match = HUT.match(line)
        if match:
            page = int(match.group(1), 16)
            pages[page] = match.group(2)
            continue
        if page is not None:
            match = USAGE.match(line)
            if match:
                if page in USAGE_PAGES:
                    usages[(page, int(match.group(1), 16))] = match.group(2)
                continue
            page = None
        match = HCC.match(line)
        if match:
            countries[int(match.group(1), 10)] = match.group(2)

    entries_pages = []
    for code in sorted(pages):
        name, source = pages[code], "usb.ids"
        if code in PAGE_FIXES:
            name, source = PAGE_FIXES[code]
        entries_pages.append({"page": "0x%02X" % code, "name": name, "source": source})
    entries_usages = []
    for (code_page, code) in sorted(usages):
        name, source = usages[(code_page, code)], "usb.ids"
        if (code_page, code) in NAME_FIXES:
            name, source = NAME_FIXES[(code_page, code)]
        entries_usages.append({"page": "0x%02X" % code_page, "usage": "0x%04X" % code, "name": name, "source": source})
    entries_countries = [{"code": code, "name": countries[code]} for code in sorted(countries)]

    data = {
        "description": "HID usage pages, the usages of the pages BLE HID Report Maps use most, and HID country codes: numbers and names from the USB ID Repository's usb.ids (version %s; GPL-2.0-or-later or BSD-3-Clause), written by Scripts/extract-hid-usages.py; names marked with a HUT section are spelled as the HID Usage Tables 1.5 spell them." % version,
        "sources": ["usb.ids %s, http://www.linux-usb.org/usb-ids.html (Stephen J. Gowdy; GPL-2.0-or-later or BSD-3-Clause)" % version,
                    "HID Usage Tables 1.5 (USB-IF), for the names marked with a section"],
        "pages": entries_pages,
        "usages": entries_usages,
        "countries": entries_countries,
    }
    with open(args.output, "w", encoding="utf-8", newline="\n") as handle:
        # One entry a line, as Scripts/data/vendor_uuids.json is laid out.
        handle.write("{\n")
        handle.write(" \"description\": %s,\n" % json.dumps(data["description"], ensure_ascii=False))
        handle.write(" \"sources\": %s,\n" % json.dumps(data["sources"], ensure_ascii=False))
        for index, key in enumerate(("pages", "usages", "countries")):
            handle.write(" \"%s\": [\n" % key)
            rows = [json.dumps(entry, ensure_ascii=False) for entry in data[key]]
            handle.write(",\n".join("  " + row for row in rows))
            handle.write("\n ]%s\n" % ("," if index < 2 else ""))
        handle.write("}\n")
    print("written: %s (%d pages, %d usages, %d countries)" % (os.path.relpath(args.output), len(entries_pages), len(entries_usages), len(entries_countries)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

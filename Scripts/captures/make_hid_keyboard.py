#!/usr/bin/env python3
"""Record a BLE HID-over-GATT keyboard session (with a boot mouse report and the old
Battery Power State / Battery Level State characteristics) with Google Bumble.

What ../shared/corpus lacks: a HID Control Point, Boot Keyboard Input and Output Reports,
a Boot Mouse Input Report, an Output Report written, a Protocol Mode write, Battery Power
State 0x2A1A and Battery Level State 0x2A1B; and a UART-style text write ending in CR LF.

Same set-up as make_scenarios.py (imported for its Stack, phone, connect / discovery
helpers; make_hr_session.py for the identities and the record counter): one process, one
``bumble.link.LocalLink``, one emulated controller per device, the phone's HCI traffic
written by Bumble's ``BtSnooper`` (btsnoop v1, datalink 1002 = H4, wall-clock timestamps:
reruns differ only in timestamps).  The phone C0:B1:ED:00:50:48 (central, GATT client)
connects by address to the keyboard "bledissect KB" D0:B1:ED:00:4B:42 (controller
00:B1:ED:00:00:21).  No MTU exchange: ATT_MTU stays 23, so the 90-byte Report Map is read
with a Read Request and Read Blob Requests.

The keyboard's database (HIDS 1.0; values per HID 1.11 and the HID Usage Tables):
  HID service 0x1812:
    Protocol Mode 0x2A4E (read, write without response) = 01 (Report Protocol Mode)
    Report Map 0x2A4B (read) = REPORT_MAP below: a boot-compatible keyboard (report ID 1:
      8 modifier bits, a reserved byte, 6 key array; output: 5 LED bits + 3 padding) and
      a consumer control (report ID 2: one 16-bit usage, little-endian limits 0..0x029C)
    Report 0x2A4D (read, notify) + CCCD + Report Reference 01 01 (Input, ID 1)
    Report 0x2A4D (read, write, write without response) + Report Reference 01 02 (Output, ID 1)
    Report 0x2A4D (read, notify) + CCCD + Report Reference 02 01 (Input, ID 2)
    Boot Keyboard Input Report 0x2A22 (read, notify) + CCCD
    Boot Keyboard Output Report 0x2A32 (read, write, write without response)
    Boot Mouse Input Report 0x2A33 (read, notify) + CCCD
    HID Information 0x2A4A (read) = 11 01 00 02 (HID 1.11, not localized, normally connectable)
    HID Control Point 0x2A4C (write without response)
  Battery service 0x180F: Battery Level 0x2A19 (read) = 75, Battery Power State 0x2A1A
    (read) = BB (present, not discharging, charging, level good), Battery Level State
    0x2A1B (read, notify) + CCCD = 4B BB.
  Vendor "UART" B1ED3001-5CA7-4E5A-9D1E-0000000000B1 with RX B1ED3002 (write without
    response) and TX B1ED3003 (notify) + CCCD.

Session (phone side): connect, full discovery (services, characteristics, descriptors),
read HID Information, the Report Map (long read), the three Report References, Protocol
Mode; subscribe to the input reports, the boot keyboard and mouse inputs, the Battery
Level State and the UART TX; notifications: input report ID 1 `02 00 04 00 00 00 00 00`
(Left Shift + A) and `00 00 00 00 00 00 00 00`, input report ID 2 `E9 00` (Volume
Increment); write the output report `02` (Caps Lock, Write Request); write Protocol Mode
00 (Boot, Write Command); boot keyboard input `01 00 06 00 00 00 00 00` (Left Control + C),
boot keyboard output `03` (Write Request; Num Lock + Caps Lock), boot mouse input
`01 05 FD FF` (left down, dx 5, dy -3, wheel -1); HID Control Point 00 (Suspend) then 01
(Exit Suspend), Write Commands; read Battery Level, Battery Power State, Battery Level State;
Battery Level State notification `4A AF` (74 %, present, discharging, not charging, level
good); UART: Write Command `AT+VER\\r\\n`, notification `OK 1.2\\r\\n`; disconnect.

Output: captures/hid_keyboard.btsnoop (phone side).

Usage:  python3 Scripts/captures/make_hid_keyboard.py [--out-dir captures]
Needs: Python 3.11+, bumble (tested with 0.0.236).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_hr_session as hr  # noqa: E402
import make_scenarios as ms  # noqa: E402

from bumble import gatt  # noqa: E402
from bumble.device import Peer  # noqa: E402
from bumble.gatt import Characteristic, CharacteristicValue, Descriptor, Service  # noqa: E402
from bumble.link import LocalLink  # noqa: E402

KEYBOARD = ("bledissect KB", "D0:B1:ED:00:4B:42", "00:B1:ED:00:00:21")

REPORT_MAP = bytes([
    0x05, 0x01,        # Usage Page (Generic Desktop)
    0x09, 0x06,        # Usage (Keyboard)
    0xA1, 0x01,        # Collection (Application)
    0x85, 0x01,        #   Report ID (1)
    0x05, 0x07,        #   Usage Page (Keyboard/Keypad)
    0x19, 0xE0,        #   Usage Minimum (Left Control)
    0x29, 0xE7,        #   Usage Maximum (Right GUI)
    0x15, 0x00,        #   Logical Minimum (0)
    0x25, 0x01,        #   Logical Maximum (1)
    0x75, 0x01,        #   Report Size (1)
    0x95, 0x08,        #   Report Count (8)
    0x81, 0x02,        #   Input (Data, Variable, Absolute): the modifiers
    0x95, 0x01,        #   Report Count (1)
    0x75, 0x08,        #   Report Size (8)
    0x81, 0x01,        #   Input (Constant): the reserved byte
    0x95, 0x05,        #   Report Count (5)
    0x75, 0x01,        #   Report Size (1)
    0x05, 0x08,        #   Usage Page (LED)
    0x19, 0x01,        #   Usage Minimum (Num Lock)
    0x29, 0x05,        #   Usage Maximum (Kana)
    0x91, 0x02,        #   Output (Data, Variable, Absolute): the LEDs
    0x95, 0x01,        #   Report Count (1)
    0x75, 0x03,        #   Report Size (3)
    0x91, 0x01,        #   Output (Constant): padding
    0x95, 0x06,        #   Report Count (6)
    0x75, 0x08,        #   Report Size (8)
    0x15, 0x00,        #   Logical Minimum (0)
    0x25, 0x65,        #   Logical Maximum (101)
    0x05, 0x07,        #   Usage Page (Keyboard/Keypad)
    0x19, 0x00,        #   Usage Minimum (0)
    0x29, 0x65,        #   Usage Maximum (101)
    0x81, 0x00,        #   Input (Data, Array, Absolute): the keys
    0xC0,              # End Collection
    0x05, 0x0C,        # Usage Page (Consumer)
    0x09, 0x01,        # Usage (Consumer Control)
    0xA1, 0x01,        # Collection (Application)
    0x85, 0x02,        #   Report ID (2)
    0x15, 0x00,        #   Logical Minimum (0)
    0x26, 0x9C, 0x02,  #   Logical Maximum (668)
    0x19, 0x00,        #   Usage Minimum (0)
    0x2A, 0x9C, 0x02,  #   Usage Maximum (0x029C: AC Distribute Vertically)
    0x75, 0x10,        #   Report Size (16)
    0x95, 0x01,        #   Report Count (1)
    0x81, 0x00,        #   Input (Data, Array, Absolute)
    0xC0,              # End Collection
])
HID_INFORMATION = bytes([0x11, 0x01, 0x00, 0x02])
PROTOCOL_MODE_REPORT = bytes([0x01])
PROTOCOL_MODE_BOOT = bytes([0x00])
INPUT_ID1 = [bytes([0x02, 0x00, 0x04, 0, 0, 0, 0, 0]), bytes(8)]
INPUT_ID2 = [bytes([0xE9, 0x00])]
OUTPUT_ID1 = bytes([0x02])
BOOT_KEYBOARD_INPUT = bytes([0x01, 0x00, 0x06, 0, 0, 0, 0, 0])
BOOT_KEYBOARD_OUTPUT = bytes([0x03])
BOOT_MOUSE_INPUT = bytes([0x01, 0x05, 0xFD, 0xFF])
BATTERY_LEVEL = 75
BATTERY_POWER_STATE = bytes([0xBB])
BATTERY_LEVEL_STATE = bytes([0x4B, 0xBB])
BATTERY_LEVEL_STATE_NOTIFIED = bytes([0x4A, 0xAF])
BOOT_MOUSE_INPUT_UUID = gatt.UUID("2A33")
UART_SERVICE_UUID = "B1ED3001-5CA7-4E5A-9D1E-0000000000B1"
UART_RX_UUID = "B1ED3002-5CA7-4E5A-9D1E-0000000000B1"
UART_TX_UUID = "B1ED3003-5CA7-4E5A-9D1E-0000000000B1"
UART_COMMAND = b"AT+VER\r\n"
UART_ANSWER = b"OK 1.2\r\n"

READ = Characteristic.Properties.READ
NOTIFY = Characteristic.Properties.NOTIFY
WRITE = Characteristic.Properties.WRITE
WRITE_NO_RESPONSE = Characteristic.Properties.WRITE_WITHOUT_RESPONSE
READABLE = Characteristic.Permissions.READABLE
WRITEABLE = Characteristic.Permissions.WRITEABLE


class Keyboard:
    def __init__(self, stack: ms.Stack) -> None:
        self.device = stack.device
        self.writes: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()

        def sink(name: str):
            return CharacteristicValue(write=lambda _c, v: self.writes.put_nowait((name, bytes(v))))

        def reference(report_id: int, report_type: int) -> Descriptor:
            return Descriptor(gatt.GATT_REPORT_REFERENCE_DESCRIPTOR, Descriptor.READABLE, bytes([report_id, report_type]))

        self.protocol_mode = Characteristic(
            gatt.GATT_PROTOCOL_MODE_CHARACTERISTIC, READ | WRITE_NO_RESPONSE, READABLE | WRITEABLE,
            CharacteristicValue(read=lambda _c: PROTOCOL_MODE_REPORT, write=lambda _c, v: self.writes.put_nowait(("protocol_mode", bytes(v)))))
        self.report_map = Characteristic(gatt.GATT_REPORT_MAP_CHARACTERISTIC, READ, READABLE, REPORT_MAP)
        self.input1 = Characteristic(gatt.GATT_REPORT_CHARACTERISTIC, READ | NOTIFY, READABLE, bytes(8), descriptors=[reference(1, 1)])
        self.output1 = Characteristic(
            gatt.GATT_REPORT_CHARACTERISTIC, READ | WRITE | WRITE_NO_RESPONSE, READABLE | WRITEABLE,
            CharacteristicValue(read=lambda _c: bytes(1), write=lambda _c, v: self.writes.put_nowait(("output", bytes(v)))),
            descriptors=[reference(1, 2)])
        self.input2 = Characteristic(gatt.GATT_REPORT_CHARACTERISTIC, READ | NOTIFY, READABLE, bytes(2), descriptors=[reference(2, 1)])
        self.boot_keyboard_input = Characteristic(gatt.GATT_BOOT_KEYBOARD_INPUT_REPORT_CHARACTERISTIC, READ | NOTIFY, READABLE, bytes(8))
        self.boot_keyboard_output = Characteristic(
            gatt.GATT_BOOT_KEYBOARD_OUTPUT_REPORT_CHARACTERISTIC, READ | WRITE | WRITE_NO_RESPONSE, READABLE | WRITEABLE,
            CharacteristicValue(read=lambda _c: bytes(1), write=lambda _c, v: self.writes.put_nowait(("boot_output", bytes(v)))))
        self.boot_mouse_input = Characteristic(BOOT_MOUSE_INPUT_UUID, READ | NOTIFY, READABLE, bytes(3))
        self.hid_information = Characteristic(gatt.GATT_HID_INFORMATION_CHARACTERISTIC, READ, READABLE, HID_INFORMATION)
        self.control_point = Characteristic(gatt.GATT_HID_CONTROL_POINT_CHARACTERISTIC, WRITE_NO_RESPONSE, WRITEABLE, sink("control_point"))
        self.battery_level = Characteristic(gatt.GATT_BATTERY_LEVEL_CHARACTERISTIC, READ, READABLE, bytes([BATTERY_LEVEL]))
        self.power_state = Characteristic(gatt.UUID("2A1A"), READ, READABLE, BATTERY_POWER_STATE)
        self.level_state = Characteristic(gatt.UUID("2A1B"), READ | NOTIFY, READABLE, BATTERY_LEVEL_STATE)
        self.uart_rx = Characteristic(UART_RX_UUID, WRITE_NO_RESPONSE, WRITEABLE, sink("uart"))
        self.uart_tx = Characteristic(UART_TX_UUID, NOTIFY, READABLE, b"")
        self.device.add_services([
            Service(gatt.GATT_HUMAN_INTERFACE_DEVICE_SERVICE, [
                self.protocol_mode, self.report_map, self.input1, self.output1, self.input2,
                self.boot_keyboard_input, self.boot_keyboard_output, self.boot_mouse_input,
                self.hid_information, self.control_point]),
            Service(gatt.GATT_BATTERY_SERVICE, [self.battery_level, self.power_state, self.level_state]),
            Service(UART_SERVICE_UUID, [self.uart_rx, self.uart_tx]),
        ])

    async def expect(self, name: str, value: bytes) -> None:
        got = await asyncio.wait_for(self.writes.get(), 5)
        assert got == (name, value), (got, name, value)


async def session(phone_file, log) -> dict:
    link = LocalLink()
    phone_stack = ms.make_phone(link, phone_file)
    name, random_address, public_address = KEYBOARD
    keyboard = Keyboard(ms.Stack(link, name, random_address, public_address, gap_appearance=0x03C1))
    phone = phone_stack.device
    await keyboard.device.power_on()
    await phone.power_on()

    connection, keyboard_connection = await ms.connect(phone, keyboard.device, random_address)
    peer = Peer(connection)
    await ms.full_discovery(peer)
    reports = peer.get_characteristics_by_uuid(gatt.GATT_REPORT_CHARACTERISTIC)
    assert len(reports) == 3
    input1, output1, input2 = reports
    handles = ms.handle_map(peer)
    log(f"handles: {handles}")

    assert bytes(await peer.read_value(ms.find_char(peer, gatt.GATT_HID_INFORMATION_CHARACTERISTIC))) == HID_INFORMATION
    assert bytes(await peer.read_value(ms.find_char(peer, gatt.GATT_REPORT_MAP_CHARACTERISTIC))) == REPORT_MAP
    for report, expected in ((input1, b"\x01\x01"), (output1, b"\x01\x02"), (input2, b"\x02\x01")):
        descriptor = report.get_descriptor(gatt.GATT_REPORT_REFERENCE_DESCRIPTOR)
        assert bytes(await peer.read_value(descriptor)) == expected
    protocol_mode = ms.find_char(peer, gatt.GATT_PROTOCOL_MODE_CHARACTERISTIC)
    assert bytes(await peer.read_value(protocol_mode)) == PROTOCOL_MODE_REPORT

    received: asyncio.Queue[bytes] = asyncio.Queue()
    boot_keyboard_input = ms.find_char(peer, gatt.GATT_BOOT_KEYBOARD_INPUT_REPORT_CHARACTERISTIC)
    boot_mouse_input = ms.find_char(peer, BOOT_MOUSE_INPUT_UUID)
    level_state = ms.find_char(peer, gatt.UUID("2A1B"))
    uart_tx = ms.find_char(peer, gatt.UUID(UART_TX_UUID))
    for characteristic in (input1, input2, boot_keyboard_input, boot_mouse_input, level_state, uart_tx):
        await peer.subscribe(characteristic, lambda v: received.put_nowait(bytes(v)))

    async def notify(characteristic, value: bytes) -> None:
        await keyboard.device.notify_subscribers(characteristic, value)
        assert await asyncio.wait_for(received.get(), 5) == value

    for value in INPUT_ID1:
        await notify(keyboard.input1, value)
    for value in INPUT_ID2:
        await notify(keyboard.input2, value)
    await peer.write_value(output1, OUTPUT_ID1, with_response=True)
    await keyboard.expect("output", OUTPUT_ID1)
    await peer.write_value(protocol_mode, PROTOCOL_MODE_BOOT, with_response=False)
    await keyboard.expect("protocol_mode", PROTOCOL_MODE_BOOT)
    await notify(keyboard.boot_keyboard_input, BOOT_KEYBOARD_INPUT)
    await peer.write_value(ms.find_char(peer, gatt.GATT_BOOT_KEYBOARD_OUTPUT_REPORT_CHARACTERISTIC), BOOT_KEYBOARD_OUTPUT, with_response=True)
    await keyboard.expect("boot_output", BOOT_KEYBOARD_OUTPUT)
    await notify(keyboard.boot_mouse_input, BOOT_MOUSE_INPUT)
    control_point = ms.find_char(peer, gatt.GATT_HID_CONTROL_POINT_CHARACTERISTIC)
    for command in (b"\x00", b"\x01"):
        await peer.write_value(control_point, command, with_response=False)
        await keyboard.expect("control_point", command)
    assert bytes(await peer.read_value(ms.find_char(peer, gatt.GATT_BATTERY_LEVEL_CHARACTERISTIC))) == bytes([BATTERY_LEVEL])
    assert bytes(await peer.read_value(ms.find_char(peer, gatt.UUID("2A1A")))) == BATTERY_POWER_STATE
    assert bytes(await peer.read_value(level_state)) == BATTERY_LEVEL_STATE
    await notify(keyboard.level_state, BATTERY_LEVEL_STATE_NOTIFIED)
    await peer.write_value(ms.find_char(peer, gatt.UUID(UART_RX_UUID)), UART_COMMAND, with_response=False)
    await keyboard.expect("uart", UART_COMMAND)
    await notify(keyboard.uart_tx, UART_ANSWER)
    await ms.settle()
    await ms.disconnect(connection, keyboard_connection)
    await ms.settle()
    return {"handles": handles}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out-dir", default=os.path.normpath(os.path.join(here, "..", "..", "captures")))
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.ERROR)
    path = os.path.join(args.out_dir, "hid_keyboard.btsnoop")
    with open(path, "wb") as phone_file:
        asyncio.run(session(phone_file, print))
    size = os.path.getsize(path)
    assert size < 64 * 1024, size
    print(f"{path}: {hr.btsnoop_record_count(path)} records, {size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Record more PAIRS of captures for ``bledissect diff A B``, with ground truth.

Same set-up as make_diff_pairs.py (imported, with make_scenarios.py,
make_late_start.py and make_hr_session.py): one process, one
``bumble.link.LocalLink``, one emulated ``bumble.controller.Controller`` per
device, each driven by its own ``bumble.host.Host`` + ``bumble.device.Device``,
HCI traffic recorded by Bumble's ``BtSnooper`` (btsnoop v1, datalink 1002 =
H4) behind make_late_start.GatedSnooper (always on here).  Both devices' HCI
traffic is always snooped (the order of the two logs' packets sets the common
clock, see Timestamps); only the pair 3 run writes the strap's log to a file.

Devices (the same in every file):
  * phone: central / GATT client, controller public address 00:B1:ED:00:00:01,
    static random address C0:B1:ED + 3 seeded bytes; connects by address
    (LE Create Connection, no scanning), interval min = max = 12 (15 ms),
    latency 0, supervision timeout 72 (720 ms).  Its controller assigns a
    seeded connection handle (instance override of the emulated controller's
    allocate_connection_handle(), which otherwise always picks 0x0001).
  * strap: ScenarioStrap = make_hr_session.Strap "bledissect HR", static random
    address D0:B1:ED:00:48:52 (controller 00:B1:ED:00:00:02), legacy
    advertising (ADV_IND), plus a vendor service.  Its controller also assigns
    a seeded connection handle (different from the phone's), and reports the
    link's real parameters in its LE Connection Complete (see "Connection
    parameters at the peripheral").  GATT table (decimal handles; checked on
    every run from the server and from the phone's discovery):
      GAP 1-5 (Device Name 3, Appearance 5), GATT 6-13 (Service Changed 8 +
      CCCD 9, Client Supported Features 11, Database Hash 13), Heart Rate 14-21
      (HRM 16 + CCCD 17, Body Sensor Location 19, HR Control Point 21),
      Battery 22-25 (Battery Level 24 + CCCD 25), Device Information 26-34
      (Manufacturer Name 28 "bledissect labs", Model Number 30 "HRS-1", Serial
      Number 32 "0001-2025", Firmware Revision 34 "4.1.7" unless said
      otherwise), vendor service B1ED1001-5CA7-4E5A-9D1E-0000000000B1 35-37
      with the command characteristic B1ED1002-5CA7-4E5A-9D1E-0000000000B1
      (declaration 36, value 37, properties write + write without response;
      the strap checks every command it receives).
    Battery Level reads return 87 unless said otherwise.

Every session, as seen by the phone:
  1. power on (the strap first, then the phone; HCI Reset + Bumble's init
     sequence, incl. LE Set Random Address);
  2. the strap advertises, the phone connects (LE Create Connection, LE
     Connection Complete);
  3. ATT Exchange MTU: the phone asks 247, the strap answers 517;
  4. full discovery: all primary services (Read By Group Type; the 16-bit
     services come in one response, the 128-bit vendor service in a second),
     the characteristics of each service (Read By Type 0x2803), the
     descriptors of each characteristic whose value handle is below its end
     handle (Find Information); each procedure ends with Attribute Not Found
     (Error Response code 0x0A), as usual with Bumble;
  5. the pair's own steps (below);
  6. the phone disconnects: HCI Disconnect reason 0x13 -> Command Status ->
     Disconnection Complete reason 0x13 (Bumble's emulated controller echoes
     the command's reason; a real controller reports 0x16 locally); the
     strap's controller gets LL_TERMINATE_IND and reports Disconnection
     Complete reason 0x13 (Remote User Terminated Connection).
No pairing / encryption, no connection update, no PHY or data length update.

Pairs (A and B of a pair use the same seed: same phone address, connection
handles and timing draws; B's base time is another day):

1. value_a / value_b (phone side).  Step 5: Read Manufacturer Name (28),
   Model Number (30), Serial Number (32), Firmware Revision (34), Battery
   Level (24).  Differences: the Firmware Revision String (0x2A26) is "4.1.7"
   in A and "4.0.2" in B; the Battery Level read returns 87 (0x57) in A and
   64 (0x40) in B.  Nothing else (same record count, same bytes elsewhere,
   same relative timestamps).

2. write_a / write_b (phone side).  Step 5: the phone sends WRITE_COMMANDS to
   the vendor command characteristic (37), in order: Write Request f0 01,
   Write Command 02 01, Write Request 01 3c, Write Command 03 00 10, Write
   Request 04; then Write Request 01 to the Heart Rate Control Point (21,
   Reset Energy Expended; the strap's HeartRateService acknowledges it).  The
   one difference: the third command (Write Request) carries 01 3c in A and
   01 78 in B.

3. roles_central / roles_peripheral: ONE run logged at both ends (the phone's
   log and the strap's log).  Step 5: Read Manufacturer Name, Firmware
   Revision, Battery Level; Write Request 01 00 to the HRM CCCD (17); 5 HRM
   notifications on 16 (06 48 .. 06 4c = 72..76 bpm, 1 s apart); Write
   Request 01 3c and Write Command 02 01 to the vendor characteristic; Write
   Request 01 to the HR Control Point; Write Request 00 00 to 17.  Expected:
   equivalent (the same ATT PDUs in the same order, each once per file, with
   the direction seen from the other end).  What legitimately differs: the
   connection handle (each controller assigns its own), the role (LE
   Connection Complete role 0 central / 1 peripheral, and the peer address),
   the commands (LE Create Connection only in the phone's log; LE Set
   Advertising Parameters / Data / Scan Response Data / Enable only in the
   strap's), the disconnect (HCI Disconnect + Command Status + Disconnection
   Complete in the phone's log = local; only Disconnection Complete in the
   strap's = remote, both reason 0x13), Number Of Completed Packets (for each
   side's own transmissions), ACL fragmentation (the strap's host splits its
   long discovery responses into 27-byte ACL packets, the phone's log gets
   them whole), and the first record (the strap's log starts earlier: it
   powers on first).  Both logs are on the same clock (one process; the
   base time is the strap's first record).

4. repeat_a / repeat_b (phone side).  Step 5: Read Firmware Revision; Write
   Command 01 to the vendor characteristic 3 times in A, 120 times in B;
   Read Battery Level (87) 2 times in A, 42 times in B; Write Request 04 to
   the vendor characteristic.  Nothing else differs.

Connection parameters at the peripheral: Bumble 0.0.236's emulated
controller builds the peripheral's LE Connection Complete in
Controller.on_le_connect_ind() with fixed placeholders (connection_interval
10 = 12.5 ms, peripheral_latency 0, supervision_timeout 10 = 100 ms,
central_clock_accuracy 7, each marked "# FIXME"), although the LL CONNECT_IND
it received (bumble.ll.ConnectInd) carries the central's interval, latency and
timeout.  That is why captures/hr_strap_peripheral.btsnoop reports 12.5 ms /
100 ms while the phone's log reports 15 ms / 720 ms.  A real controller
reports the link's parameters at both ends, so the strap's controller here has
an instance override of on_le_connect_ind() (report_link_parameters()) that
runs Bumble's own method but rewrites that one event's interval, latency and
timeout with the CONNECT_IND's values (central_clock_accuracy stays 7 =
20 ppm; Bumble's ll.ConnectInd has no sleep clock accuracy field, and the
central's own event reports 0 as the spec requires).  Nothing else changes.
The strap's log of pair 3 thus reports 12 / 0 / 72 like the phone's.

Timestamps: Bumble writes wall-clock times; after the run every record is
re-timed deterministically (order and bytes unchanged), so reruns produce
identical files (checked: every file byte-identical over 4 separate runs).
All HCI packets of BOTH devices, in the order Bumble passed them to the two
snoopers, are put on one clock: packet 0 at the run's base time (BASE_TIMES),
each next one 2.000..3.000 ms later (seeded, in microseconds, one draw per
packet), plus a scripted pause before some packets: 1.000 s before the strap
starts advertising (the connection), 1.000 s before each HRM notification
(pair 3), 0.400 s before HCI Disconnect.  A file's records keep their times
on that clock, so the two logs of pair 3 agree (a PDU shows up in the
receiver's log 4-9 ms after it shows up in the sender's).

Ground truth: captures/diff/scenarios.truth.json (written from what the script
did, then every file is read back (own btsnoop parser with L2CAP reassembly,
and tshark when installed) and checked against it):
  {"generator", "seeds", "schema", "strap": {identity, "attributes"
   [[handle, kind, uuid, end_group_handle or null]]},
   "files": {name: {"seed", "base_time", "recorded_on" ("phone" | "strap"),
     "records", "record_kinds", "bytes", "duration_s", "phone", "strap",
     "connection_handle", "connection_handle_hex", "connection" (from the
     file's LE Connection Complete: role, peer, interval, latency, timeout,
     clock accuracy), "disconnect", "operations" (what the script did, in
     order), "att" [one entry per ATT PDU in file order: "frame" (1-based
     record number; for a PDU in several ACL fragments the record of the last
     fragment, as tshark and bledissect count, with "first_fragment_frame"),
     "t_s" (seconds since the file's first record, exact microseconds),
     "direction" ("phone->strap" | "strap->phone"), "logged" ("sent" |
     "received", from the file's host), "opcode" ("0x0a"), "opcode_name",
     "handle" (the PDU's handle; for Read / Write Responses the handle of the
     request answered; for discovery requests the start handle, with
     "range"), "characteristic" (UUID of the characteristic that handle
     belongs to: its value, or its descriptor, then "descriptor" says which;
     null for services, declarations and discovery), "value" (hex of the
     attribute value for Read Response, Write Request / Command and
     Notification, else null), "pdu" (the whole ATT PDU in hex), "request_frame"
     for responses]}},
   "pairs": [{"name", "a", "b", "expected" ("equivalent" | "different"),
     "differences": [{"kind", "characteristic", "a", "b", "a_hex", "b_hex",
     "count_a", "count_b" (repeats), "first_frame_a", "first_frame_b", ...}],
     ...}]}
  first_frame_*: the record of the first PDU where the difference shows: the
  Read Response carrying the differing value; the Write carrying the
  differing payload; for repeats, in B the first repeat beyond A's count and
  in A the PDU A has at that place (its first ATT PDU after its last repeat);
  repeats also give last_frame_a (A's last repeat), and reads the Read Response
  frames too (first_response_frame_b, last_response_frame_a).

Usage:  python3 Scripts/captures/make_diff_scenarios.py [--out-dir captures/diff]
                                                        [--no-tshark]
Needs: Python 3.11+, bumble (tested with 0.0.236).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime
import json
import logging
import os
import random
import shutil
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_diff_pairs as dp  # noqa: E402
import make_hr_session as hr  # noqa: E402
import make_late_start as ls  # noqa: E402
import make_scenarios as sc  # noqa: E402

from bumble import hci  # noqa: E402
from bumble.device import ConnectionParametersPreferences, Device, Peer  # noqa: E402
from bumble.gatt import (  # noqa: E402
    GATT_BATTERY_LEVEL_CHARACTERISTIC,
    GATT_BATTERY_SERVICE,
    GATT_BODY_SENSOR_LOCATION_CHARACTERISTIC,
    GATT_DEVICE_INFORMATION_SERVICE,
    GATT_DEVICE_NAME_CHARACTERISTIC,
    GATT_GENERIC_ACCESS_SERVICE,
    GATT_HEART_RATE_SERVICE,
    GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR,
    GATT_FIRMWARE_REVISION_STRING_CHARACTERISTIC,
    GATT_HEART_RATE_CONTROL_POINT_CHARACTERISTIC,
    GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC,
    GATT_MANUFACTURER_NAME_STRING_CHARACTERISTIC,
    GATT_MODEL_NUMBER_STRING_CHARACTERISTIC,
    GATT_SERIAL_NUMBER_STRING_CHARACTERISTIC,
    UUID,
    Characteristic,
    CharacteristicValue,
    Service,
)
from bumble.link import LocalLink  # noqa: E402

# -----------------------------------------------------------------------------
# Fixed values
# -----------------------------------------------------------------------------
SEEDS = {"value": 3001, "write": 3002, "roles": 3003, "repeat": 3004}
BASE_TIMES = {
    "value_a": datetime.datetime(2025, 3, 4, 9, 0, 0, tzinfo=datetime.UTC),
    "value_b": datetime.datetime(2025, 3, 5, 9, 0, 0, tzinfo=datetime.UTC),
    "write_a": datetime.datetime(2025, 3, 4, 10, 0, 0, tzinfo=datetime.UTC),
    "write_b": datetime.datetime(2025, 3, 5, 10, 0, 0, tzinfo=datetime.UTC),
    "roles": datetime.datetime(2025, 3, 4, 11, 0, 0, tzinfo=datetime.UTC),
    "repeat_a": datetime.datetime(2025, 3, 4, 12, 0, 0, tzinfo=datetime.UTC),
    "repeat_b": datetime.datetime(2025, 3, 5, 12, 0, 0, tzinfo=datetime.UTC),
}

CLIENT_MTU = 247
SERVER_MTU = 517
INTERVAL_MS = 15.0
INTERVAL_UNITS = 12
SUPERVISION_TIMEOUT_MS = 720
GAP_US = (2000, 3000)
PAUSE_BEFORE_CONNECT_US = 1_000_000
PAUSE_BEFORE_HR_US = 1_000_000
PAUSE_BEFORE_DISCONNECT_US = 400_000

VENDOR_SERVICE_UUID = "B1ED1001-5CA7-4E5A-9D1E-0000000000B1"
VENDOR_COMMAND_UUID = "B1ED1002-5CA7-4E5A-9D1E-0000000000B1"
VENDOR = VENDOR_COMMAND_UUID.lower()

FIRMWARE_A = "4.1.7"
FIRMWARE_B = "4.0.2"
BATTERY_A = 87
BATTERY_B = 64

# Pair 2: (method, payload); B differs in WRITE_DIFF_INDEX only.
WRITE_COMMANDS_A = [
    ("request", bytes.fromhex("f001")),
    ("command", bytes.fromhex("0201")),
    ("request", bytes.fromhex("013c")),
    ("command", bytes.fromhex("030010")),
    ("request", bytes.fromhex("04")),
]
WRITE_DIFF_INDEX = 2
WRITE_DIFF_B = bytes.fromhex("0178")
WRITE_COMMANDS_B = list(WRITE_COMMANDS_A)
WRITE_COMMANDS_B[WRITE_DIFF_INDEX] = ("request", WRITE_DIFF_B)

# Pair 3
ROLES_HR_BPM = [72, 73, 74, 75, 76]
ROLES_COMMANDS = [("request", bytes.fromhex("013c")), ("command", bytes.fromhex("0201"))]

# Pair 4
REPEAT_PAYLOAD = bytes.fromhex("01")
REPEAT_WRITES = {"a": 3, "b": 120}
REPEAT_READS = {"a": 2, "b": 42}
REPEAT_COMMIT = bytes.fromhex("04")

RESET_ENERGY_EXPENDED = bytes([hr.HR_CONTROL_POINT_RESET_ENERGY_EXPENDED])  # HR Control Point

# Known handles of the strap (checked on every run).
HANDLES = {
    "device_name": 3, "hrm": 16, "hrm_cccd": 17, "body_sensor_location": 19,
    "hr_control_point": 21, "battery_level": 24, "battery_cccd": 25,
    "manufacturer": 28, "model": 30, "serial": 32, "firmware": 34, "vendor_command": 37,
}

NAMES = {
    "2a29": "Manufacturer Name String", "2a24": "Model Number String",
    "2a25": "Serial Number String", "2a26": "Firmware Revision String",
    "2a19": "Battery Level", "2a37": "Heart Rate Measurement",
    "2a39": "Heart Rate Control Point", VENDOR: "vendor command (bledissect)",
}

OPCODE_NAMES = {
    0x01: "Error Response", 0x02: "Exchange MTU Request", 0x03: "Exchange MTU Response",
    0x04: "Find Information Request", 0x05: "Find Information Response",
    0x08: "Read By Type Request", 0x09: "Read By Type Response",
    0x0A: "Read Request", 0x0B: "Read Response",
    0x10: "Read By Group Type Request", 0x11: "Read By Group Type Response",
    0x12: "Write Request", 0x13: "Write Response", 0x52: "Write Command",
    0x1B: "Handle Value Notification",
}
REQUESTS = {0x02: 0x03, 0x04: 0x05, 0x08: 0x09, 0x0A: 0x0B, 0x10: 0x11, 0x12: 0x13}
RESPONSES = set(REQUESTS.values()) | {0x01}

# name -> (pair, variant, run, side)
FILES = {
    "value_a": ("value", "a", "value_a", "phone"),
    "value_b": ("value", "b", "value_b", "phone"),
    "write_a": ("write", "a", "write_a", "phone"),
    "write_b": ("write", "b", "write_b", "phone"),
    "roles_central": ("roles", None, "roles", "phone"),
    "roles_peripheral": ("roles", None, "roles", "strap"),
    "repeat_a": ("repeat", "a", "repeat_a", "phone"),
    "repeat_b": ("repeat", "b", "repeat_b", "phone"),
}
RUNS = {"value_a": ("value", "a"), "value_b": ("value", "b"), "write_a": ("write", "a"),
        "write_b": ("write", "b"), "roles": ("roles", None),
        "repeat_a": ("repeat", "a"), "repeat_b": ("repeat", "b")}


def uuid_text(uuid) -> str:
    return dp.uuid_text(uuid)


# -----------------------------------------------------------------------------
# Seeded values and the common clock
# -----------------------------------------------------------------------------
class Seeded:
    def __init__(self, seed: int) -> None:
        self.seed = seed
        ident = random.Random(f"{seed}:identity")
        tail = [ident.randrange(256) for _ in range(3)]
        self.phone_address = "C0:B1:ED:" + ":".join(f"{b:02X}" for b in tail)
        self.phone_handle = ident.randrange(0x0001, 0x0F00)
        self.strap_handle = ident.randrange(0x0001, 0x0F00)
        assert self.phone_handle != self.strap_handle
        self.timing_seed = f"{seed}:timing"


class Clock:
    """Counts the HCI packets of both devices, in snoop order; holds pauses."""

    def __init__(self) -> None:
        self.count = 0
        self.pauses: dict[int, int] = {}

    def pause(self, us: int) -> None:
        self.pauses[self.count] = self.pauses.get(self.count, 0) + us

    def times(self, seeded: Seeded, base: datetime.datetime) -> list[int]:
        rng = random.Random(seeded.timing_seed)
        times = []
        t = ls.btsnoop_time(base)
        for i in range(self.count):
            if i:
                t += rng.randint(*GAP_US)
            t += self.pauses.get(i, 0)
            times.append(t)
        return times


class ClockedSnooper(ls.GatedSnooper):
    """GatedSnooper (always on) that notes each record's place on the Clock."""

    def __init__(self, clock: Clock) -> None:
        super().__init__(enabled=True)
        self.clock = clock
        self.indices: list[int] = []

    def snoop(self, hci_packet: bytes, direction) -> None:
        self.indices.append(self.clock.count)
        self.clock.count += 1
        super().snoop(hci_packet, direction)


def retime(data: bytes, indices: list[int], times: list[int]) -> bytes:
    records = ls.parse_btsnoop(data)
    assert len(records) == len(indices)
    out = bytearray(data[:16])
    for (flags, _ts, packet), index in zip(records, indices):
        out += struct.pack(">IIIIQ", len(packet), len(packet), flags, 0, times[index]) + packet
    return bytes(out)


# -----------------------------------------------------------------------------
# The strap
# -----------------------------------------------------------------------------
def report_link_parameters(controller) -> None:
    """Make this (peripheral) controller's LE Connection Complete carry the
    interval / latency / timeout of the CONNECT_IND it received instead of
    Bumble's placeholders 10 / 0 / 10 (see the module docstring)."""
    original = controller.on_le_connect_ind
    seen = []

    def on_le_connect_ind(packet) -> None:
        send = controller.send_hci_packet

        def send_fixed(event) -> None:
            if isinstance(event, hci.HCI_LE_Connection_Complete_Event):
                assert (event.connection_interval, event.peripheral_latency,
                        event.supervision_timeout) == (10, 0, 10), event
                event = dataclasses.replace(
                    event, connection_interval=packet.interval,
                    peripheral_latency=packet.latency, supervision_timeout=packet.timeout)
                seen.append((packet.interval, packet.latency, packet.timeout))
            send(event)

        controller.send_hci_packet = send_fixed
        try:
            original(packet)
        finally:
            del controller.send_hci_packet

    controller.on_le_connect_ind = on_le_connect_ind
    controller.fixed_connection_parameters = seen


class ScenarioStrap(hr.Strap):
    """make_hr_session.Strap with a settable firmware revision and a vendor
    command characteristic (write + write without response)."""

    def __init__(self, stack, firmware: str, battery: int) -> None:
        super().__init__(stack)
        (fw,) = [c for c in self.dis.characteristics
                 if c.uuid == GATT_FIRMWARE_REVISION_STRING_CHARACTERISTIC]
        fw.value = firmware.encode()
        self.battery_level = battery
        self.commands: asyncio.Queue[bytes] = asyncio.Queue()
        self.command_char = Characteristic(
            VENDOR_COMMAND_UUID,
            Characteristic.Properties.WRITE | Characteristic.Properties.WRITE_WITHOUT_RESPONSE,
            Characteristic.Permissions.WRITEABLE,
            CharacteristicValue(write=lambda _c, v: self.commands.put_nowait(bytes(v))),
        )
        self.device.add_service(Service(VENDOR_SERVICE_UUID, [self.command_char]))


def strap_handles(strap: ScenarioStrap) -> dict:
    server = strap.device.gatt_server

    def value(service, uuid):
        return server.get_characteristic_attributes(service, uuid)[1].handle

    def cccd(service, uuid):
        return server.get_descriptor_attribute(
            service, uuid, GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR).handle

    dis = GATT_DEVICE_INFORMATION_SERVICE
    return {
        "device_name": value(GATT_GENERIC_ACCESS_SERVICE, GATT_DEVICE_NAME_CHARACTERISTIC),
        "hrm": value(GATT_HEART_RATE_SERVICE, GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC),
        "hrm_cccd": cccd(GATT_HEART_RATE_SERVICE, GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC),
        "body_sensor_location": value(GATT_HEART_RATE_SERVICE,
                                      GATT_BODY_SENSOR_LOCATION_CHARACTERISTIC),
        "hr_control_point": value(GATT_HEART_RATE_SERVICE,
                                  GATT_HEART_RATE_CONTROL_POINT_CHARACTERISTIC),
        "battery_level": value(GATT_BATTERY_SERVICE, GATT_BATTERY_LEVEL_CHARACTERISTIC),
        "battery_cccd": cccd(GATT_BATTERY_SERVICE, GATT_BATTERY_LEVEL_CHARACTERISTIC),
        "manufacturer": value(dis, GATT_MANUFACTURER_NAME_STRING_CHARACTERISTIC),
        "model": value(dis, GATT_MODEL_NUMBER_STRING_CHARACTERISTIC),
        "serial": value(dis, GATT_SERIAL_NUMBER_STRING_CHARACTERISTIC),
        "firmware": value(dis, GATT_FIRMWARE_REVISION_STRING_CHARACTERISTIC),
        "vendor_command": value(UUID(VENDOR_SERVICE_UUID), UUID(VENDOR_COMMAND_UUID)),
    }


# -----------------------------------------------------------------------------
# A run
# -----------------------------------------------------------------------------
class Run:
    """What the script did in one run (becomes the files' truth)."""

    def __init__(self, pair: str, variant: str | None, seeded: Seeded) -> None:
        self.pair = pair
        self.variant = variant
        self.seeded = seeded
        self.clock = Clock()
        self.phone_snooper = ClockedSnooper(self.clock)
        self.strap_snooper = ClockedSnooper(self.clock)
        self.operations: list[dict] = []
        self.expected_att: list[tuple] = []  # (direction, opcode, handle, value bytes)
        self.facts: dict = {}

    def op(self, op: str, **fields) -> None:
        entry = {"index": len(self.operations), "op": op}
        entry.update(fields)
        self.operations.append(entry)


async def run_session(run: Run) -> None:
    pair, variant, seeded = run.pair, run.variant, run.seeded
    firmware = FIRMWARE_B if (pair == "value" and variant == "b") else FIRMWARE_A
    battery = BATTERY_B if (pair == "value" and variant == "b") else BATTERY_A
    run.facts["firmware"] = firmware
    run.facts["battery"] = battery

    link = LocalLink()
    phone_stack = sc.Stack(link, hr.PHONE_NAME, seeded.phone_address, hr.PHONE_PUBLIC_ADDRESS,
                           None, peripheral=False)
    phone_stack.snooper = phone_stack.host.snooper = run.phone_snooper
    phone_stack.controller.allocate_connection_handle = lambda: seeded.phone_handle
    name, random_address, public_address = sc.STRAP
    strap_stack = sc.Stack(link, name, random_address, public_address, None,
                           gap_appearance=hr.APPEARANCE_HEART_RATE_BELT)
    strap_stack.snooper = strap_stack.host.snooper = run.strap_snooper
    strap_stack.controller.allocate_connection_handle = lambda: seeded.strap_handle
    report_link_parameters(strap_stack.controller)
    strap = ScenarioStrap(strap_stack, firmware, battery)
    handles = strap_handles(strap)
    assert handles == HANDLES, handles
    run.facts["strap_attributes"] = dp.strap_attributes(strap)

    await strap.device.power_on()
    phone = phone_stack.device
    await phone.power_on()
    await sc.settle()

    # --- connect by address ----------------------------------------------------
    loop = asyncio.get_running_loop()
    strap_connected = loop.create_future()
    strap.device.once(Device.EVENT_CONNECTION, strap_connected.set_result)
    run.clock.pause(PAUSE_BEFORE_CONNECT_US)
    await strap.device.start_advertising(
        advertising_interval_min=100.0, advertising_interval_max=100.0)
    preferences = ConnectionParametersPreferences(
        connection_interval_min=INTERVAL_MS, connection_interval_max=INTERVAL_MS,
        max_latency=0, supervision_timeout=SUPERVISION_TIMEOUT_MS)
    connection = await phone.connect(
        hci.Address(random_address, hci.Address.RANDOM_DEVICE_ADDRESS),
        connection_parameters_preferences={hci.HCI_LE_1M_PHY: preferences})
    strap_connection = await asyncio.wait_for(strap_connected, 5)
    assert connection.handle == seeded.phone_handle, connection.handle
    assert strap_connection.handle == seeded.strap_handle, strap_connection.handle
    assert strap_stack.controller.fixed_connection_parameters == [
        (INTERVAL_UNITS, 0, SUPERVISION_TIMEOUT_MS // 10)]
    for c in (connection, strap_connection):
        assert c.parameters.connection_interval == INTERVAL_MS, c.parameters
        assert c.parameters.supervision_timeout == SUPERVISION_TIMEOUT_MS, c.parameters
    run.op("connect")

    # --- MTU, discovery -------------------------------------------------------
    peer = Peer(connection)
    mtu = await peer.request_mtu(CLIENT_MTU)
    assert mtu == CLIENT_MTU
    run.op("exchange_mtu", client_rx_mtu=CLIENT_MTU, server_rx_mtu=SERVER_MTU, mtu=mtu)
    await peer.discover_services()
    run.op("discover_services")
    for service in peer.services:
        await service.discover_characteristics()
        run.op("discover_characteristics", service=uuid_text(service.uuid))
    for service in peer.services:
        for characteristic in service.characteristics:
            if characteristic.handle < characteristic.end_group_handle:
                await characteristic.discover_descriptors()
                run.op("discover_descriptors", characteristic=uuid_text(characteristic.uuid))
    discovered = sc.handle_map(peer)
    for key, uuid, cccd_key in (
        ("hrm", GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC, "hrm_cccd"),
        ("battery_level", GATT_BATTERY_LEVEL_CHARACTERISTIC, "battery_cccd"),
        ("firmware", GATT_FIRMWARE_REVISION_STRING_CHARACTERISTIC, None),
        ("hr_control_point", GATT_HEART_RATE_CONTROL_POINT_CHARACTERISTIC, None),
        ("vendor_command", UUID(VENDOR_COMMAND_UUID), None),
    ):
        expected = (HANDLES[key], HANDLES[cccd_key] if cccd_key else None)
        assert discovered[str(uuid)] == expected, (key, discovered[str(uuid)], expected)
    client = connection.gatt_client

    # --- helpers that do one ATT exchange and note it ---------------------------
    async def read(key: str, expected: bytes) -> None:
        handle = HANDLES[key]
        value = bytes(await client.read_value(handle))
        assert value == expected, (key, value, expected)
        uuid = characteristic_of(run.facts["strap_attributes"], handle)
        run.op("read", characteristic=uuid, handle=handle, value=value.hex())
        run.expected_att.append(("phone->strap", 0x0A, handle, b""))
        run.expected_att.append(("strap->phone", 0x0B, handle, value))

    async def write(key: str, method: str, value: bytes) -> None:
        handle = HANDLES[key]
        uuid = characteristic_of(run.facts["strap_attributes"], handle)
        await client.write_value(handle, value, with_response=(method == "request"))
        if key == "vendor_command":
            assert await asyncio.wait_for(strap.commands.get(), 5) == value
        elif key == "hr_control_point":
            await asyncio.wait_for(strap.reset_event.wait(), 5)
            strap.reset_event.clear()
        else:
            await sc.settle()
        entry = {"characteristic": uuid, "handle": handle, "value": value.hex()}
        if key.endswith("_cccd"):
            entry["descriptor"] = "2902"
        run.op("write_request" if method == "request" else "write_command", **entry)
        opcode = 0x12 if method == "request" else 0x52
        run.expected_att.append(("phone->strap", opcode, handle, value))
        if method == "request":
            run.expected_att.append(("strap->phone", 0x13, handle, b""))

    # --- the pair's own steps ---------------------------------------------------
    if pair == "value":
        await read("manufacturer", b"bledissect labs")
        await read("model", b"HRS-1")
        await read("serial", b"0001-2025")
        await read("firmware", firmware.encode())
        await read("battery_level", bytes([battery]))
    elif pair == "write":
        commands = WRITE_COMMANDS_B if variant == "b" else WRITE_COMMANDS_A
        for method, payload in commands:
            await write("vendor_command", method, payload)
        await write("hr_control_point", "request", RESET_ENERGY_EXPENDED)
        assert strap.energy_resets == 1
    elif pair == "roles":
        await read("manufacturer", b"bledissect labs")
        await read("firmware", firmware.encode())
        await read("battery_level", bytes([battery]))
        hr_queue: asyncio.Queue[bytes] = asyncio.Queue()
        client.notification_subscribers[HANDLES["hrm"]] = {lambda v: hr_queue.put_nowait(bytes(v))}
        await write("hrm_cccd", "request", b"\x01\x00")
        for bpm in ROLES_HR_BPM:
            value = sc.hrm(bpm)
            await sc.settle()
            run.clock.pause(PAUSE_BEFORE_HR_US)
            await strap.notify_hr(value)
            assert await asyncio.wait_for(hr_queue.get(), 5) == value
            run.op("notify", characteristic="2a37", handle=HANDLES["hrm"], value=value.hex())
            run.expected_att.append(("strap->phone", 0x1B, HANDLES["hrm"], value))
        await sc.settle()
        for method, payload in ROLES_COMMANDS:
            await write("vendor_command", method, payload)
        await write("hr_control_point", "request", RESET_ENERGY_EXPENDED)
        await write("hrm_cccd", "request", b"\x00\x00")
    elif pair == "repeat":
        await read("firmware", firmware.encode())
        for _ in range(REPEAT_WRITES[variant]):
            await write("vendor_command", "command", REPEAT_PAYLOAD)
        for _ in range(REPEAT_READS[variant]):
            await read("battery_level", bytes([battery]))
        await write("vendor_command", "request", REPEAT_COMMIT)
    else:
        raise AssertionError(pair)

    # --- the phone disconnects -------------------------------------------------
    await sc.settle()
    run.clock.pause(PAUSE_BEFORE_DISCONNECT_US)
    strap_done = loop.create_future()
    strap_connection.once(strap_connection.EVENT_DISCONNECTION, strap_done.set_result)
    await connection.disconnect()
    assert await asyncio.wait_for(strap_done, 5) == 0x13
    run.op("disconnect", initiator="phone", command_reason=0x13)
    await sc.settle()
    assert strap.commands.empty()


def characteristic_of(attributes: list[list], handle: int) -> str | None:
    """UUID of the characteristic whose value or descriptor ``handle`` is."""
    owner = None
    for h, kind, uuid, _end in attributes:
        if kind in ("service", "characteristic"):
            owner = None
        if kind == "value":
            owner = uuid
        if h == handle:
            return owner if kind in ("value", "descriptor") else None
    return None


# -----------------------------------------------------------------------------
# Reading a file back
# -----------------------------------------------------------------------------
class Parsed:
    """Facts decoded from a written file (own parser, with L2CAP reassembly)."""

    def __init__(self, path: str, side: str, attributes: list[list]) -> None:
        with open(path, "rb") as f:
            self.records = ls.parse_btsnoop(f.read())
        self.side = side
        self.kinds = {"cmd": 0, "evt": 0, "nocp": 0, "acl_tx": 0, "acl_rx": 0,
                      "acl_continuation": 0}
        self.commands: list[int] = []
        self.random_addresses: list[str] = []
        self.create_connection = []
        self.connection_complete = []
        self.disconnect_commands = []
        self.disconnection_complete = []
        self.acl_handles = set()
        self.att: list[dict] = []
        kinds_of = {row[0]: row for row in attributes}
        partial: dict[tuple[int, int], tuple[int, bytearray]] = {}
        t0 = self.records[0][1]
        for number, (flags, ts, packet) in enumerate(self.records, start=1):
            if flags == 2:
                self.kinds["cmd"] += 1
                opcode = struct.unpack("<H", packet[1:3])[0]
                params = packet[4:]
                self.commands.append(opcode)
                if opcode == 0x2005:
                    self.random_addresses.append(":".join(f"{b:02X}" for b in params[5::-1]))
                elif opcode == 0x200D:
                    self.create_connection.append(struct.unpack("<HHBB6sBHHHHHH", params))
                elif opcode == 0x0406:
                    self.disconnect_commands.append(struct.unpack("<HB", params))
            elif flags == 3:
                self.kinds["evt"] += 1
                code = packet[1]
                if code == 0x13:
                    self.kinds["nocp"] += 1
                elif code == 0x05:
                    status, handle, reason = struct.unpack("<BHB", packet[3:7])
                    self.disconnection_complete.append((number, status, handle, reason))
                elif code == 0x3E and packet[3] == 0x01:
                    status, handle, role, peer_type = struct.unpack("<BHBB", packet[4:9])
                    peer = ":".join(f"{b:02X}" for b in packet[9:15][::-1])
                    interval, latency, timeout, sca = struct.unpack("<HHHB", packet[15:22])
                    self.connection_complete.append({
                        "frame": number, "status": status, "handle": handle, "role": role,
                        "peer_address_type": peer_type, "peer": peer, "interval": interval,
                        "latency": latency, "timeout": timeout, "central_clock_accuracy": sca})
            else:
                assert flags in (0, 1) and packet[0] == 0x02, (number, flags)
                self.kinds["acl_tx" if flags == 0 else "acl_rx"] += 1
                word, length = struct.unpack("<HH", packet[1:5])
                handle, pb = word & 0x0FFF, (word >> 12) & 3
                self.acl_handles.add(handle)
                data = packet[5:]
                assert len(data) == length
                key = (flags, handle)
                if pb == 1:
                    self.kinds["acl_continuation"] += 1
                    first, buffer = partial[key]
                    buffer += data
                else:
                    assert key not in partial, (number, "unfinished PDU")
                    first, buffer = number, bytearray(data)
                    partial[key] = (first, buffer)
                l2cap_length, cid = struct.unpack("<HH", buffer[:4])
                if len(buffer) < 4 + l2cap_length:
                    continue
                assert len(buffer) == 4 + l2cap_length
                del partial[key]
                assert cid == 0x0004, (number, cid)
                pdu = bytes(buffer[4:])
                sent = flags == 0
                from_phone = sent == (side == "phone")
                self.att.append({
                    "frame": number, "first_fragment_frame": first, "ts": ts,
                    "t_s": (ts - t0) / 1e6,
                    "direction": "phone->strap" if from_phone else "strap->phone",
                    "logged": "sent" if sent else "received",
                    "pdu": pdu,
                })
        assert not partial
        self._annotate(kinds_of, attributes)

    def _annotate(self, kinds_of: dict, attributes: list[list]) -> None:
        outstanding: dict[str, dict] = {}
        for entry in self.att:
            pdu = entry["pdu"]
            op = pdu[0]
            assert op in OPCODE_NAMES, pdu.hex()
            entry["opcode"] = op
            handle = None
            value = None
            if op in (0x0A, 0x12, 0x52, 0x1B):
                handle = struct.unpack("<H", pdu[1:3])[0]
                value = pdu[3:] if op != 0x0A else None
            elif op in (0x04, 0x08, 0x10):
                start, end = struct.unpack("<HH", pdu[1:5])
                handle = start
                entry["range"] = [start, end]
            elif op == 0x01:
                handle = struct.unpack("<H", pdu[2:4])[0]
                entry["request_opcode"] = pdu[1]
                entry["error_code"] = pdu[4]
            if op in REQUESTS:
                assert entry["direction"] == "phone->strap"
                assert entry["direction"] not in outstanding
                outstanding[entry["direction"]] = entry
            elif op in RESPONSES:
                assert entry["direction"] == "strap->phone"
                request = outstanding.pop("phone->strap")
                assert op == 0x01 or REQUESTS[request["opcode"]] == op, (request, entry)
                entry["request_frame"] = request["frame"]
                if op == 0x01:
                    assert entry["request_opcode"] == request["opcode"]
                if op in (0x0B, 0x13):
                    handle = struct.unpack("<H", request["pdu"][1:3])[0]
                if op == 0x0B:
                    value = pdu[1:]
            entry["handle"] = handle
            characteristic = None
            if handle is not None and op not in (0x04, 0x08, 0x10) and not (
                    op == 0x01 and entry["request_opcode"] in (0x04, 0x08, 0x10)):
                characteristic = characteristic_of(attributes, handle)
                if kinds_of[handle][1] == "descriptor":
                    entry["descriptor"] = kinds_of[handle][2]
            entry["characteristic"] = characteristic
            entry["value"] = value
        assert not outstanding

    def att_truth(self) -> list[dict]:
        rows = []
        for e in self.att:
            row = {"frame": e["frame"]}
            if e["first_fragment_frame"] != e["frame"]:
                row["first_fragment_frame"] = e["first_fragment_frame"]
            row.update({
                "t_s": round(e["t_s"], 6), "direction": e["direction"], "logged": e["logged"],
                "opcode": f"0x{e['opcode']:02x}", "opcode_name": OPCODE_NAMES[e["opcode"]],
                "handle": e["handle"],
            })
            if "range" in e:
                row["range"] = e["range"]
            row["characteristic"] = e["characteristic"]
            if "descriptor" in e:
                row["descriptor"] = e["descriptor"]
            row["value"] = None if e["value"] is None else e["value"].hex()
            if "error_code" in e:
                row["error_code"] = f"0x{e['error_code']:02x}"
            if "request_frame" in e:
                row["request_frame"] = e["request_frame"]
            row["pdu"] = e["pdu"].hex()
            rows.append(row)
        return rows

    def value_ops(self) -> list[tuple]:
        """(direction, opcode, handle, value) of every non-discovery value PDU."""
        out = []
        for e in self.att:
            if e["opcode"] in (0x0A, 0x0B, 0x12, 0x13, 0x52, 0x1B):
                value = b"" if e["opcode"] in (0x0A, 0x13) else e["value"]
                out.append((e["direction"], e["opcode"], e["handle"], value))
        return out


# -----------------------------------------------------------------------------
# Verification
# -----------------------------------------------------------------------------
def verify(name: str, side: str, run: Run, parsed: Parsed) -> None:
    seeded = run.seeded
    handle = seeded.phone_handle if side == "phone" else seeded.strap_handle
    assert parsed.acl_handles == {handle}, parsed.acl_handles
    (cc,) = parsed.connection_complete
    expected_cc = {"status": 0, "handle": handle, "interval": INTERVAL_UNITS, "latency": 0,
                   "timeout": SUPERVISION_TIMEOUT_MS // 10}
    assert {k: cc[k] for k in expected_cc} == expected_cc, cc
    if side == "phone":
        assert parsed.random_addresses == [seeded.phone_address], parsed.random_addresses
        assert cc["role"] == 0 and cc["peer"] == hr.STRAP_RANDOM_ADDRESS
        assert cc["central_clock_accuracy"] == 0
        (create,) = parsed.create_connection
        peer = ":".join(f"{b:02X}" for b in create[4][::-1])
        assert peer == hr.STRAP_RANDOM_ADDRESS and create[3] == 1 and create[5] == 1, create
        assert create[6] == create[7] == INTERVAL_UNITS and create[8] == 0, create
        assert create[9] == SUPERVISION_TIMEOUT_MS // 10, create
        assert parsed.disconnect_commands == [(handle, 0x13)]
        assert 0x200A not in parsed.commands  # no advertising on the phone
    else:
        assert parsed.random_addresses == [hr.STRAP_RANDOM_ADDRESS], parsed.random_addresses
        assert cc["role"] == 1 and cc["peer"] == seeded.phone_address
        assert parsed.create_connection == [] and parsed.disconnect_commands == []
        for opcode in (0x2006, 0x2008, 0x2009, 0x200A):  # legacy advertising commands
            assert opcode in parsed.commands, hex(opcode)
    assert [d[1:] for d in parsed.disconnection_complete] == [(0, handle, 0x13)]
    for opcode in (0x2013, 0x2032, 0x2022, 0x2019, 0x2016):  # update/PHY/DLE/encrypt/features
        assert opcode not in parsed.commands, hex(opcode)
    # every value PDU == what the script did, in order
    assert parsed.value_ops() == run.expected_att, name
    # MTU exchange
    mtu = [e["pdu"] for e in parsed.att if e["opcode"] in (0x02, 0x03)]
    assert mtu == [bytes([0x02]) + struct.pack("<H", CLIENT_MTU),
                   bytes([0x03]) + struct.pack("<H", SERVER_MTU)], mtu
    # only Attribute Not Found errors, each ending a discovery procedure
    for e in parsed.att:
        if e["opcode"] == 0x01:
            assert e["error_code"] == 0x0A and e["request_opcode"] in (0x04, 0x08, 0x10), e
    # the discovery requests are what Bumble's procedures send for this table
    starts = [e["range"][0] for e in parsed.att if e["opcode"] == 0x10]
    assert starts == [1, 35, 38], starts
    # timestamps strictly increasing
    times = [ts for _f, ts, _p in parsed.records]
    assert times == sorted(times) and len(set(times)) == len(times)


STRING_FIELDS = {  # tshark field -> characteristic whose Read Response it decodes
    "btatt.manufacturer_string": "2a29", "btatt.model_number_string": "2a24",
    "btatt.serial_number_string": "2a25", "btatt.firmware_revision_string": "2a26",
}


def tshark_check(path: str, truth: dict) -> str:
    if not shutil.which("tshark"):
        return "tshark not installed"

    def fields(display_filter: str, *names: str) -> list[list[str]]:
        out = subprocess.run(
            ["tshark", "-r", path, "-Y", display_filter, "-T", "fields", "-E", "separator=|",
             *sum((["-e", n] for n in names), [])],
            check=True, capture_output=True, text=True).stdout
        return [line.split("|") for line in out.splitlines() if line]

    att_rows = truth["att"]
    rows = fields("btatt", "frame.number", "btatt.opcode", "btatt.handle", "btatt.value",
                  "btatt.battery_level", "btatt.heart_rate_control_point",
                  "btatt.heart_rate_measurement.value.8", *STRING_FIELDS)
    assert len(rows) == len(att_rows), (len(rows), len(att_rows))
    values = 0
    for (frame, opcode, handles, value, battery, control, bpm, *strings), row in zip(
            rows, att_rows):
        assert int(frame) == row["frame"], (frame, row)
        assert int(opcode, 0) == int(row["opcode"], 0), (frame, opcode, row)
        if handles and "," not in handles and row["opcode"] in (
                "0x0a", "0x0b", "0x12", "0x13", "0x52", "0x1b"):
            assert int(handles, 0) == row["handle"], (frame, handles, row)
        if row["opcode"] not in ("0x0b", "0x12", "0x52", "0x1b"):
            continue
        seen = [v for v in (value, battery, control, bpm, *strings) if v]
        assert len(seen) <= 1, (frame, seen)
        if value:
            assert value.replace(":", "") == row["value"], (frame, value, row)
        elif battery:
            assert row["characteristic"] == "2a19" and int(battery, 0) == int(row["value"], 16)
        elif control:
            assert row["characteristic"] == "2a39" and int(control, 0) == int(row["value"], 16)
        elif bpm:
            assert row["characteristic"] == "2a37" and row["value"] == f"06{int(bpm):02x}"
        else:
            for name, text in zip(STRING_FIELDS, strings):
                if text:
                    assert row["characteristic"] == STRING_FIELDS[name], (frame, name, row)
                    assert text.encode().hex() == row["value"], (frame, text, row)
        values += bool(seen)
    cc = truth["connection"]
    (complete,) = fields("bthci_evt.le_meta_subevent == 0x01", "frame.number",
                         "bthci_evt.connection_handle", "bthci_evt.role",
                         "bthci_evt.le_con_interval", "bthci_evt.le_con_latency",
                         "bthci_evt.le_supv_timeout")
    assert [int(x, 0) for x in complete] == [
        cc["le_connection_complete_frame"], truth["connection_handle"],
        0 if cc["role"] == "central" else 1, cc["interval_units"], cc["latency"],
        cc["supervision_timeout_units"]], complete
    disconnect = truth["disconnect"]
    (event,) = fields("bthci_evt.code == 0x05", "frame.number", "bthci_evt.reason")
    assert [int(x, 0) for x in event] == [disconnect["disconnection_complete_frame"],
                                          disconnect["event_reason"]], event
    commands = fields("bthci_cmd.opcode == 0x0406", "bthci_cmd.reason")
    assert [int(c[0], 0) for c in commands] == (
        [disconnect["command_reason"]] if disconnect["hci_disconnect_command"] else []), commands
    return (f"tshark: {len(rows)} ATT frames agree (frame, opcode, handle, {values} values), "
            f"LE Connection Complete {complete[1:]}, Disconnection Complete {event}")


# -----------------------------------------------------------------------------
# Truth
# -----------------------------------------------------------------------------
def file_truth(name: str, side: str, run: Run, parsed: Parsed, size: int) -> dict:
    seeded = run.seeded
    (cc,) = parsed.connection_complete
    handle = cc["handle"]
    (_frame, _status, _h, reason) = parsed.disconnection_complete[0]
    first, last = parsed.records[0][1], parsed.records[-1][1]
    return {
        "seed": seeded.seed,
        "base_time": BASE_TIMES[FILES[name][2]].isoformat().replace("+00:00", "Z"),
        "recorded_on": side,
        "records": len(parsed.records),
        "record_kinds": parsed.kinds,
        "bytes": size,
        "duration_s": round((last - first) / 1e6, 6),
        "phone": {"random_address": seeded.phone_address,
                  "public_address": hr.PHONE_PUBLIC_ADDRESS,
                  "connection_handle": seeded.phone_handle},
        "strap": {"name": hr.STRAP_NAME, "address": hr.STRAP_RANDOM_ADDRESS,
                  "address_type": "random", "public_address": hr.STRAP_PUBLIC_ADDRESS,
                  "connection_handle": seeded.strap_handle,
                  "firmware_revision": run.facts["firmware"],
                  "battery_level": run.facts["battery"]},
        "connection_handle": handle,
        "connection_handle_hex": f"0x{handle:04X}",
        "connection": {
            "le_connection_complete_frame": cc["frame"],
            "role": "central" if cc["role"] == 0 else "peripheral",
            "peer_address": cc["peer"],
            "interval_units": cc["interval"], "interval_ms": cc["interval"] * 1.25,
            "latency": cc["latency"],
            "supervision_timeout_units": cc["timeout"],
            "supervision_timeout_ms": cc["timeout"] * 10,
            "central_clock_accuracy": cc["central_clock_accuracy"],
            "mtu": {"client_rx_mtu": CLIENT_MTU, "server_rx_mtu": SERVER_MTU, "mtu": CLIENT_MTU},
            "encryption": False,
        },
        "disconnect": {
            "initiator": "phone",
            "logged_as": "local" if side == "phone" else "remote",
            "hci_disconnect_command": side == "phone",
            "command_reason": 0x13 if side == "phone" else None,
            "event_reason": reason,
            "event_reason_name": dp.REASON_NAMES[reason],
            "disconnection_complete_frame": parsed.disconnection_complete[0][0],
        },
        "operations": run.operations,
        "att": parsed.att_truth(),
    }


def frames_of(rows: list[dict], opcode: str, handle: int, value: str | None = None) -> list[int]:
    return [r["frame"] for r in rows if r["opcode"] == opcode and r["handle"] == handle
            and (value is None or r["value"] == value)]


def pdu_key(row: dict) -> tuple:
    return (row["direction"], row["pdu"])


def value_pair(a: dict, b: dict) -> dict:
    ra, rb = a["att"], b["att"]
    assert len(ra) == len(rb)
    differing = [i for i, (x, y) in enumerate(zip(ra, rb)) if pdu_key(x) != pdu_key(y)]
    assert all(ra[i]["frame"] == rb[i]["frame"] and ra[i]["t_s"] == rb[i]["t_s"]
               for i in range(len(ra)))
    fw_a = frames_of(ra, "0x0b", HANDLES["firmware"])
    fw_b = frames_of(rb, "0x0b", HANDLES["firmware"])
    bat_a = frames_of(ra, "0x0b", HANDLES["battery_level"])
    bat_b = frames_of(rb, "0x0b", HANDLES["battery_level"])
    assert len(fw_a) == len(fw_b) == len(bat_a) == len(bat_b) == 1
    assert [ra[i]["frame"] for i in differing] == [fw_a[0], bat_a[0]], differing
    by_frame_a = {r["frame"]: r for r in ra}
    by_frame_b = {r["frame"]: r for r in rb}
    assert by_frame_a[fw_a[0]]["value"] == FIRMWARE_A.encode().hex()
    assert by_frame_b[fw_b[0]]["value"] == FIRMWARE_B.encode().hex()
    assert by_frame_a[bat_a[0]]["value"] == f"{BATTERY_A:02x}"
    assert by_frame_b[bat_b[0]]["value"] == f"{BATTERY_B:02x}"
    return {
        "name": "value", "a": "value_a.btsnoop", "b": "value_b.btsnoop",
        "expected": "different",
        "differences": [
            {"kind": "read_value", "characteristic": "2a26", "name": NAMES["2a26"],
             "service": "180a", "handle": HANDLES["firmware"],
             "a": FIRMWARE_A, "b": FIRMWARE_B,
             "a_hex": FIRMWARE_A.encode().hex(), "b_hex": FIRMWARE_B.encode().hex(),
             "first_frame_a": fw_a[0], "first_frame_b": fw_b[0],
             "request_frame_a": by_frame_a[fw_a[0]]["request_frame"],
             "request_frame_b": by_frame_b[fw_b[0]]["request_frame"]},
            {"kind": "read_value", "characteristic": "2a19", "name": NAMES["2a19"],
             "service": "180f", "handle": HANDLES["battery_level"],
             "a": BATTERY_A, "b": BATTERY_B,
             "a_hex": f"{BATTERY_A:02x}", "b_hex": f"{BATTERY_B:02x}",
             "first_frame_a": bat_a[0], "first_frame_b": bat_b[0],
             "request_frame_a": by_frame_a[bat_a[0]]["request_frame"],
             "request_frame_b": by_frame_b[bat_b[0]]["request_frame"]},
        ],
        "same": "everything else: record count, every other record's bytes, timestamps "
                "relative to the first record, phone address and connection handle",
    }


def write_pair(a: dict, b: dict) -> dict:
    ra, rb = a["att"], b["att"]
    assert len(ra) == len(rb)
    differing = [i for i, (x, y) in enumerate(zip(ra, rb)) if pdu_key(x) != pdu_key(y)]
    assert len(differing) == 1, differing
    (i,) = differing
    assert ra[i]["frame"] == rb[i]["frame"]
    assert all(x["frame"] == y["frame"] and x["t_s"] == y["t_s"] for x, y in zip(ra, rb))
    writes_a = [r for r in ra if r["opcode"] in ("0x12", "0x52")
                and r["handle"] == HANDLES["vendor_command"]]
    writes_b = [r for r in rb if r["opcode"] in ("0x12", "0x52")
                and r["handle"] == HANDLES["vendor_command"]]
    assert [(r["opcode"], r["value"]) for r in writes_a] == [
        ("0x12" if m == "request" else "0x52", p.hex()) for m, p in WRITE_COMMANDS_A]
    assert [(r["opcode"], r["value"]) for r in writes_b] == [
        ("0x12" if m == "request" else "0x52", p.hex()) for m, p in WRITE_COMMANDS_B]
    assert writes_a[WRITE_DIFF_INDEX]["frame"] == ra[i]["frame"]
    cp_a = frames_of(ra, "0x12", HANDLES["hr_control_point"], "01")
    cp_b = frames_of(rb, "0x12", HANDLES["hr_control_point"], "01")
    assert len(cp_a) == len(cp_b) == 1
    response = next(r for r in ra if r.get("request_frame") == ra[i]["frame"])
    return {
        "name": "write", "a": "write_a.btsnoop", "b": "write_b.btsnoop",
        "expected": "different",
        "differences": [
            {"kind": "write_payload", "characteristic": VENDOR, "name": NAMES[VENDOR],
             "service": VENDOR_SERVICE_UUID.lower(), "handle": HANDLES["vendor_command"],
             "opcode": "0x12", "opcode_name": "Write Request",
             "a": WRITE_COMMANDS_A[WRITE_DIFF_INDEX][1].hex(), "b": WRITE_DIFF_B.hex(),
             "command_index": WRITE_DIFF_INDEX, "commands": len(WRITE_COMMANDS_A),
             "first_frame_a": ra[i]["frame"], "first_frame_b": rb[i]["frame"],
             "write_response_frame_a": response["frame"]},
        ],
        "commands_a": [{"frame": r["frame"], "opcode": r["opcode"], "value": r["value"]}
                       for r in writes_a],
        "commands_b": [{"frame": r["frame"], "opcode": r["opcode"], "value": r["value"]}
                       for r in writes_b],
        "same": {"hr_control_point_write": {"characteristic": "2a39",
                                            "handle": HANDLES["hr_control_point"],
                                            "value": "01", "frame_a": cp_a[0],
                                            "frame_b": cp_b[0]},
                 "rest": "every other record's bytes, record count, relative timestamps"},
    }


def repeat_pair(a: dict, b: dict) -> dict:
    ra, rb = a["att"], b["att"]
    h_cmd, h_bat = HANDLES["vendor_command"], HANDLES["battery_level"]
    writes_a = [r for r in ra if r["opcode"] == "0x52" and r["handle"] == h_cmd]
    writes_b = [r for r in rb if r["opcode"] == "0x52" and r["handle"] == h_cmd]
    reads_a = [r for r in ra if r["opcode"] == "0x0a" and r["handle"] == h_bat]
    reads_b = [r for r in rb if r["opcode"] == "0x0a" and r["handle"] == h_bat]
    assert len(writes_a) == REPEAT_WRITES["a"] and len(writes_b) == REPEAT_WRITES["b"]
    assert len(reads_a) == REPEAT_READS["a"] and len(reads_b) == REPEAT_READS["b"]
    assert {r["value"] for r in writes_a + writes_b} == {REPEAT_PAYLOAD.hex()}
    responses = [r for r in ra + rb if r["opcode"] == "0x0b" and r["handle"] == h_bat]
    assert {r["value"] for r in responses} == {f"{BATTERY_A:02x}"} and len(responses) == 44
    # B without its extra repeats is A (ATT PDUs in order)
    extra_writes = {r["frame"] for r in writes_b[REPEAT_WRITES["a"]:]}
    extra_reads = {r["frame"] for r in reads_b[REPEAT_READS["a"]:]}
    extra_reads |= {r["frame"] for r in rb if r.get("request_frame") in extra_reads}
    trimmed = [pdu_key(r) for r in rb if r["frame"] not in extra_writes | extra_reads]
    assert trimmed == [pdu_key(r) for r in ra]
    # A's PDU right after its last repeat (where B goes on repeating)
    index_a = {r["frame"]: i for i, r in enumerate(ra)}
    after_writes_a = ra[index_a[writes_a[-1]["frame"]] + 1]
    last_read_response_a = next(r for r in ra if r.get("request_frame") == reads_a[-1]["frame"])
    after_reads_a = ra[index_a[last_read_response_a["frame"]] + 1]
    assert after_writes_a["opcode"] == "0x0a" and after_writes_a["handle"] == h_bat
    assert after_reads_a["opcode"] == "0x12" and after_reads_a["value"] == REPEAT_COMMIT.hex()
    first_extra_read_b = reads_b[REPEAT_READS["a"]]
    return {
        "name": "repeat", "a": "repeat_a.btsnoop", "b": "repeat_b.btsnoop",
        "expected": "different",
        "differences": [
            {"kind": "repeated_write", "characteristic": VENDOR, "name": NAMES[VENDOR],
             "handle": h_cmd, "opcode": "0x52", "opcode_name": "Write Command",
             "a": REPEAT_PAYLOAD.hex(), "b": REPEAT_PAYLOAD.hex(),
             "count_a": REPEAT_WRITES["a"], "count_b": REPEAT_WRITES["b"],
             "extra_in_b": REPEAT_WRITES["b"] - REPEAT_WRITES["a"],
             "first_frame_a": after_writes_a["frame"],
             "first_frame_a_is": "A's first ATT PDU after its last repeat (Read Request 24)",
             "first_frame_b": writes_b[REPEAT_WRITES["a"]]["frame"],
             "frames_a": [r["frame"] for r in writes_a],
             "last_frame_a": writes_a[-1]["frame"],
             "last_frame_b": writes_b[-1]["frame"]},
            {"kind": "repeated_read", "characteristic": "2a19", "name": NAMES["2a19"],
             "handle": h_bat, "opcode": "0x0a", "opcode_name": "Read Request",
             "a": BATTERY_A, "b": BATTERY_A, "a_hex": f"{BATTERY_A:02x}",
             "b_hex": f"{BATTERY_A:02x}",
             "count_a": REPEAT_READS["a"], "count_b": REPEAT_READS["b"],
             "extra_in_b": REPEAT_READS["b"] - REPEAT_READS["a"],
             "first_frame_a": after_reads_a["frame"],
             "first_frame_a_is": "A's first ATT PDU after its last repeat (Write Request 04)",
             "first_frame_b": first_extra_read_b["frame"],
             "first_response_frame_b": next(r["frame"] for r in rb if r.get("request_frame")
                                            == first_extra_read_b["frame"]),
             "frames_a": [r["frame"] for r in reads_a],
             "last_frame_a": reads_a[-1]["frame"],
             "last_response_frame_a": last_read_response_a["frame"],
             "last_frame_b": reads_b[-1]["frame"]},
        ],
        "same": "the firmware read before, the commit Write Request 04 after, the rest of the "
                "session; B minus its extra Write Commands and Read Request/Response pairs has "
                "A's ATT PDUs in A's order",
    }


def roles_pair(central: dict, peripheral: dict, pc: Parsed, pp: Parsed) -> dict:
    rc, rp = central["att"], peripheral["att"]
    assert [pdu_key(r) for r in rc] == [pdu_key(r) for r in rp]
    assert all(x["logged"] != y["logged"] for x, y in zip(rc, rp))
    assert all(x["handle"] == y["handle"] and x["characteristic"] == y["characteristic"]
               for x, y in zip(rc, rp))
    cc_c, cc_p = central["connection"], peripheral["connection"]
    for key in ("interval_units", "latency", "supervision_timeout_units"):
        assert cc_c[key] == cc_p[key], key
    fragmented = [r["frame"] for r in rp if "first_fragment_frame" in r]
    # the same clock: a PDU shows up in the receiver's log after the sender's
    for x, y in zip(pc.att, pp.att):
        sender, receiver = (x, y) if x["logged"] == "sent" else (y, x)
        assert receiver["ts"] > sender["ts"], (x, y)
    offset = (pc.records[0][1] - pp.records[0][1]) / 1e6
    return {
        "name": "roles", "a": "roles_central.btsnoop", "b": "roles_peripheral.btsnoop",
        "expected": "equivalent",
        "differences": [],
        "att_frames": [[x["frame"], y["frame"], x["opcode"]] for x, y in zip(rc, rp)],
        "att_frames_note": "[frame in roles_central, frame in roles_peripheral, opcode] for "
                           "each ATT PDU; the PDUs are byte-identical, in the same order",
        "role_variations": {
            "connection_handle": [central["connection_handle_hex"],
                                  peripheral["connection_handle_hex"]],
            "role": [cc_c["role"], cc_p["role"]],
            "peer_address": [cc_c["peer_address"], cc_p["peer_address"]],
            "le_connection_complete_frame": [cc_c["le_connection_complete_frame"],
                                             cc_p["le_connection_complete_frame"]],
            "connection_parameters": {
                "interval_units": cc_c["interval_units"], "latency": cc_c["latency"],
                "supervision_timeout_units": cc_c["supervision_timeout_units"],
                "central_clock_accuracy": [cc_c["central_clock_accuracy"],
                                           cc_p["central_clock_accuracy"]],
                "note": "equal at both ends: the strap's controller reports the CONNECT_IND's "
                        "parameters (instance override of Bumble's on_le_connect_ind, whose "
                        "placeholders are 10 / 0 / 10)"},
            "disconnect": {
                "central": {"hci_disconnect_command": True, "command_reason": "0x13",
                            "event_reason": "0x13", "logged_as": "local",
                            "frame": central["disconnect"]["disconnection_complete_frame"]},
                "peripheral": {"hci_disconnect_command": False, "event_reason": "0x13",
                               "logged_as": "remote",
                               "frame": peripheral["disconnect"]["disconnection_complete_frame"]},
            },
            "commands_only_in_central": ["0x200d LE Create Connection", "0x0406 Disconnect"],
            "commands_only_in_peripheral": [
                "0x2006 LE Set Advertising Parameters", "0x2008 LE Set Advertising Data",
                "0x2009 LE Set Scan Response Data", "0x200a LE Set Advertising Enable"],
            "directions": "every ATT PDU is 'sent' in one log and 'received' in the other",
            "acl_fragmented_in_peripheral": fragmented,
            "acl_fragmented_note": "the strap's host sends these PDUs as 27-byte ACL fragments "
                                   "(frame = last fragment); the phone's log has each whole",
            "records": [central["records"], peripheral["records"]],
            "record_kinds": [central["record_kinds"], peripheral["record_kinds"]],
            "first_record_offset_s": round(offset, 6),
            "clock": "both logs on one clock; the strap's log starts earlier (it powers on "
                     "first), so t_s of the same PDU differs between the files",
        },
    }


def compact_json(obj, indent: int = 0) -> str:
    """Pretty JSON; short containers and flat dicts (ATT rows) on one line."""
    flat = json.dumps(obj)
    flat_dict = isinstance(obj, dict) and all(
        not isinstance(v, (dict, list)) or (isinstance(v, list) and len(json.dumps(v)) < 40)
        for v in obj.values())
    if len(flat) + indent <= 100 or not isinstance(obj, (dict, list)) or not obj or flat_dict:
        return flat
    pad = " " * (indent + 2)
    if isinstance(obj, dict):
        items = [f"{pad}{json.dumps(k)}: {compact_json(v, indent + 2)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + compact_json(v, indent + 2) for v in obj]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


# -----------------------------------------------------------------------------
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    default_out = os.path.normpath(os.path.join(here, "..", "..", "captures", "diff"))
    parser.add_argument("--out-dir", default=default_out)
    parser.add_argument("--no-tshark", action="store_true")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.ERROR)
    os.makedirs(args.out_dir, exist_ok=True)

    files: dict[str, dict] = {}
    parsed_files: dict[str, Parsed] = {}
    attributes = None
    for run_name, (pair, variant) in RUNS.items():
        start = time.monotonic()
        seeded = Seeded(SEEDS[pair])
        run = Run(pair, variant, seeded)
        asyncio.run(run_session(run))
        times = run.clock.times(seeded, BASE_TIMES[run_name])
        if attributes is None:
            attributes = run.facts["strap_attributes"]
        assert run.facts["strap_attributes"] == attributes
        for name, (_p, _v, r, side) in FILES.items():
            if r != run_name:
                continue
            snooper = run.phone_snooper if side == "phone" else run.strap_snooper
            data = retime(snooper.buffer.getvalue(), snooper.indices, times)
            path = os.path.join(args.out_dir, f"{name}.btsnoop")
            with open(path, "wb") as f:
                f.write(data)
            size = os.path.getsize(path)
            assert size < 64 * 1024, (path, size)
            parsed = Parsed(path, side, attributes)
            verify(name, side, run, parsed)
            truth = file_truth(name, side, run, parsed, size)
            note = "" if args.no_tshark else "; " + tshark_check(path, truth)
            files[f"{name}.btsnoop"] = truth
            parsed_files[name] = parsed
            print(f"[{name}] {time.monotonic() - start:.1f} s: {path}: {size} bytes, "
                  f"{len(parsed.records)} records {parsed.kinds}, {len(parsed.att)} ATT PDUs, "
                  f"handle 0x{truth['connection_handle']:04X}{note}")

    # whole-record checks between A and B
    for pair in ("value", "write"):
        ra = parsed_files[f"{pair}_a"].records
        rb = parsed_files[f"{pair}_b"].records
        assert len(ra) == len(rb)
        diff = [i for i, (x, y) in enumerate(zip(ra, rb)) if x[2] != y[2] or x[0] != y[0]]
        assert len(diff) == (2 if pair == "value" else 1), diff
        assert [x[1] - ra[0][1] for x in ra] == [y[1] - rb[0][1] for y in rb]
    for pair in ("value", "write", "repeat"):
        fa, fb = files[f"{pair}_a.btsnoop"], files[f"{pair}_b.btsnoop"]
        assert fa["phone"] == fb["phone"] and fa["connection_handle"] == fb["connection_handle"]

    pairs = [
        value_pair(files["value_a.btsnoop"], files["value_b.btsnoop"]),
        write_pair(files["write_a.btsnoop"], files["write_b.btsnoop"]),
        roles_pair(files["roles_central.btsnoop"], files["roles_peripheral.btsnoop"],
                   parsed_files["roles_central"], parsed_files["roles_peripheral"]),
        repeat_pair(files["repeat_a.btsnoop"], files["repeat_b.btsnoop"]),
    ]
    truth = {
        "generator": "Scripts/captures/make_diff_scenarios.py (bumble 0.0.236)",
        "seeds": SEEDS,
        "schema": {
            "att": "one row per ATT PDU in file order; frame = 1-based record number (last "
                   "fragment of a fragmented PDU); t_s = seconds since the file's first record; "
                   "handle of a Read/Write Response = the request's; characteristic = UUID of "
                   "the characteristic the handle belongs to (value or descriptor), else null; "
                   "value = attribute value hex (Read Response, Write Request/Command, "
                   "Notification), else null",
            "difference": "kind (read_value | write_payload | repeated_write | repeated_read), "
                          "characteristic (16-bit UUID as 4 hex digits or the 128-bit UUID, "
                          "lower case), a / b (value or text), count_a / count_b (repeats), "
                          "first_frame_a / first_frame_b (see the generator's docstring)",
            "times": "seconds relative to the file's first record",
        },
        "strap": {"name": hr.STRAP_NAME, "address": hr.STRAP_RANDOM_ADDRESS,
                  "public_address": hr.STRAP_PUBLIC_ADDRESS, "handles": HANDLES,
                  "vendor_service": VENDOR_SERVICE_UUID.lower(), "vendor_command": VENDOR,
                  "attributes": attributes},
        "files": files,
        "pairs": pairs,
    }
    text = compact_json(truth) + "\n"
    assert json.loads(text) == json.loads(json.dumps(truth))
    truth_path = os.path.join(args.out_dir, "scenarios.truth.json")
    with open(truth_path, "w") as f:
        f.write(text)
    print(f"{truth_path}: {os.path.getsize(truth_path)} bytes")
    for p in pairs:
        print(f"  {p['name']}: {p['expected']}: " + "; ".join(
            f"{d['kind']} {d['characteristic']} {d['a']!r}->{d['b']!r} "
            f"frames {d['first_frame_a']}/{d['first_frame_b']}"
            + (f" counts {d['count_a']}/{d['count_b']}" if 'count_a' in d else "")
            for d in p["differences"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

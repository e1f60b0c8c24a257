#!/usr/bin/env python3
"""Record a phone <-> HR strap session with LE legacy pairing (Just Works) and link encryption.

Same set-up as make_scenarios.py (imported: the phone and strap stacks, connect, discovery
helpers; the strap is make_hr_session.Strap "bledissect HR" D0:B1:ED:00:48:52 with the handles
of hr_strap_session.btsnoop: HRM 16 + CCCD 17, Body Sensor Location 19, HR Control Point 21,
Battery Level 24 + CCCD 25).  Bumble 0.0.236, two emulated controllers on one LocalLink.

Session (phone side is written, the central's HCI traffic):
  LE Create Connection (by address, no scan); SMP legacy pairing, Just Works (both sides
  IO capability NoInputNoOutput, no MITM, no Secure Connections, bonding: TK = 0, so the
  STK can be recovered from the pairing exchange as crackle does); the phone encrypts the
  link with the STK (HCI LE Enable Encryption: Rand 0, EDIV 0, LTK = STK, then Encryption
  Change); key distribution over the encrypted link (the strap's LTK / EDIV / Rand, identity
  information); ATT Exchange MTU 247; full discovery; read Battery Level (87); Write Request
  01 00 to the HRM CCCD (17); HRM_COUNT Heart Rate Measurement notifications `06 <bpm>`
  (bpm HRM_BPM); Write Request 01 to the HR Control Point (21); disconnect (0x13).

The emulated controller does handle LE Enable Encryption (LL_ENC_REQ over the LocalLink,
LE Long Term Key Request on the strap, LTK Request Reply, Encryption Change on both ends),
so nothing is subclassed.  It does not encrypt anything (the link is in-process).

Determinism: Python's `secrets.token_bytes` (Bumble's SMP random values, its LTK / Rand /
EDIV) and `random` (the controller's LE Rand) are seeded, and the timestamps are rewritten
(records 2 ms apart, 1.0 s before each HRM notification, 0.2 s before the HCI Disconnect),
so reruns give identical bytes.

Usage:  python3 Scripts/captures/make_encrypted_session.py [--out-dir captures] [--seed 4242]
Writes  captures/encrypted_hr_session.btsnoop (phone side).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import logging
import os
import random
import secrets
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_hr_session as hr  # noqa: E402
import make_scenarios as sc  # noqa: E402

from bumble import pairing  # noqa: E402
from bumble.gatt import (  # noqa: E402
    GATT_BATTERY_LEVEL_CHARACTERISTIC,
    GATT_HEART_RATE_CONTROL_POINT_CHARACTERISTIC,
    GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC,
)
from bumble.link import LocalLink  # noqa: E402

HRM_BPM = [66, 67, 69, 70, 72, 71]
HRM_COUNT = len(HRM_BPM)
BASE_TIME_US = 0x00E03AB44A676000 + 1_764_480_000_000_000 - 946_684_800_000_000  # 2025-11-30 05:20 UTC


def seed_everything(seed: int) -> None:
    rng = random.Random(seed)
    secrets.token_bytes = lambda n=32: rng.randbytes(n)  # Bumble's crypto.r(), SMP values
    random.seed(seed)


def just_works(_connection) -> pairing.PairingConfig:
    return pairing.PairingConfig(
        sc=False,
        mitm=False,
        bonding=True,
        delegate=pairing.PairingDelegate(
            io_capability=pairing.PairingDelegate.IoCapability.NO_OUTPUT_NO_INPUT
        ),
    )


async def session(snoop_file, log=print) -> dict:
    link = LocalLink()
    phone_stack = sc.make_phone(link, snoop_file)
    strap = sc.make_strap(link, sc.STRAP)
    phone = phone_stack.device
    phone.pairing_config_factory = just_works
    strap.device.pairing_config_factory = just_works
    await strap.device.power_on()
    await phone.power_on()

    connection, strap_connection = await sc.connect(phone, strap.device, strap.address)
    await connection.pair()
    assert connection.is_encrypted, "link not encrypted"
    await sc.settle()
    keys = await phone.keystore.get(str(connection.peer_address)) if phone.keystore else None
    log(f"paired and encrypted; keys: {keys}")

    client = sc.Peer(connection)
    mtu = await client.request_mtu(hr.ATT_MTU)
    await sc.full_discovery(client)
    battery = bytes(await client.read_value(sc.find_char(client, GATT_BATTERY_LEVEL_CHARACTERISTIC)))
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    hrm_char = sc.find_char(client, GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC)
    cccd = sc.cccd_of(hrm_char)
    await client.subscribe(hrm_char, lambda value: queue.put_nowait(bytes(value)))
    for bpm in HRM_BPM:
        await strap.notify_hr(sc.hrm(bpm))
        got = await asyncio.wait_for(queue.get(), 5)
        assert got == sc.hrm(bpm), got.hex()
    await client.write_value(
        sc.find_char(client, GATT_HEART_RATE_CONTROL_POINT_CHARACTERISTIC), bytes([1]), with_response=True
    )
    await sc.settle()
    await sc.disconnect(connection, strap_connection)
    await sc.settle()
    return {"mtu": mtu, "battery": battery.hex(), "cccd": cccd, "hrm_handle": hrm_char.handle}


def parse_btsnoop(data: bytes) -> list[tuple[int, bytes]]:
    assert data[:8] == b"btsnoop\0"
    out, offset = [], 16
    while offset + 24 <= len(data):
        orig, incl, flags, _drops, _ts = struct.unpack(">IIIIQ", data[offset:offset + 24])
        out.append((flags, data[offset + 24:offset + 24 + incl]))
        offset += 24 + incl
    return out


def is_hrm_notification(flags: int, packet: bytes, handle: int) -> bool:
    # H4 ACL from the controller, L2CAP CID 4, ATT Handle Value Notification on `handle`
    return (flags & 1 == 1 and packet[0] == 0x02 and len(packet) >= 12
            and packet[7:9] == b"\x04\x00" and packet[9] == 0x1B
            and struct.unpack("<H", packet[10:12])[0] == handle)


def retime(data: bytes, hrm_handle: int) -> bytes:
    out = bytearray(data[:16])
    t = BASE_TIME_US
    for n, (flags, packet) in enumerate(parse_btsnoop(data)):
        if n:
            if is_hrm_notification(flags, packet, hrm_handle):
                t += 1_000_000
            elif packet[:3] == b"\x01\x06\x04":  # HCI Disconnect
                t += 200_000
            else:
                t += 2_000
        out += struct.pack(">IIIIQ", len(packet), len(packet), flags, 0, t) + packet
    return bytes(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out-dir", default=os.path.normpath(os.path.join(here, "..", "..", "captures")))
    parser.add_argument("--seed", type=int, default=4242)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.ERROR)
    seed_everything(args.seed)
    buffer = io.BytesIO()
    buffer.close = lambda: None  # BtSnooper may close its file
    facts = asyncio.run(session(buffer))
    data = retime(buffer.getvalue(), facts["hrm_handle"])
    records = parse_btsnoop(data)
    enable = [p for f, p in records if p[:3] == b"\x01\x19\x20"]
    change = [p for f, p in records if p[:2] == b"\x04\x08"]
    assert enable and change, "no LE Enable Encryption / Encryption Change in the log"
    facts["ltk_in_enable_encryption"] = enable[0][-16:][::-1].hex()
    path = os.path.join(args.out_dir, "encrypted_hr_session.btsnoop")
    with open(path, "wb") as f:
        f.write(data)
    print(f"facts: {facts}")
    print(f"{path}: {len(records)} records, {len(data)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

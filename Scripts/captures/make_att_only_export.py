#!/usr/bin/env python3
"""What Wireshark's "Export Specified Packets" writes from a sniffed LE capture filtered on
`btatt`: link type 251 (LINKTYPE_BLUETOOTH_LE_LL, the packets alone: no RF header, so no
direction), only the data PDUs that carry ATT.  No advertising, no CONNECT_IND, no empty PDU,
no LL control PDU: a decoder has no access address from a CONNECT_IND, no CRCInit, no
direction flag, and the SN / NESN bits jump where empty PDUs were taken out.

    python3 Scripts/captures/make_att_only_export.py [--out DIR] [--full PATH]

The link (built by ll_link.py from the Core specification's layouts, no Bumble; `--full` also
writes it whole, link type 256, for comparison): the phone C0:B1:ED:00:50:48 (random; central,
GATT client) connects to the thermometer "bledissect Thermo" D0:B1:ED:00:54:48 (random;
peripheral, GATT server): CONNECT_IND interval 24 (30 ms), latency 0, timeout 72, all
channels, CSA #1; LL_VERSION_IND both ways, LL_LENGTH_REQ / RSP (251 octets, so no ATT PDU is
fragmented), then ATT, every request answered one connection event after it arrived, the
client's next PDU one event after the response:

  Exchange MTU 517 / 247; discovery: Read By Group Type (all 5 services in one response, then
  Attribute Not Found), Read By Type 0x2803 per service (each ending in Attribute Not Found),
  Find Information per characteristic with descriptors; Read Device Name, Temperature Type,
  Measurement Interval (05 00), Manufacturer Name; Write Request Measurement Interval <- 01 00;
  Write Request CCCD 0x0012 <- 01 00 (Intermediate Temperature notifications) and, one event
  after its Write Response, Write Request CCCD 0x000D <- 02 00 (Temperature Measurement
  indications): the two Write Responses (`13`) come two events apart, so with the empty PDU
  between them removed they carry the same SN and NESN: byte-identical packets that are NOT a
  retransmission; 10 Intermediate Temperature notifications on 0x0011, 1 s apart (consecutive
  frames from the server); a Temperature Measurement indication on 0x000C, its confirmation
  and, in the same connection event (MD set), the client's Read Request for Battery Level
  (consecutive frames from the client); Write Request CCCD 0x0012 <- 00 00; LL_TERMINATE_IND
  (not exported).

Attribute table (handles hex): GAP 0x0001-0x0005 (Device Name 0x0003 "bledissect Thermo",
Appearance 0x0005 = 0x0300 thermometer); GATT 0x0006-0x0009 (Service Changed 0x0008 + CCCD
0x0009); Health Thermometer 0x1809 0x000A-0x0016 (Temperature Measurement 2A1C 0x000C indicate
+ CCCD 0x000D, Temperature Type 2A1D 0x000F = 02 body, Intermediate Temperature 2A1E 0x0011
notify + CCCD 0x0012, Measurement Interval 2A21 0x0014 read/write + Valid Range 2906 0x0015);
Battery 0x180F 0x0016-0x0018 (Battery Level 0x0018 = 0x5C, 92 %); Device Information 0x180A
0x0019-0x001D (Manufacturer Name 0x001B "bledissect labs", Model Number 0x001D "TH-1").
Temperatures: IEEE 11073 32-bit FLOAT, exponent -1 (flags 00: Celsius, no time stamp).

Truth (`att_only_export.truth.json`): per frame the true sender (central / peripheral, client /
server, phone / thermometer), connection event, SN / NESN / MD, ATT opcode, handle, value, the
gap to the previous frame, and the traps: `same_packet_as` (an earlier frame from the same
sender with identical bytes), `same_sn_as_previous_from_sender`.  Fixed timestamps and values:
reruns give identical bytes.  The script reads the file back (CRC with the truth's CRCInit,
every frame's ATT) and checks tshark's ATT list against the truth.
"""
from __future__ import annotations

import argparse
import os
import shutil
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gatt_model as g  # noqa: E402
import ll_link as ll  # noqa: E402
from ll_link import C, P  # noqa: E402

PHONE = bytes.fromhex("485000edb1c0")  # C0:B1:ED:00:50:48
THERMO = bytes.fromhex("485400edb1d0")  # D0:B1:ED:00:54:48
NAME = b"bledissect Thermo"
START_S = 1_764_570_000
AA, CRC_INIT, HOP = 0x6B3D92C5, 0x3F5A17, 9


def float11073(tenths: int) -> bytes:
    return (tenths & 0xFFFFFF).to_bytes(3, "little") + b"\xff"  # mantissa, exponent -1


INTERMEDIATE = [362, 364, 365, 367, 368, 369, 370, 370, 371, 371]
FINAL = 371


def thermometer() -> g.Db:
    db = g.Db("thermometer", mtu=247)
    db.service(0x1800, name="GAP")
    db.characteristic(0x2A00, g.READ, NAME, name="Device Name")
    db.characteristic(0x2A01, g.READ, b"\x00\x03", name="Appearance")
    db.service(0x1801, name="GATT")
    db.characteristic(0x2A05, g.INDICATE, b"", name="Service Changed", cccd=True)
    db.service(0x1809, name="Health Thermometer")
    db.characteristic(0x2A1C, g.INDICATE, b"", name="Temperature Measurement", cccd=True)
    db.characteristic(0x2A1D, g.READ, b"\x02", name="Temperature Type")
    db.characteristic(0x2A1E, g.NOTIFY, b"", name="Intermediate Temperature", cccd=True)
    db.characteristic(0x2A21, g.READ | g.WRITE, b"\x05\x00", write="open", name="Measurement Interval",
                      descriptors=[(0x2906, b"\x01\x00\x3c\x00", "Valid Range")])
    db.service(0x180F, name="Battery")
    db.characteristic(0x2A19, g.READ, b"\x5c", name="Battery Level")
    db.service(0x180A, name="Device Information")
    db.characteristic(0x2A29, g.READ, b"bledissect labs", name="Manufacturer Name String")
    db.characteristic(0x2A24, g.READ, b"TH-1", name="Model Number String")
    return db


# Extra connection events the phone's host takes before its n-th discovery request (0: the
# event right after the response), so that the SN bits between exported frames vary.
DISCOVERY_PAUSE = [0, 0, 1, 0, 2, 0, 0, 1, 0, 0, 0, 3, 0, 1, 0, 0]


def phone_client(found):
    yield ("req", bytes([0x02]) + struct.pack("<H", 517))
    yield from g.discover_all(found, pause=lambda n: DISCOVERY_PAUSE[n % len(DISCOVERY_PAUSE)])
    for handle, extra in ((0x0003, 2), (0x000F, 0), (0x0014, 1), (0x001B, 0)):
        yield ("req_after", extra, g.read_req(handle))
    yield ("req", g.write_req(0x0014, b"\x01\x00"))
    yield ("req", g.write_req(0x0012, b"\x01\x00"))
    yield ("req", g.write_req(0x000D, b"\x02\x00"))
    yield ("wait_indication",)
    yield ("req", g.read_req(0x0018))
    yield ("req", g.write_req(0x0012, b"\x00\x00"))


def thermometer_script(link, start_us):
    def script():
        for k, tenths in enumerate(INTERMEDIATE, 1):
            yield ("wait_until", start_us + k * 1_000_000)
            yield ("notify", g.notification(0x0011, b"\x00" + float11073(tenths)))
        yield ("wait_until", start_us + 11_500_000)
        yield ("indicate", g.indication(0x000C, b"\x00" + float11073(FINAL)))
    return script()


def build():
    t0 = START_S * 1_000_000
    adv_data = bytes([2, 0x01, 0x06, 3, 0x03, 0x09, 0x18, len(NAME) + 1, 0x09]) + NAME
    adv = ll.advertising_frame(t0, 37, 0x0, True, False, THERMO + adv_data, "advertiser", "ADV_IND")
    t_conn = t0 + ll.air_time_us(len(adv.pdu)) + ll.T_IFS
    conn = ll.advertising_frame(t_conn, 37, 0x5, True, True,
                                ll.connect_ind_payload(PHONE, THERMO, AA, CRC_INIT, 2, 0, 24, 0, 72, HOP, 5),
                                "initiator", "CONNECT_IND")
    link = ll.Link(AA, CRC_INIT, 24, HOP, t_conn + ll.air_time_us(len(conn.pdu)) + 1250 + 625)
    link.frames += [adv, conn]
    db = thermometer()
    table = db.table()  # as at connection time
    found = {}
    engine = g.AttEngine(link, {C: g.Bearer(C, client=phone_client(found)), P: g.Bearer(P, db=db)})

    def on_write(db_, handle, value, event):
        if handle == 0x000D and value == b"\x02\x00":
            engine.start_server_script(P, thermometer_script(link, link.anchor(event)), event + 1)
    db.on_write = on_write

    version = bytes([0x0C, 0x0D, 0xFF, 0xFF, 0x01, 0x00])
    link.send(C, 3, version, 0)
    link.send(P, 3, version, 1)
    link.send(C, 3, bytes([0x14]) + struct.pack("<HHHH", 251, 2120, 251, 2120), 1)
    link.send(P, 3, bytes([0x15]) + struct.pack("<HHHH", 251, 2120, 251, 2120), 2)

    def control(link_, side, item, event):
        if item.payload[0] == 0x15:  # LL_LENGTH_RSP: both may send 251 octets from now on
            link_.max_payload[C] = link_.max_payload[P] = 251
    engine.control = control
    engine.start_client(C, 3)
    while not engine.finished():
        link.run_event()
        assert link.event < 5000
    link.send(C, 3, b"\x02\x13", link.event + 1)
    while not link.terminated:
        link.run_event()
    return link, engine, table, found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(ll.REPO, "captures", "air"))
    parser.add_argument("--full", help="also write the whole sniffed link (link type 256) here")
    args = parser.parse_args()
    ll.self_check()
    link, engine, table, found = build()
    full = ll.number(link.frames)
    exported = [f for f in full if f.kind == "data" and ll.att_fields(f.plaintext)]
    assert len(exported) == len(engine.log)
    if args.full:
        ll.write_file(args.full, ll.pcap_bytes(256, full))
    full_index = {id(f): f.index for f in full}
    for n, f in enumerate(exported, 1):
        f.index = n
    content = ll.pcap_bytes(251, exported)
    path = os.path.join(args.out, "att_only_export.pcap")

    rows, last_from = [], {}
    prev_time = None
    who = {C: ("client", "phone"), P: ("server", "thermometer")}
    for f in exported:
        att = ll.att_fields(f.plaintext)
        role = "client" if int(att["opcode"], 16) in g.REQUESTS | g.COMMANDS | {0x1E} else "server"
        row = {"index": f.index, "time_us": f.time_us,
               "gap_us": None if prev_time is None else f.time_us - prev_time,
               "sender": f.sender, "att_role": role, "device": "phone" if f.sender == C else "thermometer",
               "event": f.event, "sn": f.sn, "nesn": f.nesn, "md": f.md, "frame_in_full_link": full_index[id(f)]}
        row.update({k: v for k, v in att.items()})
        prev = last_from.get(f.sender)
        if prev is not None:
            row["same_sn_as_previous_from_sender"] = prev.sn == f.sn
            if prev.pdu == f.pdu:
                row["same_packet_as"] = prev.index
        row["pdu_hex"] = f.pdu.hex()
        rows.append(row)
        last_from[f.sender] = f
        prev_time = f.time_us
        assert role == who[f.sender][0]
    same = [r for r in rows if "same_packet_as" in r]
    assert any(r["opcode"] == "0x13" for r in same), "the two Write Responses must be byte-identical"
    runs = [(a["index"], b["index"]) for a, b in zip(rows, rows[1:]) if a["sender"] == b["sender"]]
    notifications = [r["index"] for r in rows if r["opcode"] == "0x1B"]
    truth = {
        "file": "captures/air/att_only_export.pcap",
        "generator": "Scripts/captures/make_att_only_export.py",
        "link_type": 251,
        "frames": len(exported),
        "bytes": len(content),
        "what": "Wireshark 'Export Specified Packets' of a sniffed capture filtered on btatt: only the data PDUs "
                "that carry ATT; no advertising, CONNECT_IND, empty PDU or LL control; no direction in the file",
        "central": {"address": ll.mac_text(PHONE), "random": True, "device": "phone", "att_role": "client"},
        "peripheral": {"address": ll.mac_text(THERMO), "random": True, "device": "thermometer",
                       "name": NAME.decode(), "att_role": "server"},
        "connection": {"access_address": f"0x{AA:08X}", "crc_init": f"0x{CRC_INIT:06X}", "interval": 24,
                       "latency": 0, "timeout": 72, "hop": HOP, "csa": 1, "ll_payload": 251,
                       "att_mtu": engine.mtu, "events": link.event, "frames_in_full_link": len(full),
                       "note": "CRCInit is nowhere in the file (it was in the CONNECT_IND): a reader can check the "
                               "CRC only by recovering it from a packet"},
        "facts": {
            "same_sender_in_a_row": [list(p) for p in runs],
            "identical_packets": [[r["same_packet_as"], r["index"]] for r in same],
            "notifications": notifications,
            "write_responses": [r["index"] for r in rows if r["opcode"] == "0x13"],
            "indication": [r["index"] for r in rows if r["opcode"] == "0x1D"],
            "confirmation": [r["index"] for r in rows if r["opcode"] == "0x1E"],
            "note": "no frame here is a retransmission: every one is a new PDU; identical_packets pairs share SN, "
                    "NESN, MD and payload because the empty PDUs between them were not exported",
        },
        "attributes_note": "the thermometer's table as at connection time (the writes are in packets)",
        "attributes": table,
        "frames_note": "index = frame number in the file; sender = who sent it on the link (the file does not "
                       "say); gap_us = time since the previous frame; event = connection event; frame_in_full_link "
                       "= its number in the whole sniffed link (--full)",
        "packets": rows,
    }
    check(content, truth)
    ll.write_file(path, content)
    ll.write_file(os.path.join(args.out, "att_only_export.truth.json"), ll.compact_json(truth))
    note = tshark_check(path, truth) if shutil.which("tshark") else "tshark not found: not checked"
    print(f"{path}: {len(exported)} frames, {len(content)} bytes (full link {len(full)} frames, {link.event} events); "
          f"{note}")
    return 0


def check(content: bytes, truth: dict) -> None:
    crc_init = int(truth["connection"]["crc_init"], 16)
    off, rows = 24, iter(truth["packets"])
    while off < len(content):
        _s, _u, incl, _o = struct.unpack("<IIII", content[off:off + 16])
        pkt = content[off + 16:off + 16 + incl]
        off += 16 + incl
        row = next(rows)
        assert struct.unpack("<I", pkt[:4])[0] == int(truth["connection"]["access_address"], 16)
        assert pkt[-3:] == ll.crc24(pkt[4:-3], crc_init)
        assert pkt[4:-3].hex() == row["pdu_hex"]
        assert pkt[4] & 3 == 2 and pkt[10:10 + len(row["att_hex"]) // 2].hex() == row["att_hex"]
    assert next(rows, None) is None


def tshark_check(path: str, truth: dict) -> str:
    rows = ll.tshark_att(path)
    want = [(r["index"], r["att_hex"]) for r in truth["packets"]]
    assert rows == want, [(a, b) for a, b in zip(rows, want) if a != b][:3]
    return f"tshark: the same {len(rows)} ATT PDUs, byte for byte, in the same frames"


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Sniffed LE legacy pairings, then the link encrypted with the STK: link type 256 (RF header,
direction said), built from the Core specification's layouts by ll_link.py (no Bumble), with a
truth file each.  For bledissect's key recovery when the sniffer did not see everything, and
for a known TK (OOB).

    python3 Scripts/captures/make_sniffed_pairings.py [--only NAME] [--out DIR]

The phone C0:B1:ED:00:50:48 (random, central) connects to the strap "bledissect HR"
D0:B1:ED:00:48:52 (random, peripheral): ADV_IND on 37, CONNECT_IND on 37 (interval 24 = 30 ms,
latency 0, timeout 72, all 37 channels, CSA #1), then one connection event per 30 ms, central
first, empty PDUs where a side has nothing to send:

  e0 LL_VERSION_IND (central)       e1 LL_VERSION_IND (peripheral)
  e2 Pairing Request                e3 Pairing Response
  (passkey: 80 events while the user types the passkey shown by the strap)
  e4 Pairing Confirm (central)      e5 Pairing Confirm (peripheral)
  e6 Pairing Random (central)       e7 Pairing Random (peripheral)
  e8 LL_ENC_REQ (Rand 0, EDIV 0, SKDm, IVm)                 e9 LL_ENC_RSP (SKDs, IVs)
  e10 LL_START_ENC_REQ (peripheral, in the clear)
  e11 LL_START_ENC_RSP (central, encrypted, counter 0)      e12 LL_START_ENC_RSP (peripheral, 0)
  e13 Read Request 0x0018 (central, counter 1)              e14 Read Response 57 (peripheral, 1)
  e16 LL_TERMINATE_IND 0x13 (central, counter 2), acknowledged by the peripheral's empty PDU.

No bonding and no key distribution (AuthReq bonding flags 00, key distribution 00 / 00): the
STK encrypts this link and nothing else is sent.  Files (captures/air/):

  legacy_pairing_no_confirms_sniffed          Just Works (both NoInputNoOutput, no MITM, TK 0);
                                              the sniffer missed both Pairing Confirms
  legacy_pairing_no_confirms_passkey_sniffed  passkey 000123 (KeyboardDisplay / DisplayOnly,
                                              MITM; TK = 123); both Pairing Confirms missed
  oob_pairing_sniffed                         OOB (both OOB data flags set, MITM), TK
                                              00112233445566778899AABBCCDDEEFF; confirms there

Missed means the link got the PDU (SN / NESN go on as if it had been recorded) but it is not in
the file.  Without the confirms a key search can only check a TK candidate by the MIC of the
first encrypted packet: STK = s1(TK, Srand, Mrand), SK = e(STK, SKDs || SKDm), then AES-CCM of
the central's LL_START_ENC_RSP (counter 0).  Everything is fixed (seeded randoms, fixed
timestamps): reruns give identical bytes.  The script reads every file back (CRC, decryption
of every encrypted frame with the truth's SK / IV / counter, c1 of the confirms against the
randoms) and, with tshark on the PATH, checks tshark's SMP / LL control / ATT list.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ll_link as ll  # noqa: E402
from ll_link import C, P  # noqa: E402

PHONE = bytes.fromhex("485000edb1c0")  # C0:B1:ED:00:50:48, least significant octet first
STRAP = bytes.fromhex("524800edb1d0")  # D0:B1:ED:00:48:52
STRAP_NAME = b"bledissect HR"

CASES = {
    "legacy_pairing_no_confirms_sniffed": dict(
        seed=5101, method="Just Works", tk=0, passkey=None, missed_confirms=True, typing_events=0,
        preq=bytes([0x01, 0x03, 0x00, 0x00, 0x10, 0x00, 0x00]),  # NoInputNoOutput, no OOB, AuthReq 00
        pres=bytes([0x02, 0x03, 0x00, 0x00, 0x10, 0x00, 0x00])),
    "legacy_pairing_no_confirms_passkey_sniffed": dict(
        seed=5102, method="Passkey Entry", tk=123, passkey=123, missed_confirms=True, typing_events=80,
        preq=bytes([0x01, 0x04, 0x00, 0x04, 0x10, 0x00, 0x00]),  # KeyboardDisplay, MITM
        pres=bytes([0x02, 0x00, 0x00, 0x04, 0x10, 0x00, 0x00])),  # DisplayOnly, MITM
    "oob_pairing_sniffed": dict(
        seed=5103, method="OOB", tk=0x00112233445566778899AABBCCDDEEFF, passkey=None, missed_confirms=False,
        typing_events=0,
        preq=bytes([0x01, 0x03, 0x01, 0x04, 0x10, 0x00, 0x00]),  # OOB data present, MITM
        pres=bytes([0x02, 0x03, 0x01, 0x04, 0x10, 0x00, 0x00])),
}
START_S = {"legacy_pairing_no_confirms_sniffed": 1_764_560_000,
           "legacy_pairing_no_confirms_passkey_sniffed": 1_764_561_000,
           "oob_pairing_sniffed": 1_764_562_000}


def build(name: str):
    case = CASES[name]
    rng = random.Random(case["seed"])
    while True:
        aa = rng.getrandbits(32)
        if ll.access_address_ok(aa):
            break
    crc_init = rng.getrandbits(24)
    hop = rng.randint(5, 16)
    tk = case["tk"].to_bytes(16, "big")
    preq, pres = case["preq"], case["pres"]
    mrand_msb = bytes(rng.getrandbits(8) for _ in range(16))
    srand_msb = bytes(rng.getrandbits(8) for _ in range(16))
    mconfirm = ll.c1(tk, mrand_msb, preq, pres, 1, 1, PHONE, STRAP)
    sconfirm = ll.c1(tk, srand_msb, preq, pres, 1, 1, PHONE, STRAP)
    stk = ll.s1(tk, srand_msb, mrand_msb)
    skdm, ivm = bytes(rng.getrandbits(8) for _ in range(8)), bytes(rng.getrandbits(8) for _ in range(4))
    skds, ivs = bytes(rng.getrandbits(8) for _ in range(8)), bytes(rng.getrandbits(8) for _ in range(4))
    sk = ll.session_key(stk, skdm, skds)
    iv = ivm + ivs

    t0 = START_S[name] * 1_000_000
    adv_data = bytes([2, 0x01, 0x06, len(STRAP_NAME) + 1, 0x09]) + STRAP_NAME + bytes([3, 0x03, 0x0D, 0x18])
    adv = ll.advertising_frame(t0, 37, 0x0, True, False, STRAP + adv_data, "advertiser", "ADV_IND")
    t_conn = t0 + ll.air_time_us(len(adv.pdu)) + ll.T_IFS
    connect = ll.connect_ind_payload(PHONE, STRAP, aa, crc_init, 2, 0, 24, 0, 72, hop, 5)
    conn = ll.advertising_frame(t_conn, 37, 0x5, True, True, connect, "initiator", "CONNECT_IND")
    first_anchor = t_conn + ll.air_time_us(len(conn.pdu)) + 1250 + 625
    link = ll.Link(aa, crc_init, 24, hop, first_anchor)
    link.key = (sk, iv)
    link.frames += [adv, conn]

    smp = lambda body: struct.pack("<HH", len(body), 6) + body  # noqa: E731
    d = case["typing_events"]
    missed = case["missed_confirms"]
    version = bytes([0x0C, 0x0D, 0xFF, 0xFF, 0x34, 0x12])  # LL_VERSION_IND: 5.4, company 0xFFFF (none), subversion 0x1234
    link.send(C, 3, version, 0, "LL_VERSION_IND")
    link.send(P, 3, version, 1, "LL_VERSION_IND")
    link.send(C, 2, smp(preq), 2, "Pairing Request")
    link.send(P, 2, smp(pres), 3, "Pairing Response")
    link.send(C, 2, smp(b"\x03" + mconfirm[::-1]), 4 + d, "Pairing Confirm", missed=missed)
    link.send(P, 2, smp(b"\x03" + sconfirm[::-1]), 5 + d, "Pairing Confirm", missed=missed)
    link.send(C, 2, smp(b"\x04" + mrand_msb[::-1]), 6 + d, "Pairing Random")
    link.send(P, 2, smp(b"\x04" + srand_msb[::-1]), 7 + d, "Pairing Random")
    link.send(C, 3, b"\x03" + bytes(8) + bytes(2) + skdm + ivm, 8 + d, "LL_ENC_REQ")
    link.send(P, 3, b"\x04" + skds + ivs, 9 + d, "LL_ENC_RSP")
    link.send(P, 3, b"\x05", 10 + d, "LL_START_ENC_REQ")
    link.send(C, 3, b"\x06", 11 + d, "LL_START_ENC_RSP", encrypt=True)
    link.send(P, 3, b"\x06", 12 + d, "LL_START_ENC_RSP", encrypt=True)
    link.send(C, 2, struct.pack("<HH", 3, 4) + b"\x0a\x18\x00", 13 + d, "Read Request", encrypt=True)
    link.send(P, 2, struct.pack("<HH", 2, 4) + b"\x0b\x57", 14 + d, "Read Response", encrypt=True)
    link.send(C, 3, b"\x02\x13", 16 + d, "LL_TERMINATE_IND", encrypt=True)
    while not link.terminated:
        link.run_event()
        assert link.event < 1000
    assert link.idle()

    frames = ll.number(link.frames)
    content = ll.pcap_bytes(256, frames)
    by_tag: dict[str, list[ll.Frame]] = {}
    for f in link.frames:
        if f.tag:
            by_tag.setdefault(f.tag, []).append(f)
    first_encrypted = min((f for f in frames if f.counter is not None), key=lambda f: f.index)

    def where(tag, n=0):
        f = by_tag[tag][n]
        return f.index

    missing = [dict(what=f"{f.tag} ({f.sender})", event=f.event, time_us=f.time_us, channel=f.channel,
                    sn=f.sn, nesn=f.nesn, payload_hex=f.plaintext.hex(), pdu_hex=f.pdu.hex())
               for f in link.frames if not f.recorded]
    truth = {
        "file": f"captures/air/{name}.pcap",
        "generator": "Scripts/captures/make_sniffed_pairings.py",
        "link_type": 256,
        "frames": len(frames),
        "bytes": len(content),
        "central": {"address": ll.mac_text(PHONE), "random": True, "what": "phone, initiator"},
        "peripheral": {"address": ll.mac_text(STRAP), "random": True, "name": STRAP_NAME.decode(),
                       "what": "strap, responder"},
        "connection": {"access_address": f"0x{aa:08X}", "crc_init": f"0x{crc_init:06X}", "interval": 24, "latency": 0,
                       "timeout": 72, "hop": hop, "sca": 5, "win_size": 2, "win_offset": 0,
                       "channel_map": "ffffffff1f", "csa": 1, "first_anchor_us": first_anchor,
                       "events": link.event},
        "pairing": {
            "method": case["method"],
            "passkey": case["passkey"],
            "pairing_request_hex": preq.hex(),
            "pairing_response_hex": pres.hex(),
            "tk": tk.hex(),
            "tk_le": tk[::-1].hex(),
            "mrand": mrand_msb.hex(), "mrand_le": mrand_msb[::-1].hex(),
            "srand": srand_msb.hex(), "srand_le": srand_msb[::-1].hex(),
            "mconfirm": mconfirm.hex(), "mconfirm_le": mconfirm[::-1].hex(),
            "sconfirm": sconfirm.hex(), "sconfirm_le": sconfirm[::-1].hex(),
            "stk": stk.hex(), "stk_le": stk[::-1].hex(),
            "confirms_in_file": not missed,
            "missed": missing,
            "note": "values without _le are most significant octet first (stk is what --ltk takes); *_le as sent "
                    "on air; STK = s1(TK, Srand, Mrand); confirms = c1(TK, rand, preq, pres, iat 1, rat 1, ia "
                    "C0:B1:ED:00:50:48, ra D0:B1:ED:00:48:52)",
        },
        "encryption": {
            "ltk": stk.hex(), "rand_le": "0000000000000000", "ediv": 0,
            "skdm_le": skdm.hex(), "skds_le": skds.hex(), "ivm_le": ivm.hex(), "ivs_le": ivs.hex(),
            "skd_msb_first": (skdm + skds)[::-1].hex(), "sk_msb_first": sk.hex(), "iv_on_air": iv.hex(),
            "first_encrypted_frame": first_encrypted.index,
            "counters_at_end": {"central": link.counter[C], "peripheral": link.counter[P]},
            "note": "ltk = the STK (LL_ENC_REQ with Rand 0 and EDIV 0), most significant octet first; the first "
                    "encrypted packet is the central's LL_START_ENC_RSP, counter 0: its MIC checks a TK candidate",
        },
        "key_frames": {
            "adv_ind": adv.index, "connect_ind": conn.index,
            "ll_version_ind_central": where("LL_VERSION_IND", 0), "ll_version_ind_peripheral": where("LL_VERSION_IND", 1),
            "pairing_request": where("Pairing Request"), "pairing_response": where("Pairing Response"),
            "pairing_confirm_central": where("Pairing Confirm", 0), "pairing_confirm_peripheral": where("Pairing Confirm", 1),
            "pairing_random_central": where("Pairing Random", 0), "pairing_random_peripheral": where("Pairing Random", 1),
            "ll_enc_req": where("LL_ENC_REQ"), "ll_enc_rsp": where("LL_ENC_RSP"),
            "ll_start_enc_req": where("LL_START_ENC_REQ"),
            "ll_start_enc_rsp_central": where("LL_START_ENC_RSP", 0),
            "ll_start_enc_rsp_peripheral": where("LL_START_ENC_RSP", 1),
            "read_request": where("Read Request"), "read_response": where("Read Response"),
            "ll_terminate_ind": where("LL_TERMINATE_IND"),
        },
        "read": {"handle": "0x0018", "characteristic": "2A19 Battery Level", "value_hex": "57"},
        "packets_note": "every frame but plain empty PDUs, in file order; empty PDUs in empty_runs (one hex digit per "
                        "frame: bit 0 SN, bit 1 NESN, bit 2 MD, bit 3 set = sent by the central); payload_hex = the "
                        "plaintext, pdu_hex = as written; missed frames have index null and are not in the file",
        "packets": [ll.frame_entry(f) for f in frames if f.kind != "empty"],
        "empty_runs": ll.empty_runs(frames),
    }
    check(content, truth, frames, tk, preq, pres)
    return content, truth


def check(content: bytes, truth: dict, frames: list[ll.Frame], tk: bytes, preq: bytes, pres: bytes) -> None:
    """Read the pcap back: CRCs, direction flags, decryption of every encrypted frame with the
    truth's keys, the confirms against the randoms, the missed frames absent."""
    enc = truth["encryption"]
    sk, iv = bytes.fromhex(enc["sk_msb_first"]), bytes.fromhex(enc["iv_on_air"])
    assert ll.session_key(bytes.fromhex(enc["ltk"]), bytes.fromhex(enc["skdm_le"]), bytes.fromhex(enc["skds_le"])) == sk
    off, n = 24, 0
    aa = int(truth["connection"]["access_address"], 16)
    crc_init = int(truth["connection"]["crc_init"], 16)
    counters = {C: 0, P: 0}
    started = {C: False, P: False}
    smp = []
    while off < len(content):
        _s, _u, incl, _orig = struct.unpack("<IIII", content[off:off + 16])
        body = content[off + 16:off + 16 + incl]
        off += 16 + incl
        n += 1
        flags = struct.unpack("<H", body[8:10])[0]
        pkt_aa = struct.unpack("<I", body[10:14])[0]
        pdu, crc = body[14:-3], body[-3:]
        assert crc == ll.crc24(pdu, 0x555555 if pkt_aa == ll.ADVERTISING_AA else crc_init)
        if pkt_aa != aa:
            continue
        side = C if (flags >> 7) & 7 == 2 else P
        payload = pdu[2:]
        if started[side] and payload:
            plain = ll.decrypt(sk, iv, counters[side], side == C, pdu[0], payload)
            counters[side] += 1
        else:
            plain = payload
            if pdu[0] & 3 == 3 and plain[:1] == b"\x05":
                started[C] = started[P] = True  # LL_START_ENC_REQ: both directions encrypted after it
        if pdu[0] & 3 == 2 and plain[2:4] == b"\x06\x00":
            smp.append(plain[4:])
    assert n == truth["frames"]
    assert counters == truth["encryption"]["counters_at_end"], counters
    codes = [s[0] for s in smp]
    p = truth["pairing"]
    if p["confirms_in_file"]:
        assert codes == [1, 2, 3, 3, 4, 4], codes
        mrand, srand = smp[4][1:][::-1], smp[5][1:][::-1]
        assert ll.c1(tk, mrand, preq, pres, 1, 1, PHONE, STRAP) == smp[2][1:][::-1]
        assert ll.c1(tk, srand, preq, pres, 1, 1, PHONE, STRAP) == smp[3][1:][::-1]
    else:
        assert codes == [1, 2, 4, 4], codes
        mrand, srand = smp[2][1:][::-1], smp[3][1:][::-1]
    assert ll.s1(tk, srand, mrand).hex() == p["stk"]


def tshark_check(path: str, truth: dict) -> str:
    out = subprocess.run(["tshark", "-r", path, "-T", "fields", "-e", "frame.number", "-e", "btsmp.opcode",
                          "-e", "btle.control_opcode", "-e", "btle.advertising_header.pdu_type"],
                         capture_output=True, text=True, check=True).stdout
    smp, control = {}, {}
    for line in out.splitlines():
        num, sop, cop, adv = (line.split("\t") + ["", "", ""])[:4]
        if sop:
            smp[int(num)] = int(sop, 0)
        if cop:
            control[int(num)] = int(cop, 0)
    k = truth["key_frames"]
    want_smp = {k["pairing_request"]: 1, k["pairing_response"]: 2, k["pairing_random_central"]: 4,
                k["pairing_random_peripheral"]: 4}
    if truth["pairing"]["confirms_in_file"]:
        want_smp.update({k["pairing_confirm_central"]: 3, k["pairing_confirm_peripheral"]: 3})
    assert smp == want_smp, (smp, want_smp)
    # tshark decodes the control opcodes sent in the clear (the encrypted ones it cannot read).
    for key, op in (("ll_version_ind_central", 0x0C), ("ll_version_ind_peripheral", 0x0C), ("ll_enc_req", 0x03),
                    ("ll_enc_rsp", 0x04), ("ll_start_enc_req", 0x05)):
        assert control.get(k[key]) == op, (key, control.get(k[key]))
    return f"tshark: SMP {sorted(smp)}, LL control in the clear {sorted(control)}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=sorted(CASES))
    parser.add_argument("--out", default=os.path.join(ll.REPO, "captures", "air"))
    args = parser.parse_args()
    ll.self_check()
    for name in CASES:
        if args.only and name != args.only:
            continue
        content, truth = build(name)
        path = os.path.join(args.out, name + ".pcap")
        ll.write_file(path, content)
        ll.write_file(os.path.join(args.out, name + ".truth.json"), ll.compact_json(truth))
        note = tshark_check(path, truth) if shutil.which("tshark") else "tshark not found: not checked"
        print(f"{path}: {truth['frames']} frames, {len(content)} bytes, TK {truth['pairing']['tk']}, "
              f"STK {truth['pairing']['stk']}; {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

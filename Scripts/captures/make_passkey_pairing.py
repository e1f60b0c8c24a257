#!/usr/bin/env python3
"""A sniffed LE legacy pairing by passkey, then its encrypted link: link type 256 (RF header,
direction said), built from the Core specification's layouts (no Bumble), for the passkey
search of bledissect's key recovery.

    python3 Scripts/captures/make_passkey_pairing.py OUT.pcap [--passkey N]

The phone C0:B1:ED:00:50:48 (random) connects to the strap D0:B1:ED:00:48:52 (random):
CONNECT_IND, Pairing Request (KeyboardDisplay, bonding, MITM) / Response (DisplayOnly,
bonding, MITM), both Pairing Confirms (c1 with TK = the passkey, Vol 3 Part H 2.2.3) and
Randoms, LL_ENC_REQ (Rand 0, EDIV 0: the STK, s1 of 2.2.4) / LL_ENC_RSP, LL_START_ENC_REQ,
then encrypted with the STK (Vol 6 Part E): both LL_START_ENC_RSPs, an ATT Read Request for
handle 0x0018 and its response 0x57 (87 %), LL_TERMINATE_IND. The passkey's default, 999999, is
the last one a search tries (bledissect tries 000000 up): `docs/performance.md` times it.
Deterministic: the same bytes every run.
"""
import argparse
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_sniffed_sessions as sniffed  # noqa: E402  (crc24, aes_e, session_key, encrypt_pdu, pcap_bytes)

ADVERTISING_AA = 0x8E89BED6
LINK_AA = 0x50657A3C
CRC_INIT = 0x9A1B2C
PHONE = bytes.fromhex("485000edb1c0")  # C0:B1:ED:00:50:48, as sent
STRAP = bytes.fromhex("524800edb1d0")  # D0:B1:ED:00:48:52


def c1(k_be, r_be, preq, pres, iat, rat, ia, ra):
    """c1 with its inputs as sent (little-endian) but k and r; returns most significant first."""
    p1 = pres[::-1] + preq[::-1] + bytes([rat, iat])
    p2 = bytes(4) + ia[::-1] + ra[::-1]
    x = sniffed.aes_e(k_be, bytes(a ^ b for a, b in zip(r_be, p1)))
    return sniffed.aes_e(k_be, bytes(a ^ b for a, b in zip(x, p2)))


def build(passkey: int):
    tk = passkey.to_bytes(16, "big")
    preq = bytes([0x01, 0x04, 0x00, 0x05, 0x10, 0x07, 0x07])  # KeyboardDisplay, bonding + MITM
    pres = bytes([0x02, 0x00, 0x00, 0x05, 0x10, 0x07, 0x07])  # DisplayOnly
    mrand = bytes((i * 29 + 7) & 0xFF for i in range(16))
    srand = bytes((i * 53 + 11) & 0xFF for i in range(16))
    mconfirm = c1(tk, mrand[::-1], preq, pres, 1, 1, PHONE, STRAP)[::-1]
    sconfirm = c1(tk, srand[::-1], preq, pres, 1, 1, PHONE, STRAP)[::-1]
    stk_be = sniffed.aes_e(tk, srand[::-1][8:] + mrand[::-1][8:])
    skdm, ivm = bytes(range(0x10, 0x18)), bytes([0xA1, 0xA2, 0xA3, 0xA4])
    skds, ivs = bytes(range(0x30, 0x38)), bytes([0xB1, 0xB2, 0xB3, 0xB4])
    sk = sniffed.session_key(stk_be[::-1], skdm, skds)
    iv = ivm + ivs

    records = []
    time = [1_700_000_000_000_000]
    sn = {True: 0, False: 0}
    counter = {True: 0, False: 0}

    def frame(channel, pdu_type_bits, aa, pdu, crc_init):
        flags = 0x0001 | 0x0002 | 0x0400 | 0x0800 | (pdu_type_bits << 7) | (0x0010 if aa != ADVERTISING_AA else 0)
        header = struct.pack("<BbbBIH", channel, -50, 0, 0, aa if aa != ADVERTISING_AA else 0, flags)
        records.append((time[0], header + struct.pack("<I", aa) + pdu + sniffed.crc24(pdu, crc_init)))
        time[0] += 7_500

    def data(from_central, llid, payload, encrypted=False):
        nesn = sn[not from_central]  # the other side's last packet acknowledged: next expected
        header0 = llid | (nesn << 2) | (sn[from_central] << 3)
        sn[from_central] ^= 1
        if encrypted and payload:
            payload = sniffed.encrypt_pdu(sk, iv, counter[from_central], from_central, header0, payload)
            counter[from_central] += 1
        frame(5, 2 if from_central else 3, LINK_AA, bytes([header0, len(payload)]) + payload, CRC_INIT)

    connect = (struct.pack("<I", LINK_AA) + CRC_INIT.to_bytes(3, "little") + bytes([2]) + struct.pack("<HHHH", 0, 24, 0, 72)
               + bytes([0xFF, 0xFF, 0xFF, 0xFF, 0x1F]) + bytes([7 | (5 << 5)]))
    frame(37, 0, ADVERTISING_AA, bytes([0x05 | 0x40 | 0x80, 34]) + PHONE + STRAP + connect, 0x555555)
    smp = lambda body: struct.pack("<HH", len(body), 6) + body
    data(True, 2, smp(preq)); data(False, 2, smp(pres))
    data(True, 2, smp(b"\x03" + mconfirm)); data(False, 2, smp(b"\x03" + sconfirm))
    data(True, 2, smp(b"\x04" + mrand)); data(False, 2, smp(b"\x04" + srand))
    data(True, 3, b"\x03" + bytes(8) + bytes(2) + skdm + ivm)
    data(False, 3, b"\x04" + skds + ivs)
    data(True, 1, b"")
    data(False, 3, b"\x05")
    data(True, 3, b"\x06", encrypted=True)
    data(False, 3, b"\x06", encrypted=True)
    data(True, 2, struct.pack("<HH", 3, 4) + b"\x0a\x18\x00", encrypted=True)
    data(False, 2, struct.pack("<HH", 2, 4) + b"\x0b\x57", encrypted=True)
    data(True, 3, b"\x02\x13", encrypted=True)
    data(False, 1, b"")
    return sniffed.pcap_bytes(256, records), stk_be


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--passkey", type=int, default=999_999)
    args = parser.parse_args()
    if not 0 <= args.passkey <= 999_999:
        parser.error("a passkey is 000000 to 999999")
    content, stk = build(args.passkey)
    with open(args.out, "wb") as f:
        f.write(content)
    print(f"{args.out}: passkey {args.passkey:06d}, STK {stk.hex()}, {len(content)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

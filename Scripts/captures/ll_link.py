#!/usr/bin/env python3
"""Helpers for the hand-built sniffed-link samples (make_pairing_gaps.py, make_att_only_export.py,
make_dual_gatt_sniffed.py): an LE link layer run event by event, the legacy-pairing and link
encryption functions, pcap framing and the truth-file layout.  No Bumble: everything is built
from the Core specification's layouts (5.4):

  * packets (Vol 6 Part B 2.1, 2.3, 2.4): access address, PDU (header + payload), CRC (3.1.1,
    preset 0x555555 on the advertising channels, CRCInit on the link); ADV_IND and CONNECT_IND
    (2.3.1.1, 2.3.3.1; ChSel 0 = Channel Selection Algorithm #1);
  * connection events (4.5.1, 4.5.6, 4.5.9): anchor n = first anchor + n * interval, channel
    by CSA #1 with all 37 data channels used (unmapped channel = (last + hop) mod 37, last
    starting at 0); in each event the central sends first and the peripheral answers T_IFS
    (150 us) after the end of the central's packet; each sends a data PDU when it has one ready,
    else an empty PDU (LLID 1, length 0); MD = the sender has another PDU ready; the event goes
    on while either MD bit was set; SN / NESN: each side sends SN = transmitSeqNum, NESN =
    nextExpectedSeqNum; a received SN equal to nextExpectedSeqNum is new data (NESN flips), a
    received NESN different from transmitSeqNum acknowledges the last packet sent (SN flips);
    nothing is lost on this link, so nothing is sent twice;
  * L2CAP PDUs are cut into data PDUs of at most the link's payload size (27 octets, or more
    after an LL_LENGTH_REQ / RSP): LLID 2 first, LLID 1 continuations;
  * link encryption (Vol 6 Part E 1, Vol 6 Part B 5.1.3): SK = e(LTK, SKDs || SKDm),
    IV = IVm || IVs, AES-CCM with the 13-octet nonce (39-bit packet counter, direction bit 1 =
    from the central, IV), AAD = header octet 0 masked with 0xE3, 4-octet MIC; a counter per
    direction counts the encrypted (non-empty) PDUs; empty PDUs stay in the clear;
  * legacy pairing (Vol 3 Part H 2.2.3, 2.2.4): c1 and s1 (STK = s1(TK, Srand, Mrand));
  * pcap: link type 256 (LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR: RF channel, signal, noise, access
    address offenses, reference access address, flags: dewhitened, signal valid, reference AA
    valid (data packets), CRC checked + valid, PDU type 2 / 3 = data from the central /
    peripheral, 0 = advertising) or 251 (the packets alone).

`self_check()` checks the CRC against make_air_captures.crc24 and the Ubertooth packet, SK and
CCM against the Core's sample data (data/ll_encryption_vectors.json) and c1 / s1 against the
specification's samples.
"""
from __future__ import annotations

import json
import os
import struct
import sys
from dataclasses import dataclass

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESCCM

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import make_air_captures as air  # noqa: E402  (crc24 reference, rf_channel)

ADVERTISING_AA = 0x8E89BED6
C, P = "central", "peripheral"
T_IFS = 150
SIGNAL = {C: -50, P: -62, "advertiser": -58, "initiator": -50}
NOISE = -95


def other(side: str) -> str:
    return P if side == C else C


# ----------------------------------------------------------------------------------------------
# Primitives
# ----------------------------------------------------------------------------------------------
def crc24(pdu: bytes, init: int) -> bytes:
    """Vol 6 Part B 3.1.1: LFSR x^24 + x^10 + x^9 + x^6 + x^4 + x^3 + x + 1, preset with `init`
    (bit n = position n), PDU fed least significant bit first; position 23 goes out first."""
    reg = init & 0xFFFFFF
    for octet in pdu:
        for n in range(8):
            fb = ((octet >> n) & 1) ^ ((reg >> 23) & 1)
            reg = (reg << 1) & 0xFFFFFF
            if fb:
                reg ^= 0b11001011011  # positions 0, 1, 3, 4, 6, 9, 10
    out = 0
    for n in range(24):
        out |= ((reg >> (23 - n)) & 1) << n
    return out.to_bytes(3, "little")


def access_address_ok(aa: int) -> bool:
    """The rules of Vol 6 Part B 2.1.2 for a data channel access address."""
    if aa == ADVERTISING_AA or bin(aa ^ ADVERTISING_AA).count("1") == 1:
        return False
    if len(set(aa.to_bytes(4, "little"))) == 1:
        return False
    bits = [(aa >> i) & 1 for i in range(32)]
    run = 1
    for i in range(1, 32):
        run = run + 1 if bits[i] == bits[i - 1] else 1
        if run > 6:
            return False
    if sum(bits[i] != bits[i - 1] for i in range(1, 32)) > 24:
        return False
    return sum(bits[i] != bits[i - 1] for i in range(27, 32)) >= 2


def aes_e(key_msb: bytes, block_msb: bytes) -> bytes:
    enc = Cipher(algorithms.AES(key_msb), modes.ECB()).encryptor()
    return enc.update(block_msb) + enc.finalize()


def xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b))


def c1(k_msb: bytes, r_msb: bytes, preq: bytes, pres: bytes, iat: int, rat: int, ia_le: bytes, ra_le: bytes) -> bytes:
    """Vol 3 Part H 2.2.3. preq / pres = the 7 octets of the Pairing Request / Response as sent
    (code first), addresses as sent (least significant first); k, r and the result most
    significant octet first."""
    p1 = pres[::-1] + preq[::-1] + bytes([rat, iat])
    p2 = bytes(4) + ia_le[::-1] + ra_le[::-1]
    return aes_e(k_msb, xor(aes_e(k_msb, xor(r_msb, p1)), p2))


def s1(k_msb: bytes, r1_msb: bytes, r2_msb: bytes) -> bytes:
    """Vol 3 Part H 2.2.4: e(k, r1' || r2'), r' = the least significant 64 bits."""
    return aes_e(k_msb, r1_msb[8:] + r2_msb[8:])


def session_key(ltk_msb: bytes, skdm_le: bytes, skds_le: bytes) -> bytes:
    """SK = e(LTK, SKD), SKD = SKDs || SKDm (SKDm the least significant half); SK msb first."""
    return aes_e(ltk_msb, (skdm_le + skds_le)[::-1])


def ccm_nonce(counter: int, from_central: bool, iv: bytes) -> bytes:
    value = counter | ((1 << 39) if from_central else 0)
    return value.to_bytes(5, "little") + iv


def encrypt(sk: bytes, iv: bytes, counter: int, from_central: bool, header0: int, payload: bytes) -> bytes:
    return AESCCM(sk, tag_length=4).encrypt(ccm_nonce(counter, from_central, iv), payload, bytes([header0 & 0xE3]))


def decrypt(sk: bytes, iv: bytes, counter: int, from_central: bool, header0: int, data: bytes) -> bytes:
    return AESCCM(sk, tag_length=4).decrypt(ccm_nonce(counter, from_central, iv), data, bytes([header0 & 0xE3]))


def air_time_us(pdu_len: int) -> int:
    return (1 + 4 + pdu_len + 3) * 8  # LE 1M: preamble, access address, PDU, CRC


def self_check() -> None:
    for n in range(48):
        sample = bytes((n * 37 + i * 11) & 0xFF for i in range(n % 40))
        assert crc24(sample, 0x9A1B2C ^ (n * 977)) == air.crc24(sample, 0x9A1B2C ^ (n * 977))
    assert crc24(bytes.fromhex("0009e8dd6ee5c578020105"), 0x555555) == bytes.fromhex("c63c96")
    with open(os.path.join(HERE, "data", "ll_encryption_vectors.json")) as f:
        s = json.load(f)["core_sample"]
    le = lambda name: bytes.fromhex(s[name + "_le"])  # noqa: E731
    sk = session_key(le("ltk")[::-1], le("skdm"), le("skds"))
    assert sk.hex() == s["sk_msb_first"].lower()
    iv = le("ivm") + le("ivs")
    for p in s["packets"]:
        enc = bytes.fromhex(p["encrypted_pdu"])
        out = encrypt(sk, iv, p["packet_counter"], p["direction"] == "central", enc[0], bytes.fromhex(p["plaintext_payload"]))
        assert out == enc[2:], p["name"]
    # The specification's samples (Vol 3 Part H 2.2.3 and 2.2.4).
    h = bytes.fromhex
    got = c1(bytes(16), h("5783D52156AD6F0E6388274EC6702EE0"), h("07071000000101")[::-1], h("05000800000302")[::-1],
             1, 0, h("A1A2A3A4A5A6")[::-1], h("B1B2B3B4B5B6")[::-1])
    assert got == h("1e1e3fef878988ead2a74dc5bef13b86"), got.hex()
    got = s1(bytes(16), h("000F0E0D0C0B0A091122334455667788"), h("010203040506070899AABBCCDDEEFF00"))
    assert got == h("9a1fe1f0e8b0f49b5b4216ae796da062"), got.hex()


# ----------------------------------------------------------------------------------------------
# Frames and the link
# ----------------------------------------------------------------------------------------------
@dataclass
class Frame:
    time_us: int
    channel: int  # channel index: 0-36 data, 37-39 advertising
    sender: str  # central / peripheral, or advertiser / initiator on the advertising channels
    aa: int
    pdu: bytes  # header + payload as sent (encrypted where the link is)
    crc_init: int
    kind: str
    event: int | None = None
    llid: int | None = None
    sn: int | None = None
    nesn: int | None = None
    md: int | None = None
    plaintext: bytes | None = None  # the payload before encryption
    counter: int | None = None  # packet counter, if encrypted
    recorded: bool = True  # False: the sniffer missed it (the link got it)
    tag: str | None = None
    index: int | None = None  # frame number in the written file

    @property
    def packet(self) -> bytes:
        return struct.pack("<I", self.aa) + self.pdu + crc24(self.pdu, self.crc_init)


@dataclass
class Item:
    side: str
    llid: int
    payload: bytes
    ready_event: int
    seq: int
    tag: str | None = None
    missed: bool = False
    encrypt: bool = False
    frame: Frame | None = None
    l2cap: bytes | None = None  # the whole L2CAP PDU this fragment belongs to (first fragment)
    delivered_event: int | None = None


LL_CONTROL = {0x00: "LL_CONNECTION_UPDATE_IND", 0x02: "LL_TERMINATE_IND", 0x03: "LL_ENC_REQ", 0x04: "LL_ENC_RSP",
              0x05: "LL_START_ENC_REQ", 0x06: "LL_START_ENC_RSP", 0x08: "LL_FEATURE_REQ", 0x09: "LL_FEATURE_RSP",
              0x0C: "LL_VERSION_IND", 0x14: "LL_LENGTH_REQ", 0x15: "LL_LENGTH_RSP"}


def advertising_frame(time_us: int, channel: int, pdu_type: int, tx_random: bool, rx_random: bool, payload: bytes,
                      sender: str, kind: str) -> Frame:
    header = bytes([pdu_type | (0x40 if tx_random else 0) | (0x80 if rx_random else 0), len(payload)])
    return Frame(time_us, channel, sender, ADVERTISING_AA, header + payload, 0x555555, kind)


def connect_ind_payload(init_a: bytes, adv_a: bytes, aa: int, crc_init: int, win_size: int, win_offset: int,
                        interval: int, latency: int, timeout: int, hop: int, sca: int) -> bytes:
    return (init_a + adv_a + struct.pack("<I", aa) + crc_init.to_bytes(3, "little") + bytes([win_size])
            + struct.pack("<HHHH", win_offset, interval, latency, timeout) + bytes.fromhex("ffffffff1f")
            + bytes([hop | (sca << 5)]))


class Link:
    """One connection, run event by event.  Callers queue PDUs (`send`, `send_l2cap`) with the
    first event they may go out in; `on_receive(link, receiver, item, event)` is called when a
    side receives a new non-empty PDU."""

    def __init__(self, aa: int, crc_init: int, interval: int, hop: int, first_anchor_us: int, latency: int = 0,
                 timeout: int = 72, win_size: int = 2, win_offset: int = 0, sca: int = 5):
        assert access_address_ok(aa), hex(aa)
        self.aa, self.crc_init, self.interval, self.hop = aa, crc_init, interval, hop
        self.latency, self.timeout, self.win_size, self.win_offset, self.sca = latency, timeout, win_size, win_offset, sca
        self.first_anchor_us = first_anchor_us
        self.frames: list[Frame] = []
        self.event = 0
        self.queue: dict[str, list[Item]] = {C: [], P: []}
        self.sn = {C: 0, P: 0}
        self.nesn = {C: 0, P: 0}
        self.counter = {C: 0, P: 0}
        self.max_payload = {C: 27, P: 27}
        self.key: tuple[bytes, bytes] | None = None  # (SK msb first, IV as on air)
        self.on_receive = None
        self.terminated = False
        self._seq = 0
        self._rx_l2cap = {C: b"", P: b""}

    def anchor(self, event: int) -> int:
        return self.first_anchor_us + event * self.interval * 1250

    def channel(self, event: int) -> int:
        return (self.hop * (event + 1)) % 37

    def event_at(self, time_us: int) -> int:
        """The first event whose anchor is at or after `time_us`."""
        return max(0, -(-(time_us - self.first_anchor_us) // (self.interval * 1250)))

    def send(self, side: str, llid: int, payload: bytes, ready_event: int | None = None, tag: str | None = None,
             missed: bool = False, encrypt: bool = False) -> Item:
        self._seq += 1
        item = Item(side, llid, payload, self.event if ready_event is None else ready_event, self._seq, tag, missed, encrypt)
        self.queue[side].append(item)
        return item

    def send_l2cap(self, side: str, cid: int, body: bytes, ready_event: int | None = None, tag: str | None = None,
                   encrypt: bool = False, missed: bool = False) -> list[Item]:
        pdu = struct.pack("<HH", len(body), cid) + body
        size = self.max_payload[side]
        items = []
        for n in range(0, len(pdu), size):
            it = self.send(side, 2 if n == 0 else 1, pdu[n:n + size], ready_event, tag, missed, encrypt)
            it.l2cap = pdu if n == 0 else None
            items.append(it)
        return items

    def _eligible(self, side: str, event: int) -> list[Item]:
        return sorted((it for it in self.queue[side] if it.ready_event <= event), key=lambda it: (it.ready_event, it.seq))

    def _transmit(self, side: str, t: int, event: int, channel: int) -> Frame:
        ready = self._eligible(side, event)
        item = ready[0] if ready else None
        md = 1 if len(ready) > 1 else 0
        llid = item.llid if item else 1
        plain = item.payload if item else b""
        header0 = llid | (self.nesn[side] << 2) | (self.sn[side] << 3) | (md << 4)
        body, counter = plain, None
        if item and item.encrypt and plain:
            assert self.key is not None
            counter = self.counter[side]
            body = encrypt(self.key[0], self.key[1], counter, side == C, header0, plain)
            self.counter[side] += 1
        if item is None:
            kind = "empty"
        elif llid == 3:
            kind = LL_CONTROL.get(plain[0], f"LL control 0x{plain[0]:02X}")
        else:
            kind = "data"
        frame = Frame(t, channel, side, self.aa, bytes([header0, len(body)]) + body, self.crc_init, kind, event, llid,
                      self.sn[side], self.nesn[side], md, plain, counter, not (item and item.missed),
                      item.tag if item else None)
        self.frames.append(frame)
        if item:
            item.frame = frame
            self.queue[side].remove(item)
        return frame, item

    def _receive(self, side: str, frame: Frame, item: Item | None, event: int) -> None:
        new = frame.sn == self.nesn[side]
        if new:
            self.nesn[side] ^= 1
        if frame.nesn != self.sn[side]:
            self.sn[side] ^= 1  # our last packet was acknowledged (nothing is lost here)
        if new and item is not None:
            item.delivered_event = event
            if self.on_receive:
                self.on_receive(self, side, item, event)

    def run_event(self) -> None:
        event = self.event
        t = self.anchor(event)
        channel = self.channel(event)
        while True:
            fc, ic = self._transmit(C, t, event, channel)
            t += air_time_us(len(fc.pdu)) + T_IFS
            self._receive(P, fc, ic, event)
            fp, ip = self._transmit(P, t, event, channel)
            t += air_time_us(len(fp.pdu)) + T_IFS
            self._receive(C, fp, ip, event)
            if ic is not None and ic.llid == 3 and ic.payload[0] == 0x02:
                self.terminated = True  # LL_TERMINATE_IND acknowledged: the link is over
                break
            if not (fc.md or fp.md):
                break
            if t + 2 * (air_time_us(2 + 27 + 4) + T_IFS) > self.anchor(event + 1) - 500:
                break
        self.event += 1

    def idle(self) -> bool:
        return not self.queue[C] and not self.queue[P]


# ----------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------
def frame_bytes(frame: Frame, linktype: int) -> bytes:
    if linktype == 251:
        return frame.packet
    assert linktype == 256
    data = frame.aa != ADVERTISING_AA
    flags = 0x0001 | 0x0002 | 0x0400 | 0x0800
    if data:
        flags |= 0x0010 | ((2 if frame.sender == C else 3) << 7)
    header = struct.pack("<BbbBIH", air.rf_channel(frame.channel), SIGNAL[frame.sender], NOISE, 0,
                         frame.aa if data else 0, flags)
    return header + frame.packet


def pcap_bytes(linktype: int, frames: list[Frame]) -> bytes:
    out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, linktype))
    for f in frames:
        body = frame_bytes(f, linktype)
        sec, usec = divmod(f.time_us, 1_000_000)
        out += struct.pack("<IIII", sec, usec, len(body), len(body)) + body
    return bytes(out)


def number(frames: list[Frame]) -> list[Frame]:
    """The recorded frames in time order, numbered from 1 as a reader counts them."""
    kept = sorted((f for f in frames if f.recorded), key=lambda f: f.time_us)
    for n, f in enumerate(kept, 1):
        f.index = n
    return kept


def att_fields(plain: bytes | None) -> dict | None:
    """Opcode / handle / value of a one-fragment L2CAP PDU on CID 4 (None otherwise)."""
    if not plain or len(plain) < 5:
        return None
    length, cid = struct.unpack("<HH", plain[:4])
    if cid != 4 or length != len(plain) - 4:
        return None
    return att_summary(plain[4:])


ATT_NAMES = {0x01: "Error Response", 0x02: "Exchange MTU Request", 0x03: "Exchange MTU Response",
             0x04: "Find Information Request", 0x05: "Find Information Response", 0x06: "Find By Type Value Request",
             0x07: "Find By Type Value Response", 0x08: "Read By Type Request", 0x09: "Read By Type Response",
             0x0A: "Read Request", 0x0B: "Read Response", 0x0C: "Read Blob Request", 0x0D: "Read Blob Response",
             0x10: "Read By Group Type Request", 0x11: "Read By Group Type Response", 0x12: "Write Request",
             0x13: "Write Response", 0x1B: "Handle Value Notification", 0x1D: "Handle Value Indication",
             0x1E: "Handle Value Confirmation", 0x52: "Write Command"}


def att_summary(att: bytes) -> dict:
    op = att[0]
    out = {"opcode": f"0x{op:02X}", "name": ATT_NAMES.get(op, "?")}
    if op in (0x0A, 0x12, 0x52, 0x1B, 0x1D, 0x0C):
        out["handle"] = f"0x{struct.unpack('<H', att[1:3])[0]:04X}"
        out["value_hex"] = att[3:].hex()
    elif op in (0x04, 0x08, 0x10):
        out["handle"] = f"0x{struct.unpack('<H', att[1:3])[0]:04X}"
        out["end_handle"] = f"0x{struct.unpack('<H', att[3:5])[0]:04X}"
        if op != 0x04:
            out["type"] = uuid_text(att[5:])
    elif op == 0x01:
        out["request_opcode"] = f"0x{att[1]:02X}"
        out["handle"] = f"0x{struct.unpack('<H', att[2:4])[0]:04X}"
        out["error"] = f"0x{att[4]:02X}"
    elif op in (0x02, 0x03):
        out["mtu"] = struct.unpack("<H", att[1:3])[0]
    elif op == 0x0B:
        out["value_hex"] = att[1:].hex()
    else:
        out["value_hex"] = att[1:].hex()
    out["att_hex"] = att.hex()
    return out


def uuid_bytes(uuid) -> bytes:
    """Little-endian as in ATT, from 0x2A00 or '7905F431-B5CE-4E99-A40F-4B1E122D00D0'."""
    if isinstance(uuid, int):
        return struct.pack("<H", uuid)
    return bytes.fromhex(uuid.replace("-", ""))[::-1]


def uuid_text(b: bytes) -> str:
    if len(b) == 2:
        return f"{struct.unpack('<H', b)[0]:04X}"
    h = b[::-1].hex().upper()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def frame_entry(f: Frame, **extra) -> dict:
    e = {"index": f.index, "time_us": f.time_us, "channel": f.channel, "direction": f.sender, "kind": f.kind}
    if f.event is not None:
        e.update(event=f.event, llid=f.llid, sn=f.sn, nesn=f.nesn, md=f.md, length=f.pdu[1])
        if f.counter is not None:
            e["packet_counter"] = f.counter
            e["encrypted"] = True
        if f.plaintext:
            e["payload_hex"] = f.plaintext.hex()
            att = att_fields(f.plaintext) if f.llid == 2 else None
            if att:
                e["att"] = att
    if f.tag:
        e["tag"] = f.tag
    e["pdu_hex"] = f.pdu.hex()
    e.update(extra)
    return e


def empty_runs(frames: list[Frame]) -> list[dict]:
    """Plain empty data PDUs as runs of consecutive frames; one hex digit per frame: bit 0 SN,
    bit 1 NESN, bit 2 MD, bit 3 set = sent by the central."""
    runs, cur = [], None
    for f in frames:
        if f.kind == "empty":
            digit = f.sn | (f.nesn << 1) | (f.md << 2) | (8 if f.sender == C else 0)
            if cur and cur["last"] == f.index - 1:
                cur["last"] = f.index
                cur["last_event"] = f.event
                cur["headers"] += f"{digit:x}"
            else:
                cur = {"first": f.index, "last": f.index, "first_event": f.event, "last_event": f.event,
                       "first_time_us": f.time_us, "headers": f"{digit:x}"}
                runs.append(cur)
    return runs


def compact_json(obj) -> str:
    """Lists of objects one entry per line (readable diffs, small files)."""
    def render(value, indent):
        pad = " " * indent
        if isinstance(value, dict) and value and any(isinstance(v, (dict, list)) and v for v in value.values()):
            keys = list(value)
            lines = ["{"]
            for k, key in enumerate(keys):
                comma = "," if k < len(keys) - 1 else ""
                lines.append(f"{pad}  {json.dumps(key)}: {render(value[key], indent + 2)}{comma}")
            lines.append(pad + "}")
            return "\n".join(lines)
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            lines = ["["]
            for j, entry in enumerate(value):
                lines.append(pad + "  " + json.dumps(entry, separators=(",", ":")) + ("," if j < len(value) - 1 else ""))
            lines.append(pad + "]")
            return "\n".join(lines)
        return json.dumps(value, separators=(",", ":"))
    return render(obj, 0) + "\n"


def tshark_att(path: str) -> list[tuple[int, str]]:
    """(frame number, whole ATT PDU as hex) for every frame tshark decodes as ATT."""
    import subprocess
    out = subprocess.run(["tshark", "-r", path, "-T", "json", "-x", "-J", "frame btatt"], capture_output=True,
                         text=True, check=True).stdout
    rows = []
    for p in json.loads(out):
        layers = p["_source"]["layers"]
        raw = layers.get("btatt_raw")
        if raw:
            rows.append((int(layers["frame"]["frame.number"]), raw[0] if isinstance(raw[0], str) else raw[0][0]))
    return rows


def write_file(path: str, content: bytes | str) -> None:
    mode = "w" if isinstance(content, str) else "wb"
    with open(path, mode) as f:
        f.write(content)


def mac_text(addr_le: bytes) -> str:
    return ":".join(f"{b:02X}" for b in addr_le[::-1])


if __name__ == "__main__":
    self_check()
    print("ll_link self-check passed")

#!/usr/bin/env python3
"""A small GATT server and ATT client for the hand-built sniffed links (ll_link.py), after the
Core specification (5.4 Vol 3 Part F: ATT PDUs; Part G: services, characteristic declarations,
discovery procedures).  Used by make_att_only_export.py and make_dual_gatt_sniffed.py.

Db: an attribute table built service by service (primary service declarations 0x2800,
characteristic declarations 0x2803 = properties, value handle, UUID; values; descriptors),
answering Exchange MTU, Find Information, Read By Type, Read By Group Type, Read and Write
Requests and Write Commands as Part F 3.4 says (same-length entries, as many as ATT_MTU allows,
Attribute Not Found at the end, Insufficient Authentication for values that need an encrypted
link, which these links never are).

AttEngine: per side of a Link, an optional server (a Db) and an optional client: a generator
that yields ("req", pdu) and gets the response back, ("cmd", pdu), ("wait_events", n),
("wait_until", time_us), ("wait_indication",) (resumes with the indication); a server script
yields ("notify", pdu), ("indicate", pdu) (resumes on the confirmation), waits likewise.  One
request outstanding per client; a server answers `server_delay` events after the request
arrived, a client's next PDU goes `client_delay` events after the response; an indication is
confirmed `client_delay` events after it arrived.
"""
from __future__ import annotations

import struct

import ll_link as ll
from ll_link import uuid_bytes, uuid_text

PRIMARY, CHARACTERISTIC, CCCD = 0x2800, 0x2803, 0x2902
READ, WRITE_NO_RSP, WRITE, NOTIFY, INDICATE = 0x02, 0x04, 0x08, 0x10, 0x20
REQUESTS = {0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20}
COMMANDS = {0x52, 0xD2}
RESPONSES = {0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x21}


class Attr:
    def __init__(self, handle, type_, value, read="open", write=None, name=""):
        self.handle, self.type, self.value = handle, uuid_bytes(type_), bytes(value)
        self.read, self.write, self.name = read, write, name


class Db:
    def __init__(self, name: str, mtu: int = 23):
        self.name = name
        self.attrs: list[Attr] = []
        self.mtu = mtu  # this side's receive MTU (what it answers in Exchange MTU)
        self.on_write = None  # (db, handle, value, event)

    def _next(self, handle):
        if handle is None:
            return self.attrs[-1].handle + 1 if self.attrs else 1
        assert not self.attrs or handle > self.attrs[-1].handle
        return handle

    def service(self, uuid, handle=None, name=""):
        h = self._next(handle)
        self.attrs.append(Attr(h, PRIMARY, uuid_bytes(uuid), name=name))
        return h

    def characteristic(self, uuid, props, value=b"", read="open", write=None, name="", cccd=False, descriptors=()):
        """Declaration + value (+ CCCD if notify / indicate and cccd, + other descriptors);
        returns the value handle."""
        h = self._next(None)
        self.attrs.append(Attr(h, CHARACTERISTIC, bytes([props]) + struct.pack("<H", h + 1) + uuid_bytes(uuid),
                               name=name + " declaration"))
        self.attrs.append(Attr(h + 1, uuid, value, read if props & READ else None,
                               write if props & (WRITE | WRITE_NO_RSP) else None, name))
        if cccd:
            self.attrs.append(Attr(h + 2, CCCD, b"\x00\x00", "open", "open", name + " CCCD"))
        for duuid, dvalue, dname in descriptors:
            self.attrs.append(Attr(self.attrs[-1].handle + 1, duuid, dvalue, "open", None, dname))
        return h + 1

    def by_handle(self, handle):
        for a in self.attrs:
            if a.handle == handle:
                return a
        return None

    def service_end(self, decl: Attr) -> int:
        later = [a.handle for a in self.attrs if a.type == uuid_bytes(PRIMARY) and a.handle > decl.handle]
        nxt = min(later) if later else None
        inside = [a.handle for a in self.attrs if a.handle >= decl.handle and (nxt is None or a.handle < nxt)]
        return max(inside)

    def table(self) -> list[dict]:
        out = []
        for a in self.attrs:
            e = {"handle": f"0x{a.handle:04X}", "type": uuid_text(a.type), "what": a.name}
            if a.type == uuid_bytes(PRIMARY):
                e["service"] = uuid_text(a.value)
                e["end_handle"] = f"0x{self.service_end(a):04X}"
            elif a.type == uuid_bytes(CHARACTERISTIC):
                e["properties"] = f"0x{a.value[0]:02X}"
                e["value_handle"] = f"0x{struct.unpack('<H', a.value[1:3])[0]:04X}"
                e["uuid"] = uuid_text(a.value[3:])
            e["value_hex"] = a.value.hex()
            if a.value and all(32 <= b < 127 for b in a.value) and a.type not in (uuid_bytes(PRIMARY), uuid_bytes(CHARACTERISTIC)):
                e["text"] = a.value.decode()
            if a.read != "open":
                e["read"] = a.read or "not permitted"  # auth: needs an encrypted link
            if a.write:
                e["write"] = a.write
            out.append(e)
        return out

    # -- ATT server (Part F 3.4) --------------------------------------------------------------
    @staticmethod
    def error(op, handle, code):
        return bytes([0x01, op]) + struct.pack("<H", handle) + bytes([code])

    def respond(self, req: bytes, mtu: int, event: int):
        op = req[0]
        if op == 0x02:
            return bytes([0x03]) + struct.pack("<H", self.mtu)
        if op in (0x04, 0x08, 0x10):
            start, end = struct.unpack("<HH", req[1:5])
            if start == 0 or start > end:
                return self.error(op, start, 0x01)
            inside = [a for a in self.attrs if start <= a.handle <= end]
        if op == 0x04:  # Find Information
            if not inside:
                return self.error(op, start, 0x0A)
            size = len(inside[0].type)
            out = bytes([0x05, 1 if size == 2 else 2])
            for a in inside:
                if len(a.type) != size or len(out) + 2 + size > mtu:
                    break
                out += struct.pack("<H", a.handle) + a.type
            return out
        if op == 0x08:  # Read By Type
            want = req[5:]
            found = [a for a in inside if a.type == want]
            if not found:
                return self.error(op, start, 0x0A)
            if found[0].read != "open":
                return self.error(op, found[0].handle, 0x05 if found[0].read == "auth" else 0x02)
            size = min(len(found[0].value), mtu - 4, 253)
            out = bytes([0x09, 2 + size])
            for a in found:
                if a.read != "open" or len(a.value) != len(found[0].value) or len(out) + 2 + size > mtu:
                    break
                out += struct.pack("<H", a.handle) + a.value[:size]
            return out
        if op == 0x10:  # Read By Group Type
            if req[5:] != uuid_bytes(PRIMARY):
                return self.error(op, start, 0x10)
            found = [a for a in inside if a.type == uuid_bytes(PRIMARY)]
            if not found:
                return self.error(op, start, 0x0A)
            size = len(found[0].value)
            out = bytes([0x11, 4 + size])
            for a in found:
                if len(a.value) != size or len(out) + 4 + size > mtu:
                    break
                out += struct.pack("<HH", a.handle, self.service_end(a)) + a.value
            return out
        if op == 0x0A:  # Read
            handle = struct.unpack("<H", req[1:3])[0]
            a = self.by_handle(handle)
            if a is None:
                return self.error(op, handle, 0x01)
            if a.read != "open":
                return self.error(op, handle, 0x05 if a.read == "auth" else 0x02)
            return bytes([0x0B]) + a.value[:mtu - 1]
        if op in (0x12, 0x52):  # Write Request / Command
            handle = struct.unpack("<H", req[1:3])[0]
            a = self.by_handle(handle)
            code = 0x01 if a is None else (None if a.write == "open" else 0x05 if a.write == "auth" else 0x03)
            if code is not None:
                return self.error(op, handle, code) if op == 0x12 else None
            a.value = req[3:]
            if self.on_write:
                self.on_write(self, handle, a.value, event)
            return b"\x13" if op == 0x12 else None
        if op in REQUESTS:
            return self.error(op, 0, 0x06)  # Request Not Supported
        return None


# -- the client's discovery (Part G 4.4.1, 4.6.1, 4.7.1) ------------------------------------------
def discover_all(found: dict, pause=None):
    """Primary services, then each service's characteristics, then each characteristic's
    descriptors, continuing after the last handle of each response; `found` gets
    services / characteristics / descriptors.  pause(n): extra events the client waits
    before its n-th request (0 = as soon as the engine's client_delay allows)."""
    count = [0]

    def req(pdu):
        extra = pause(count[0]) if pause else 0
        count[0] += 1
        return ("req", pdu) if not extra else ("req_after", extra, pdu)

    services, start = [], 0x0001
    while True:
        rsp = yield req(bytes([0x10]) + struct.pack("<HH", start, 0xFFFF) + uuid_bytes(PRIMARY))
        if rsp[0] != 0x11:
            break
        size = rsp[1]
        for n in range(2, len(rsp), size):
            s, e = struct.unpack("<HH", rsp[n:n + 4])
            services.append((s, e, rsp[n + 4:n + size]))
        if services[-1][1] == 0xFFFF:
            break
        start = services[-1][1] + 1
    found["services"] = [(s, e, uuid_text(u)) for s, e, u in services]
    chars = []
    for s, e, _u in services:
        start, mine = s, []
        while start <= e:
            rsp = yield req(bytes([0x08]) + struct.pack("<HH", start, e) + uuid_bytes(CHARACTERISTIC))
            if rsp[0] != 0x09:
                break
            size = rsp[1]
            for n in range(2, len(rsp), size):
                decl = struct.unpack("<H", rsp[n:n + 2])[0]
                props, vh = rsp[n + 2], struct.unpack("<H", rsp[n + 3:n + 5])[0]
                mine.append((decl, props, vh, rsp[n + 5:n + size]))
            start = mine[-1][0] + 1
        for i, (decl, props, vh, u) in enumerate(mine):
            last = mine[i + 1][0] - 1 if i + 1 < len(mine) else e
            chars.append((decl, props, vh, uuid_text(u), last))
    found["characteristics"] = chars
    descs = []
    for decl, props, vh, u, last in chars:
        start = vh + 1
        while start <= last:
            rsp = yield req(bytes([0x04]) + struct.pack("<HH", start, last))
            if rsp[0] != 0x05:
                break
            size = 2 if rsp[1] == 1 else 16
            for n in range(2, len(rsp), 2 + size):
                h = struct.unpack("<H", rsp[n:n + 2])[0]
                descs.append((h, uuid_text(rsp[n + 2:n + 2 + size])))
                start = h + 1
    found["descriptors"] = descs
    return found


def read_req(handle):
    return bytes([0x0A]) + struct.pack("<H", handle)


def write_req(handle, value):
    return bytes([0x12]) + struct.pack("<H", handle) + bytes(value)


def notification(handle, value):
    return bytes([0x1B]) + struct.pack("<H", handle) + bytes(value)


def indication(handle, value):
    return bytes([0x1D]) + struct.pack("<H", handle) + bytes(value)


class Bearer:
    def __init__(self, side, db=None, client=None):
        self.side, self.db, self.client = side, db, client
        self.server_script = None
        self.not_before = {"client": 0, "server": 0}
        self.waiting = {"client": None, "server": None}
        self.done = {"client": client is None, "server": True}


class AttEngine:
    def __init__(self, link: ll.Link, bearers: dict, server_delay: int = 1, client_delay: int = 1, mtu: int = 23):
        self.link, self.b = link, bearers
        self.server_delay, self.client_delay = server_delay, client_delay
        self.mtu = mtu
        self.log = []  # (event, side that sent, role 'client'/'server', att pdu, Item)
        self._rx = {ll.C: b"", ll.P: b""}
        self.control = None  # (link, receiver, item, event) for LL control PDUs
        link.on_receive = self._on_receive

    def start_client(self, side, event):
        b = self.b[side]
        b.not_before["client"] = event
        self._advance(side, "client", None, event)

    def start_server_script(self, side, script, event):
        b = self.b[side]
        b.server_script = script
        b.done["server"] = False
        b.not_before["server"] = event
        self._advance(side, "server", None, event)

    def send_att(self, side, role, pdu, ready_event):
        items = self.link.send_l2cap(side, 4, pdu, ready_event)
        assert len(items) == 1, "ATT PDUs on these links fit one data PDU"
        items[0].tag = role
        return items[0]

    def _advance(self, side, role, value, event):
        b = self.b[side]
        gen = b.client if role == "client" else b.server_script
        b.not_before[role] = max(b.not_before[role], event)
        b.waiting[role] = None
        while True:
            try:
                action = gen.send(value)
            except StopIteration:
                b.done[role] = True
                return
            value = None
            kind = action[0]
            if kind == "req_after":  # ("req_after", extra events, pdu)
                b.not_before[role] += action[1]
                kind, action = "req", ("req", action[2])
            if kind == "wait_events":
                b.not_before[role] += action[1]
            elif kind == "wait_until":
                b.not_before[role] = max(b.not_before[role], self.link.event_at(action[1]))
            elif kind in ("cmd", "notify"):
                self.send_att(side, "client" if kind == "cmd" else "server", action[1], b.not_before[role])
            elif kind in ("req", "indicate"):
                self.send_att(side, role, action[1], b.not_before[role])
                b.waiting[role] = "response" if kind == "req" else "confirmation"
                return
            elif kind == "wait_indication":
                b.waiting[role] = "indication"
                return
            else:
                raise ValueError(action)

    def _on_receive(self, link, side, item, event):
        if item.llid == 3:
            if self.control:
                self.control(link, side, item, event)
            return
        data = item.payload if item.llid == 2 else self._rx[side] + item.payload
        length, cid = struct.unpack("<HH", data[:4])
        if len(data) - 4 < length:
            self._rx[side] = data
            return
        self._rx[side] = b""
        if cid != 4:
            return
        pdu = data[4:]
        op = pdu[0]
        sender = ll.other(side)
        role = "client" if op in REQUESTS or op in COMMANDS or op == 0x1E else "server"
        self.log.append((event, sender, role, pdu, item))
        b = self.b[side]
        if op in REQUESTS or op in COMMANDS:
            if op == 0x02:
                # ATT_MTU = the smaller of the client's Rx MTU (in the request) and the server's
                self.mtu = min(struct.unpack("<H", pdu[1:3])[0], b.db.mtu)
            rsp = b.db.respond(pdu, self.mtu, event)
            if rsp is not None:
                self.send_att(side, "server", rsp, event + self.server_delay)
        elif op in RESPONSES:
            assert b.waiting["client"] == "response", (side, pdu.hex())
            self._advance(side, "client", pdu, event + self.client_delay)
        elif op == 0x1D:
            self.send_att(side, "client", b"\x1e", event + self.client_delay)
            if b.waiting["client"] == "indication":
                self._advance(side, "client", pdu, event + self.client_delay)
        elif op == 0x1E:
            assert b.waiting["server"] == "confirmation"
            self._advance(side, "server", None, event + self.client_delay)

    def finished(self) -> bool:
        return all(b.done["client"] and b.done["server"] for b in self.b.values()) and self.link.idle()

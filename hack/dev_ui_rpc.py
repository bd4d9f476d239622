#!/usr/bin/env python3
"""Calls a JSON-RPC method of Quarkus' Dev UI (dev mode) and prints its result as JSON.

Usage: hack/dev-ui-rpc.py http://127.0.0.1:8080 qkcm-devui_getState

(methods are <extension namespace>_<method>; qkcm's card's: qkcm-devui_getState, qkcm-devui_getSummary)

The Dev UI's JSON-RPC runs over a WebSocket (/q/dev-ui/json-rpc-ws); this is a minimal client of it
(Python's standard library only: the handshake, one masked text frame out, text frames in until the
answer to our id arrives). Exit code 1 with the error on stderr when the call fails.
"""
import base64
import json
import os
import socket
import struct
import sys
import urllib.parse


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("connection closed")
        buf += chunk
    return buf


def recv_frame(sock):
    """One whole message (continuation frames joined); answers pings."""
    data, opcode = b"", None
    while True:
        b1, b2 = recv_exact(sock, 2)
        fin, op = b1 & 0x80, b1 & 0x0F
        n = b2 & 0x7F
        if n == 126:
            n = struct.unpack(">H", recv_exact(sock, 2))[0]
        elif n == 127:
            n = struct.unpack(">Q", recv_exact(sock, 8))[0]
        mask = recv_exact(sock, 4) if b2 & 0x80 else None
        payload = recv_exact(sock, n)
        if mask:
            payload = bytes(c ^ mask[i % 4] for i, c in enumerate(payload))
        if op == 0x9:  # ping
            send_frame(sock, payload, 0xA)
            continue
        if op == 0x8:
            raise ConnectionError("closed by the server")
        if op != 0:
            opcode = op
        data += payload
        if fin:
            return opcode, data


def send_frame(sock, payload, opcode=0x1):
    header = bytes([0x80 | opcode])
    n = len(payload)
    if n < 126:
        header += bytes([0x80 | n])
    elif n < 65536:
        header += bytes([0x80 | 126]) + struct.pack(">H", n)
    else:
        header += bytes([0x80 | 127]) + struct.pack(">Q", n)
    mask = os.urandom(4)
    sock.sendall(header + mask + bytes(c ^ mask[i % 4] for i, c in enumerate(payload)))


def connect(host, port, path, timeout=60):
    """An open WebSocket (client side) to ws://host:port/path."""
    sock = socket.create_connection((host, port), timeout=timeout)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                  f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += recv_exact(sock, 1)
    if b" 101 " not in head.split(b"\r\n")[0]:
        raise ConnectionError("no WebSocket upgrade: " + head.split(b"\r\n")[0].decode())
    return sock


def request(sock, message):
    """Sends a JSON message with an id and returns the JSON answer with the same id (others are skipped)."""
    send_frame(sock, json.dumps(message).encode())
    while True:
        _, data = recv_frame(sock)
        answer = json.loads(data)
        if answer.get("id") == message["id"]:
            return answer


def call(base, method, params=None, timeout=60):
    url = urllib.parse.urlparse(base)
    sock = connect(url.hostname, url.port or 80, "/q/dev-ui/json-rpc-ws", timeout)
    try:
        return request(sock, {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}})
    finally:
        sock.close()


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    msg = call(sys.argv[1], sys.argv[2])
    if "error" in msg:
        print(json.dumps(msg["error"]), file=sys.stderr)
        return 1
    result = msg.get("result")
    # Dev UI wraps results: {"messageType": "Response", "object": ...}
    if isinstance(result, dict) and "object" in result and "messageType" in result:
        result = result["object"]
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

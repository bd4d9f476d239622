#!/usr/bin/env python3
"""Screenshot of a page (e.g. a Dev UI page) after it has had time to fetch its live data: headless Chromium
driven over its DevTools protocol, with a wall-clock wait (chromium --screenshot's virtual time does not
wait for the Dev UI's WebSocket answers).

Usage: hack/dev_ui_screenshot.py URL OUT.png [seconds to wait, default 8] [WIDTHxHEIGHT, default 1500x1100]
"""
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dev_ui_rpc  # noqa: E402  (its WebSocket client)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    url, out = sys.argv[1], sys.argv[2]
    wait = float(sys.argv[3]) if len(sys.argv) > 3 else 8
    width, height = (int(v) for v in (sys.argv[4] if len(sys.argv) > 4 else "1500x1100").split("x"))
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not browser:
        print("no chromium on PATH", file=sys.stderr)
        return 1
    port = free_port()
    profile = tempfile.mkdtemp(prefix="qkcm-shot-")
    proc = subprocess.Popen([browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                             f"--remote-debugging-port={port}", f"--user-data-dir={profile}",
                             f"--window-size={width},{height}", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        targets = None
        for _ in range(60):
            try:
                targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5))
                if any(t.get("type") == "page" for t in targets):
                    break
            except OSError:
                pass
            time.sleep(0.5)
        page = next(t for t in targets if t.get("type") == "page")
        ws = urllib.parse.urlparse(page["webSocketDebuggerUrl"])
        sock = dev_ui_rpc.connect("127.0.0.1", port, ws.path)
        dev_ui_rpc.request(sock, {"id": 1, "method": "Emulation.setDeviceMetricsOverride",
                                  "params": {"width": width, "height": height, "deviceScaleFactor": 1,
                                             "mobile": False}})
        dev_ui_rpc.request(sock, {"id": 2, "method": "Page.navigate", "params": {"url": url}})
        time.sleep(wait)
        shot = dev_ui_rpc.request(sock, {"id": 3, "method": "Page.captureScreenshot", "params": {"format": "png"}})
        with open(out, "wb") as f:
            f.write(base64.b64decode(shot["result"]["data"]))
        sock.close()
        print(out)
        return 0
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

"""A run that holds silent CONNECT tunnels open through the proxy srt names in HTTPS_PROXY.

usage: hold.py HOST PORT ATTEMPTS FIRST_FLIGHT_SECS REPORT

Opens ATTEMPTS tunnels to HOST:PORT one after the other and never sends a byte through
them; keeps those that got 200. Then creates ./holding, waits for ./go (at most 120 s),
counts the tunnels the proxy closed before that, and waits for the proxy to close the rest
(each should last about FIRST_FLIGHT_SECS). Writes a JSON report to REPORT.
"""
import json
import os
import select
import socket
import sys
import time

host, port, attempts, first_flight, report = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
proxy = int(os.environ["HTTPS_PROXY"].rstrip("/").rsplit(":", 1)[1])
req = ("CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n" % (host, port, host, port)).encode()

held, refused, errors = {}, {}, []
start = time.monotonic()
for _ in range(attempts):
    s = socket.socket()
    try:
        s.settimeout(20)
        s.connect(("127.0.0.1", proxy))
        s.sendall(req)
        head = b""
        while b"\r\n\r\n" not in head:
            b = s.recv(4096)
            if not b:
                break
            head += b
    except OSError as e:
        errors.append(str(e))
        s.close()
        continue
    lines = head.split(b"\r\n")
    if lines[0].startswith(b"HTTP/1.1 200"):
        held[s.fileno()] = (s, time.monotonic())
        continue
    why = [l.split(b":", 1)[1].strip() for l in lines if l.lower().startswith(b"x-proxy-error:")]
    key = (why[0] if why else lines[0]).decode(errors="replace")
    refused[key] = refused.get(key, 0) + 1
    s.close()
opened_s = time.monotonic() - start
count = len(held)
open("holding", "w").close()

deadline = time.monotonic() + 120
while not os.path.exists("go") and time.monotonic() < deadline:
    time.sleep(0.05)

poll = select.poll()
for fd in held:
    poll.register(fd, select.POLLIN)
closed_before_go = len(poll.poll(0))
ages = []
end = time.monotonic() + first_flight + 15
while held and time.monotonic() < end:
    for fd, _ in poll.poll(200):
        s, t = held.pop(fd)
        poll.unregister(fd)
        ages.append(time.monotonic() - t)
        s.close()

with open(report, "w") as f:
    json.dump({
        "held": count,
        "refused": refused,
        "errors": len(errors),
        "first_errors": errors[:3],
        "opened_s": round(opened_s, 2),
        "closed_before_go": closed_before_go,
        "still_open": len(held),
        "max_age_s": round(max(ages, default=0.0), 2),
    }, f)

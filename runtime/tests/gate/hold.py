# Inside srt: opens N CONNECT tunnels to allowed.test:PORT and sends nothing through
# them, then holds them for SECS seconds. Prints "held K" once done opening.
import base64, os, socket, sys, time, urllib.parse

port, n, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
u = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
auth = ""
if u.username:
    auth = "Proxy-Authorization: Basic " + base64.b64encode(f"{u.username}:{u.password}".encode()).decode() + "\r\n"
held = []
try:
    for _ in range(n):
        s = socket.create_connection((u.hostname, u.port), timeout=10)
        s.sendall(f"CONNECT allowed.test:{port} HTTP/1.1\r\n{auth}\r\n".encode())
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            c = s.recv(1)
            if not c:
                break
            head += c
        if not head.startswith(b"HTTP/1.1 200"):
            print("refused", head[:40], flush=True)
            break
        held.append(s)
except OSError as e:
    print("error", e, flush=True)
print("held", len(held), flush=True)
time.sleep(secs)

# Inside srt: one fronting attempt and one honest request through a tunnel to
# allowed.test:PORT, opened as a CONNECT (HTTPS_PROXY), a SOCKS5 (ALL_PROXY) or a direct
# connect (transparent mode). Prints: VIA ATTACK evil=yes|no honest=ok|fail:...
import base64, os, socket, ssl, sys, urllib.parse

via, attack, port = sys.argv[1], sys.argv[2], int(sys.argv[3])


def tunnel(host="allowed.test"):
    if via == "direct":
        return socket.create_connection((host, port), timeout=10)
    if via == "connect":
        u = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
        s = socket.create_connection((u.hostname, u.port), timeout=10)
        auth = ""
        if u.username:
            cred = base64.b64encode(f"{u.username}:{u.password}".encode()).decode()
            auth = f"Proxy-Authorization: Basic {cred}\r\n"
        s.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\n{auth}\r\n".encode())
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            c = s.recv(1)
            if not c:
                raise OSError("closed")
            head += c
        if not head.startswith(b"HTTP/1.1 200"):
            raise OSError(head)
        return s
    u = urllib.parse.urlsplit(os.environ["ALL_PROXY"])
    s = socket.create_connection((u.hostname, u.port), timeout=10)
    s.sendall(b"\x05\x02\x00\x02")  # no auth or user/password: the proxy chooses
    choice = s.recv(2)
    if choice == b"\x05\x02":
        user, pw = (u.username or "").encode(), (u.password or "").encode()
        s.sendall(bytes([1, len(user)]) + user + bytes([len(pw)]) + pw)
        assert s.recv(2) == b"\x01\x00"
    else:
        assert choice == b"\x05\x00", choice
    s.sendall(b"\x05\x01\x00\x03" + bytes([len(host)]) + host.encode() + port.to_bytes(2, "big"))
    r = s.recv(10)
    assert r[1] == 0, r
    return s


def read_all(s):
    out = b""
    try:
        while True:
            c = s.recv(65536)
            if not c:
                break
            out += c
    except Exception:
        pass
    return out.decode("latin-1")


def tls(before, sni):
    s = tunnel()
    if before:
        s.sendall(before)
    ctx = ssl.create_default_context(cafile=os.environ["VCA"])
    try:
        t = ctx.wrap_socket(s, server_hostname=sni)
        t.sendall(f"GET / HTTP/1.1\r\nHost: {sni}\r\nConnection: close\r\n\r\n".encode())
        return read_all(t)
    except Exception as e:
        return "error " + type(e).__name__


def http(data):
    s = tunnel()
    try:
        s.sendall(data)
    except Exception:
        pass
    return read_all(s)


if attack == "alert":
    bad, good = tls(b"\x15\x03\x03\x00\x02\x01\x5a", "evil.test"), tls(b"", "allowed.test")
elif attack == "empty":
    bad = http(b"\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n")
    good = http(b"\r\nGET / HTTP/1.1\r\nHost: allowed.test\r\n\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n")
else:
    bad = http(b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\nHost: evil.test\r\n\r\n")
    good = http(b"GET /" + b"a" * 1000 + b" HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
honest = "ok" if "vhost=allowed.test" in good and "evil" not in good else "fail:" + repr(good[:80])
print(via, attack, "evil=" + ("yes" if "=evil.test" in bad else "no"), "honest=" + honest, flush=True)

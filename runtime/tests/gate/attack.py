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


def hello(sni, share):
    """A TLS 1.3 ClientHello offering X25519 and P-256, with a P-256 key share `share`
    (None: any TLS 1.3 server asks for a retry), the same random and session id each time."""
    def ext(t, d):
        return t.to_bytes(2, "big") + len(d).to_bytes(2, "big") + d
    n = sni.encode()
    shares = b"" if share is None else b"\x00\x17\x00\x41" + share
    exts = (ext(0, (len(n) + 3).to_bytes(2, "big") + b"\x00" + len(n).to_bytes(2, "big") + n)
            + ext(10, b"\x00\x04\x00\x1d\x00\x17") + ext(13, b"\x00\x04\x04\x03\x08\x04")
            + ext(43, b"\x02\x03\x04") + ext(45, b"\x01\x01")
            + ext(51, len(shares).to_bytes(2, "big") + shares))
    body = (b"\x03\x03" + b"\x42" * 32 + b"\x20" + b"\x24" * 32 + b"\x00\x02\x13\x01\x01\x00"
            + len(exts).to_bytes(2, "big") + exts)
    msg = b"\x01" + len(body).to_bytes(3, "big") + body
    return b"\x16\x03\x01" + len(msg).to_bytes(2, "big") + msg


def records(s):
    """The TLS records the server sends until it closes."""
    buf, out = b"", []
    try:
        while True:
            c = s.recv(65536)
            if not c:
                break
            buf += c
            while len(buf) >= 5 and len(buf) >= 5 + int.from_bytes(buf[3:5], "big"):
                n = 5 + int.from_bytes(buf[3:5], "big")
                out.append(buf[:n])
                buf = buf[n:]
    except Exception:
        pass
    return out


# P-256's generator: a valid point for the second hello's key share
P256_G = bytes.fromhex("04" "6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296"
                       "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5")
HRR = bytes.fromhex("cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c")


def retried(second):
    """A hello for allowed.test that makes the server ask for a retry, then (sent at once)
    a second hello for `second`: 'evil.test' when the server answered the second one."""
    s = tunnel()
    s.sendall(hello("allowed.test", None) + b"\x14\x03\x03\x00\x01\x01" + hello(second, P256_G))
    hellos = [r for r in records(s) if r[0] == 0x16 and r[5] == 2]
    if hellos and hellos[0][11:43] == HRR and len(hellos) > 1:
        return "sni=" + second
    return "no"


if attack == "hrr":
    bad = retried("evil.test")
    # Python's ssl offers X25519; the server wants P-256 and asks for a retry
    good = tls(b"", "allowed.test")
elif attack == "alert":
    bad, good = tls(b"\x15\x03\x03\x00\x02\x01\x5a", "evil.test"), tls(b"", "allowed.test")
elif attack == "empty":
    bad = http(b"\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n")
    good = http(b"\r\nGET / HTTP/1.1\r\nHost: allowed.test\r\n\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n")
else:
    bad = http(b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\nHost: evil.test\r\n\r\n")
    good = http(b"GET /" + b"a" * 1000 + b" HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
honest = "ok" if "vhost=allowed.test" in good and "evil" not in good else "fail:" + repr(good[:80])
print(via, attack, "evil=" + ("yes" if "=evil.test" in bad else "no"), "honest=" + honest, flush=True)

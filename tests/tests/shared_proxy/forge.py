"""A run that tries to reach the proxy srt names in HTTPS_PROXY as someone else: from
sockets it bound itself (allowLocalBinding binds them where asked) to the pod's own
127.0.0.1, to an address it made up, and to the wildcard address, and from a plain socket.
Each asks the proxy for a tunnel to a host of its own (`<label>.forged.test`, refused), so
the proxy's log says which source address each came from. Prints one line per attempt.
"""
import os
import socket

proxy = int(os.environ["HTTPS_PROXY"].rstrip("/").rsplit(":", 1)[1])
for label, bind in [("pod", "127.0.0.1"), ("madeup", "127.0.0.2"), ("wildcard", "0.0.0.0"), ("plain", None)]:
    s = socket.socket()
    s.settimeout(10)
    try:
        if bind:
            s.bind((bind, 0))
        s.connect(("127.0.0.1", proxy))
        s.sendall(("CONNECT %s.forged.test:443 HTTP/1.1\r\nHost: %s.forged.test:443\r\n\r\n" % (label, label)).encode())
        print(label, s.recv(64).split(b"\r\n")[0].decode())
    except OSError as e:
        print(label, "error", e)
    s.close()

# An OpenSSL server (Python's ssl) serving allowed.test and evil.test from one address: it
# wants P-256 only, so a client whose key share is X25519 is asked for a retry, and it
# appends every name its server-name callback is given to argv[3]. OpenSSL reads the second
# ClientHello after a retry as a new one and serves the name in it.
import http.server, ssl, sys


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        host = (self.headers.get("Host") or "-").split(":")[0]
        body = ("vhost=%s sni=%s\n" % (host, getattr(self.connection, "sni", "-"))).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
ctx.set_ecdh_curve("prime256v1")
names = open(sys.argv[3], "a")


def sni(sock, name, c):
    sock.sni = name
    names.write("%s\n" % name)
    names.flush()


ctx.sni_callback = sni
t = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
t.socket = ctx.wrap_socket(t.socket, server_side=True)
print("tls=%d" % t.server_address[1], flush=True)
t.serve_forever()

//! The server families the gate is judged against, each serving `allowed.test` and
//! `evil.test` from one address (as a CDN edge or shared host does) and answering
//! `vhost=<Host> sni=<SNI>`: Go's crypto/tls and net/http, OpenSSL through Python's ssl and
//! http.server, Node's https/http (OpenSSL, llhttp), nginx (OpenSSL, its own parser), and
//! rustls (srt_tests::vhost). Each is skipped, and said so, where its tool is missing.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use srt_tests::vhost::Certs;

/// A running family server: its TLS and plain-HTTP ports, killed on drop.
pub struct Family {
    pub name: &'static str,
    pub tls: u16,
    pub http: Option<u16>,
    child: Option<Child>,
}

impl Drop for Family {
    fn drop(&mut self) {
        if let Some(c) = &mut self.child {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn have(tool: &str) -> bool {
    Command::new(tool).arg(if tool == "go" { "version" } else { "-v" }).output().is_ok_and(|o| o.status.success())
        || Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// Starts `cmd`, whose first stdout line is `tls=PORT http=PORT`.
fn spawn(name: &'static str, mut cmd: Command) -> Family {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::inherit()).stdin(Stdio::null()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let port = |k: &str| line.split_whitespace().find_map(|w| w.strip_prefix(k)).and_then(|p| p.parse().ok());
    let tls = port("tls=").unwrap_or_else(|| panic!("{name} did not start: {line:?}"));
    Family { name, tls, http: port("http="), child: Some(child) }
}

const GO: &str = r#"package main
import ("crypto/tls"; "fmt"; "net"; "net/http"; "os")
func main() {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sni := "-"
		if r.TLS != nil { sni = r.TLS.ServerName }
		host, _, err := net.SplitHostPort(r.Host); if err != nil { host = r.Host }
		fmt.Fprintf(w, "vhost=%s sni=%s\n", host, sni)
	})
	cert, err := tls.LoadX509KeyPair(os.Args[1], os.Args[2]); if err != nil { panic(err) }
	tl, _ := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	pl, _ := net.Listen("tcp", "127.0.0.1:0")
	fmt.Printf("tls=%d http=%d\n", tl.Addr().(*net.TCPAddr).Port, pl.Addr().(*net.TCPAddr).Port)
	go http.Serve(tl, h)
	http.Serve(pl, h)
}
"#;

/// Go's crypto/tls (skips warning alerts before the hello) and net/http (1 MiB heads).
pub fn go(dir: &Path, certs: &Certs) -> Option<Family> {
    if !have("go") {
        return None;
    }
    let src = dir.join("vhost.go");
    std::fs::write(&src, GO).unwrap();
    let bin = dir.join("vhost-go");
    let built = Command::new("go")
        .arg("build")
        .arg("-o")
        .arg(&bin)
        .arg(&src)
        .env("GO111MODULE", "off")
        .env("GOFLAGS", "")
        .status()
        .is_ok_and(|s| s.success());
    assert!(built, "go build of the Go vhost server failed");
    let mut c = Command::new(bin);
    c.arg(&certs.cert).arg(&certs.key);
    Some(spawn("go", c))
}

const PY: &str = r#"import http.server, ssl, sys, threading
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        host = (self.headers.get("Host") or "-").split(":")[0]
        sni = getattr(self.connection, "sni", None) or "-"
        body = ("vhost=%s sni=%s\n" % (host, sni)).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(sys.argv[1], sys.argv[2])
def sni(sock, name, c): sock.sni = name
ctx.sni_callback = sni
t = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
t.socket = ctx.wrap_socket(t.socket, server_side=True)
p = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print("tls=%d http=%d" % (t.server_address[1], p.server_address[1]), flush=True)
threading.Thread(target=t.serve_forever, daemon=True).start()
p.serve_forever()
"#;

/// OpenSSL through Python's ssl, and Python's http.server.
pub fn python(dir: &Path, certs: &Certs) -> Option<Family> {
    if !have("python3") {
        return None;
    }
    let src = dir.join("vhost.py");
    std::fs::write(&src, PY).unwrap();
    let mut c = Command::new("python3");
    c.arg(&src).arg(&certs.cert).arg(&certs.key);
    Some(spawn("python-openssl", c))
}

const NODE: &str = r#"const fs = require("fs"), http = require("http"), https = require("https");
const h = (req, res) => res.end(`vhost=${(req.headers.host || "-").split(":")[0]} sni=${req.socket.servername || "-"}\n`);
const t = https.createServer({ cert: fs.readFileSync(process.argv[2]), key: fs.readFileSync(process.argv[3]) }, h);
const p = http.createServer(h);
t.listen(0, "127.0.0.1", () => p.listen(0, "127.0.0.1", () =>
  console.log(`tls=${t.address().port} http=${p.address().port}`)));
"#;

/// Node's https (OpenSSL) and http (llhttp, which skips empty lines).
pub fn node(dir: &Path, certs: &Certs) -> Option<Family> {
    if !have("node") {
        return None;
    }
    let src = dir.join("vhost.js");
    std::fs::write(&src, NODE).unwrap();
    let mut c = Command::new("node");
    c.arg(&src).arg(&certs.cert).arg(&certs.key);
    Some(spawn("node", c))
}

/// nginx (OpenSSL; its parser skips empty lines), two server blocks on each port.
pub fn nginx(dir: &Path, certs: &Certs) -> Option<Family> {
    let bin = ["/usr/sbin/nginx", "/usr/bin/nginx"].into_iter().find(|p| Path::new(p).exists())?;
    let free = || std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (tls, http) = (free(), free());
    let d = dir.join("nginx");
    std::fs::create_dir_all(&d).unwrap();
    let server = |name: &str, default: &str| {
        format!(
            "server {{ listen 127.0.0.1:{tls} ssl {default}; listen 127.0.0.1:{http} {default}; server_name {name};\n\
               ssl_certificate {c}; ssl_certificate_key {k};\n\
               location / {{ return 200 \"vhost=$server_name sni=$ssl_server_name\\n\"; }} }}\n",
            c = certs.cert.display(),
            k = certs.key.display()
        )
    };
    let conf = format!(
        "daemon off; master_process off; pid {d}/nginx.pid; error_log {d}/error.log crit;\n\
         events {{ worker_connections 256; }}\n\
         http {{ access_log off; client_body_temp_path {d}; proxy_temp_path {d}; fastcgi_temp_path {d};\n\
           uwsgi_temp_path {d}; scgi_temp_path {d};\n{a}{e} }}\n",
        d = d.display(),
        a = server("allowed.test", "default_server"),
        e = server("evil.test", "")
    );
    std::fs::write(d.join("nginx.conf"), conf).unwrap();
    let child = Command::new(bin)
        .arg("-p")
        .arg(&d)
        .arg("-e")
        .arg(d.join("error.log"))
        .arg("-c")
        .arg(d.join("nginx.conf"))
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", http)).is_err() {
        assert!(start.elapsed() < Duration::from_secs(10), "nginx did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(Family { name: "nginx", tls, http: Some(http), child: Some(child) })
}

impl Family {
    /// A server running inside the test process.
    pub fn in_process(name: &'static str, tls: u16, http: Option<u16>) -> Family {
        Family { name, tls, http, child: None }
    }
}

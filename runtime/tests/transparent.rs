//! Transparent egress: clients that ignore the proxy variables (Node's fetch and https.get,
//! Python's http.client, curl --noproxy, a C client calling getaddrinfo and connect, Java's
//! HttpClient) reach an allowed name and fail fast for others, in both network modes, as
//! root and as uid 65534; the TLS server name is checked on every tunnel; DNS and direct
//! connects find no way out. Origins are on loopback; `--resolve` points the names there.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::Out;

const MODES: [&str; 2] = ["landlock", "namespace"];

struct Fixture {
    dir: PathBuf,
    tls: srt_tests::TlsOrigin,
    http_port: u16,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn settings(allow: &[&str], extra: serde_json::Value) -> String {
    let mut v = serde_json::json!({
        "network": {"allowedDomains": allow, "deniedDomains": []},
        "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}
    });
    if let serde_json::Value::Object(m) = extra {
        for (k, x) in m {
            v["network"][k] = x;
        }
    }
    v.to_string()
}

fn fixture(tag: &str) -> Fixture {
    let dir = std::env::temp_dir().join(format!("srt-transparent-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("w")).unwrap();
    for p in [&dir, &dir.join("w")] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let dir = dir.canonicalize().unwrap();
    let tls = srt_tests::TlsOrigin::start(&dir, &["allowed.test", "evil.test"]);
    std::fs::set_permissions(&tls.ca, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(dir.join("s.json"), settings(&["allowed.test"], serde_json::json!({}))).unwrap();
    Fixture { dir, tls, http_port: srt_tests::http_origin() }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Who {
    Root,
    Nobody,
}

/// The uids to run as: the caller, and uid 65534 when the caller is root.
fn whos(test: &str) -> Vec<Who> {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        vec![Who::Root, Who::Nobody]
    } else {
        srt_tests::skip(test, "not root: the uid 65534 half needs root to switch uids");
        vec![Who::Root]
    }
}

fn srt(f: &Fixture, mode: &str, who: Who, settings: &Path, script: &str, pre: impl FnOnce(&mut Command)) -> Out {
    let mut c = common::srt_resolving(&f.dir, mode, who == Who::Nobody, settings, script);
    c.env("CA", &f.tls.ca)
        .env("NODE_EXTRA_CA_CERTS", &f.tls.ca)
        .env("TLS", f.tls.port.to_string())
        .env("HTTP", f.http_port.to_string());
    pre(&mut c);
    common::run(&mut c)
}

/// One line per client and host: `<client> <host> rc=<rc> ms=<elapsed>`.
const CLIENTS: &str = r#"
t() { local name=$1 host=$2; shift 2; local s=$EPOCHREALTIME; "$@" >"$TMPDIR/out.$name.$host" 2>&1; local rc=$?
      local e=$EPOCHREALTIME; echo "$name $host rc=$rc ms=$(( (${e/./} - ${s/./}) / 1000 ))"; }
for h in allowed.test evil.test; do
  t curl $h curl -sS -f --noproxy '*' --cacert "$CA" -m 5 "https://$h:$TLS/"
  t fetch $h node -e 'fetch(process.argv[1]).then(r => process.exit(r.status == 200 ? 0 : 1), e => { console.error(e.cause || e); process.exit(1) })' "https://$h:$TLS/"
  t https_get $h node -e 'require("https").get(process.argv[1], r => process.exit(r.statusCode == 200 ? 0 : 1)).on("error", e => { console.error(e); process.exit(1) })' "https://$h:$TLS/"
  t http_client $h python3 -c 'import http.client, ssl, sys, os
c = http.client.HTTPSConnection(sys.argv[1], int(os.environ["TLS"]), timeout=5, context=ssl.create_default_context(cafile=os.environ["CA"]))
c.request("GET", "/"); sys.exit(0 if c.getresponse().status == 200 else 1)' $h
  [ -x "$D/direct" ] && t direct $h "$D/direct" $h "$HTTP"
done
true
"#;

/// A C client that resolves with getaddrinfo and calls connect() itself.
const DIRECT_C: &str = r#"
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
int main(int argc, char **argv) {
    struct addrinfo hints = {0}, *r;
    hints.ai_socktype = SOCK_STREAM;
    if (argc < 3 || getaddrinfo(argv[1], argv[2], &hints, &r) != 0) { puts("resolve failed"); return 2; }
    int s = socket(r->ai_family, SOCK_STREAM, 0);
    if (connect(s, r->ai_addr, r->ai_addrlen) != 0) { perror("connect"); return 3; }
    char q[256];
    snprintf(q, sizeof q, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", argv[1]);
    if (write(s, q, strlen(q)) < 0) return 4;
    char b[64] = {0};
    if (read(s, b, 12) != 12) return 5;
    puts(b);
    return strncmp(b, "HTTP/1.1 200", 12) != 0;
}
"#;

fn build_direct(f: &Fixture, test: &str) {
    let src = f.dir.join("direct.c");
    std::fs::write(&src, DIRECT_C).unwrap();
    let ok = Command::new("cc").arg("-o").arg(f.dir.join("direct")).arg(&src).status().is_ok_and(|s| s.success());
    if !ok {
        srt_tests::skip(test, "no C compiler: the direct connect() client is not run");
    }
}

#[test]
fn clients_that_ignore_proxy_variables_reach_allowed_names_and_fail_fast_for_others() {
    let test = "clients_that_ignore_proxy_variables_reach_allowed_names_and_fail_fast_for_others";
    let f = fixture("clients");
    build_direct(&f, test);
    let expected = if f.dir.join("direct").exists() { 5 } else { 4 };
    for who in whos(test) {
        for mode in MODES {
            let o = srt(&f, mode, who, &f.dir.join("s.json"), CLIENTS, |_| {});
            let ctx = format!("{mode} {who:?}:\n{}\n{}", o.stdout, o.stderr);
            assert_eq!(o.code, 0, "{ctx}");
            let lines: Vec<&str> = o.stdout.lines().collect();
            let ok: Vec<&&str> = lines.iter().filter(|l| l.contains(" allowed.test rc=0 ")).collect();
            assert_eq!(ok.len(), expected, "every client reached the allowed name: {ctx}");
            let denied: Vec<&&str> = lines.iter().filter(|l| l.contains(" evil.test ")).collect();
            assert_eq!(denied.len(), expected, "{ctx}");
            for l in denied {
                assert!(!l.contains("rc=0 "), "a client reached a name that is not allowed: {l}\n{ctx}");
                let ms: u64 = l.rsplit("ms=").next().unwrap().parse().unwrap();
                assert!(ms < 1000, "a refusal takes under a second: {l}\n{ctx}");
            }
            assert!(o.stderr.contains("srt: network: refused name evil.test (not in allowedDomains)"), "{ctx}");
        }
    }
}

#[test]
fn java_httpclient_with_and_without_proxy_settings() {
    let test = "java_httpclient_with_and_without_proxy_settings";
    if Command::new("java").arg("-version").output().is_err() {
        return srt_tests::skip(test, "no JDK installed");
    }
    let f = fixture("java");
    std::fs::write(
        f.dir.join("Get.java"),
        r#"import java.net.URI; import java.net.http.*;
public class Get { public static void main(String[] a) throws Exception {
  var r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(a[0])).build(), HttpResponse.BodyHandlers.ofString());
  System.out.println("status=" + r.statusCode()); } }"#,
    )
    .unwrap();
    for mode in MODES {
        let script = r#"java "$D/Get.java" "http://allowed.test:$HTTP/"; java "$D/Get.java" "http://evil.test:$HTTP/" 2>&1 | grep -o UnresolvedAddressException | head -1"#;
        let o = srt(&f, mode, Who::Root, &f.dir.join("s.json"), script, |_| {});
        assert!(o.stdout.contains("status=200"), "{mode}: {}{}", o.stdout, o.stderr);
        assert!(o.stdout.contains("UnresolvedAddressException"), "{mode}: {}{}", o.stdout, o.stderr);
    }
    // namespace mode: the JDK's own proxy settings work without credentials (it cannot
    // send Basic auth to a proxy); landlock mode's proxy on the host loopback needs them
    let script = r#"java -Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=3128 "$D/Get.java" "http://allowed.test:$HTTP/""#;
    let o = srt(&f, "namespace", Who::Root, &f.dir.join("s.json"), script, |_| {});
    assert!(o.stdout.contains("status=200"), "{}{}", o.stdout, o.stderr);
}

#[test]
fn a_foreign_tls_server_name_is_refused_inside_srt_explicit_and_transparent() {
    let f = fixture("fronting");
    // transparent: the name behind the address is allowed.test, the SNI says evil.test
    let transparent = r#"openssl s_client -brief -connect "allowed.test:$TLS" -servername evil.test </dev/null 2>&1 | grep -o 'unrecognized name' | head -1
openssl s_client -brief -CAfile "$CA" -connect "allowed.test:$TLS" -servername allowed.test </dev/null 2>&1 | grep -o 'CONNECTION ESTABLISHED'"#;
    // explicit: through HTTPS_PROXY with its credentials
    let explicit = r#"p=${HTTPS_PROXY#http://}; cred=${p%@*}; hp=${p#*@}
openssl s_client -brief -proxy "$hp" -proxy_user "${cred%%:*}" -proxy_pass "pass:${cred#*:}" -connect "allowed.test:$TLS" -servername evil.test </dev/null 2>&1 | grep -o 'unrecognized name' | head -1"#;
    for who in whos("a_foreign_tls_server_name_is_refused_inside_srt_explicit_and_transparent") {
        for mode in MODES {
            let before = f.tls.handshakes.load(std::sync::atomic::Ordering::SeqCst);
            for script in [transparent, explicit] {
                let o = srt(&f, mode, who, &f.dir.join("s.json"), script, |_| {});
                let ctx = format!("{mode} {who:?}: {}{}", o.stdout, o.stderr);
                assert!(o.stdout.contains("unrecognized name"), "{ctx}");
                assert!(o.stderr.contains("srt: network: refused allowed.test:"), "{ctx}");
                assert!(o.stderr.contains("the TLS server name or HTTP Host asked for another host"), "{ctx}");
            }
            let after = f.tls.handshakes.load(std::sync::atomic::Ordering::SeqCst);
            assert_eq!(after - before, 1, "{mode} {who:?}: only the honest handshake reached the origin");
        }
    }
}

/// A UDP socket on the host that must never receive a datagram.
struct UdpSink(std::net::UdpSocket);
impl UdpSink {
    fn bind(addr: &str) -> Option<UdpSink> {
        let s = std::net::UdpSocket::bind(addr).ok()?;
        s.set_nonblocking(true).unwrap();
        Some(UdpSink(s))
    }
    fn quiet(&self) -> bool {
        let mut b = [0u8; 512];
        matches!(self.0.recv(&mut b), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
    }
}

fn tcp_sink(addr: &str) -> Option<std::net::TcpListener> {
    let l = std::net::TcpListener::bind(addr).ok()?;
    l.set_nonblocking(true).unwrap();
    Some(l)
}

fn tcp_quiet(l: &std::net::TcpListener) -> bool {
    matches!(l.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

/// The first non-loopback IPv4 address of this machine (what a direct connect could reach
/// without any route through srt), if it has one.
fn host_address() -> Option<std::net::Ipv4Addr> {
    let s = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    s.connect("10.255.255.1:9").ok()?;
    match s.local_addr().ok()?.ip() {
        std::net::IpAddr::V4(a) if !a.is_loopback() && !a.is_unspecified() => Some(a),
        _ => None,
    }
}

const DNS_QUERY_PY: &str = r#"import socket, struct, sys
def q(name):
    b = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" + b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\x00\x00\x01\x00\x01"
    return b
kind, server, port, name = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
try:
    if kind == "udp":  # a connected socket, as glibc's and Go's resolvers use
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)
        s.connect((server, port)); s.send(q(name)); r = s.recv(512)
    elif kind == "udpto":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)
        s.sendto(q(name), (server, port)); r = s.recv(512)
    else:
        s = socket.create_connection((server, port), timeout=2); m = q(name)
        s.sendall(struct.pack(">H", len(m)) + m); r = s.recv(2); r = s.recv(struct.unpack(">H", r)[0])
    print(kind, server, name, "rcode=%d answers=%d" % (r[3] & 15, r[7]), ".".join(map(str, r[-4:])) if r[7] else "")
except Exception as e:
    print(kind, server, name, "error", type(e).__name__)
"#;

#[test]
fn dns_and_direct_connects_find_no_way_out() {
    let test = "dns_and_direct_connects_find_no_way_out";
    let f = fixture("noway");
    std::fs::write(f.dir.join("dnsq.py"), DNS_QUERY_PY).unwrap();
    // outside resolvers the command might try: host loopback port 53 (needs root to bind)
    // and a UDP sink on another port
    let dns_udp = UdpSink::bind("127.0.0.2:53");
    let dns_tcp = tcp_sink("127.0.0.2:53");
    if dns_udp.is_none() || dns_tcp.is_none() {
        srt_tests::skip(test, "cannot bind 127.0.0.2:53 (not root): no host resolver to stay quiet");
    }
    let other = UdpSink::bind("127.0.0.2:0").unwrap();
    let other_port = other.0.local_addr().unwrap().port();
    // a service on the host's own address: a raw-IP connect that no name allows
    let host = host_address();
    let raw = host.and_then(|a| tcp_sink(&format!("{a}:0")));
    if raw.is_none() {
        srt_tests::skip(test, "no non-loopback IPv4 address: the raw-IP connect is not tried");
    }
    let raw_target = raw.as_ref().map(|l| l.local_addr().unwrap().to_string()).unwrap_or_default();
    let script = format!(
        r#"py() {{ python3 "$D/dnsq.py" "$@"; }}
getent hosts allowed.test; getent hosts evil.test || echo "getent evil.test failed"
python3 -c 'import socket; socket.getaddrinfo("allowed.test", 80, socket.AF_INET6)' 2>/dev/null && echo "has v6" || echo "no v6"
py tcp 127.0.0.2 53 evil.test; py tcp 8.8.8.8 53 allowed.test; py udp 127.0.0.2 53 evil.test; py udp 8.8.8.8 53 allowed.test
py udp 127.0.0.2 {other_port} allowed.test; py udpto 127.0.0.2 {other_port} allowed.test; py udpto 8.8.8.8 53 allowed.test
[ -n "{raw_target}" ] && python3 -c 'import socket,sys; h,p=sys.argv[1].rsplit(":",1)
try:
    s=socket.create_connection((h,int(p)),timeout=3); s.sendall(b"x"); print("raw sent", s.recv(10))
except Exception as e: print("raw refused", type(e).__name__)' "{raw_target}"
python3 -c 'import socket
try:
    s=socket.create_connection(("198.18.7.7",443),timeout=3); s.sendall(b"x"); print("unknown synthetic sent", s.recv(10))
except Exception as e: print("unknown synthetic refused", type(e).__name__)'
"#
    );
    for who in whos(test) {
        for mode in MODES {
            let o = srt(&f, mode, who, &f.dir.join("s.json"), &script, |_| {});
            let ctx = format!("{mode} {who:?}:\n{}\n{}", o.stdout, o.stderr);
            assert!(o.stdout.contains("198.18.") && o.stdout.contains("allowed.test"), "{ctx}");
            assert!(o.stdout.contains("getent evil.test failed"), "{ctx}");
            assert!(o.stdout.contains("no v6"), "no IPv6 answers: {ctx}");
            // DNS to any server is srt's: denied names do not exist, allowed ones get
            // synthetic addresses; nothing reaches the host's resolvers
            for l in o.stdout.lines().filter(|l| l.starts_with("tcp ") || l.starts_with("udp")) {
                let answered_by_srt = (l.contains("evil.test rcode=3")
                    || l.contains("allowed.test rcode=0 answers=1 198.18."))
                    || l.contains(" error ");
                assert!(answered_by_srt, "{l}\n{ctx}");
            }
            if mode == "landlock" {
                assert!(o.stdout.contains("tcp 127.0.0.2 evil.test rcode=3"), "{ctx}");
                assert!(o.stdout.contains("tcp 8.8.8.8 allowed.test rcode=0 answers=1 198.18."), "{ctx}");
            } else {
                assert!(o.stdout.contains("udp 8.8.8.8 allowed.test rcode=0 answers=1 198.18."), "{ctx}");
            }
            assert!(!o.stdout.contains("raw sent") && !o.stdout.contains("unknown synthetic sent"), "{ctx}");
            assert!(o.stdout.contains("unknown synthetic refused"), "{ctx}");
            if raw.is_some() {
                assert!(o.stdout.contains("raw refused"), "{ctx}");
            }
        }
    }
    assert!(dns_udp.as_ref().is_none_or(UdpSink::quiet), "a query reached the host's UDP resolver");
    assert!(dns_tcp.as_ref().is_none_or(tcp_quiet), "a query reached the host's TCP resolver");
    assert!(other.quiet(), "a datagram reached the host");
    assert!(raw.as_ref().is_none_or(tcp_quiet), "a raw-IP connect reached the host's service");
}

#[test]
fn a_synthetic_address_is_refused_once_its_name_is_no_longer_allowed() {
    let f = fixture("expired");
    // resolve, wait for the policy to drop the name, connect to the address kept
    let script = r#"a=$(getent hosts allowed.test | cut -d' ' -f1); echo "addr=$a"
curl -sS --noproxy '*' -m 5 -o /dev/null -w 'before=%{http_code}\n' "http://$a:$HTTP/" -H 'Host: allowed.test'
while [ ! -e go ]; do sleep 0.05; done
curl -sS --noproxy '*' -m 5 -o /dev/null -w 'after=%{http_code}\n' "http://$a:$HTTP/" -H 'Host: allowed.test' || echo "after refused"
getent hosts allowed.test || echo "no longer resolves"
getent hosts other.test | cut -d' ' -f1"#;
    for mode in MODES {
        let mut fds = [0; 2];
        // SAFETY: pipe writes two fresh descriptors.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let (r, w) = (fds[0], fds[1]);
        let _ = std::fs::remove_file(f.dir.join("w/go"));
        let writer = {
            let go = f.dir.join("w/go");
            let text = settings(&["other.test"], serde_json::json!({})) + "\n";
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(1500));
                // SAFETY: writing a buffer we own to our pipe end, then closing it.
                unsafe {
                    libc::write(w, text.as_ptr().cast(), text.len());
                    libc::close(w);
                }
                std::thread::sleep(Duration::from_millis(300));
                std::fs::write(go, "").unwrap();
            })
        };
        let o = srt(&f, mode, Who::Root, &f.dir.join("s.json"), script, |c| {
            c.args(["--control-fd", "3"]);
            // SAFETY: dup2 in the child before exec, onto fd 3, from a descriptor it inherited.
            unsafe {
                c.pre_exec(move || {
                    if libc::dup2(r, 3) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        });
        // SAFETY: the parent's copy of the read end.
        unsafe { libc::close(r) };
        writer.join().unwrap();
        let ctx = format!("{mode}:\n{}\n{}", o.stdout, o.stderr);
        let addr = o.stdout.lines().find_map(|l| l.strip_prefix("addr=")).unwrap_or_default().to_string();
        assert!(addr.starts_with("198.18."), "{ctx}");
        assert!(o.stdout.contains("before=200"), "{ctx}");
        assert!(o.stdout.contains("after refused") || o.stdout.contains("after=000"), "{ctx}");
        assert!(o.stdout.contains("no longer resolves"), "{ctx}");
        let other = o.stdout.lines().last().unwrap_or_default();
        assert!(other.starts_with("198.18.") && other != addr, "a new name never gets an old address: {ctx}");
    }
}

#[test]
fn transparent_mode_can_be_turned_off_and_explicit_proxy_auth_depends_on_the_mode() {
    let f = fixture("off");
    let off = f.dir.join("off.json");
    std::fs::write(&off, settings(&["allowed.test"], serde_json::json!({"transparent": false}))).unwrap();
    let script = r#"getent hosts allowed.test || echo "no dns"
curl -sS --noproxy '*' -m 3 "http://allowed.test:$HTTP/" || echo "no direct"
curl -sS -m 5 "http://allowed.test:$HTTP/""#;
    for mode in MODES {
        let o = srt(&f, mode, Who::Root, &off, script, |_| {});
        let ctx = format!("{mode}:\n{}\n{}", o.stdout, o.stderr);
        assert!(o.stdout.contains("no dns") && o.stdout.contains("no direct"), "{ctx}");
        assert!(o.stdout.contains("origin-ok"), "the proxy variables still work: {ctx}");
    }
    // without credentials: namespace mode's own ports take it, landlock mode's refuse
    let script = r#"curl -sS -m 5 -o /dev/null -w '%{http_code}\n' -x "http://127.0.0.1:${HTTP_PROXY##*:}" "http://allowed.test:$HTTP/""#;
    let o = srt(&f, "namespace", Who::Root, &f.dir.join("s.json"), script, |_| {});
    assert_eq!(o.stdout.trim(), "200", "{}", o.stderr);
    let o = srt(&f, "landlock", Who::Root, &f.dir.join("s.json"), script, |_| {});
    assert_eq!(o.stdout.trim(), "407", "{}", o.stderr);
}

#[test]
fn explain_says_whether_transparent_mode_is_on() {
    let f = fixture("explain");
    let off = f.dir.join("off.json");
    std::fs::write(&off, settings(&["allowed.test"], serde_json::json!({"transparent": false}))).unwrap();
    for (file, on) in [(f.dir.join("s.json"), true), (off, false)] {
        let o = Command::new(env!("CARGO_BIN_EXE_srt")).arg("explain").arg("-s").arg(&file).output().unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert_eq!(text.contains("transparent mode: clients that ignore the proxy variables work too"), on, "{text}");
        assert_eq!(text.contains("LIMIT: clients that ignore HTTP_PROXY/ALL_PROXY fail"), !on, "{text}");
        assert!(text.contains("no SNI / ECH refused"), "{text}");
    }
}

#[test]
fn a_forged_preamble_on_the_proxy_port_is_dropped() {
    // landlock mode: the command reaches the proxy port itself and claims, with a guessed
    // key, a destination the proxy would otherwise serve (allowed.test's synthetic address);
    // with the right key this would return the origin's answer
    let f = fixture("forged");
    let script = r#"a=$(getent hosts allowed.test | cut -d' ' -f1)
python3 -c 'import socket, os, struct, sys
p = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
dest = bytes(int(x) for x in sys.argv[1].split("."))
s = socket.create_connection(("127.0.0.1", p), timeout=3)
s.sendall(b"\0SRT" + bytes(16) + b"\x04" + struct.pack(">H", int(os.environ["HTTP"])) + dest + bytes(12)
          + b"GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
try: print("answer", s.recv(200))
except ConnectionResetError: print("answer reset")' "$a"
curl -sS --noproxy '*' -m 5 "http://allowed.test:$HTTP/""#;
    let o = srt(&f, "landlock", Who::Root, &f.dir.join("s.json"), script, |_| {});
    let ctx = format!("{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("answer b''") || o.stdout.contains("answer reset"), "dropped: {ctx}");
    assert_eq!(o.stdout.matches("origin-ok").count(), 1, "only the honest request was served: {ctx}");
}

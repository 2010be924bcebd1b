//! The real `srt-proxy` binary over real sockets, with curl and raw clients, against
//! loopback origins (plain HTTP and TLS with rcgen certificates).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::*;

#[test]
fn https_allowed_denied_wildcard_apex_and_deny_wins() {
    let dir = tempdir("https");
    let tls = TlsOrigin::start(&dir, &["api.example.test", "a.wild.test", "example.test", "bad.wild.test"]);
    let p = Proxy::start(
        &settings(&["api.example.test", "*.wild.test"], &["bad.wild.test"]),
        &[
            "--resolve",
            "api.example.test:*:127.0.0.1",
            "--resolve",
            "a.wild.test:*:127.0.0.1",
            "--resolve",
            "example.test:*:127.0.0.1",
        ],
    );
    let ca = tls.ca.to_str().unwrap().to_string();
    let url = |h: &str| format!("https://{h}:{}/", tls.port);
    let ok = curl(&["--cacert", &ca, "-x", &p.url(), &url("api.example.test")]);
    assert_eq!((ok.code, ok.stdout.as_str()), (0, "tls-origin-ok\n"), "{}", ok.stderr);
    let wild = curl(&["--cacert", &ca, "-x", &p.url(), &url("a.wild.test")]);
    assert_eq!(wild.stdout, "tls-origin-ok\n", "{}", wild.stderr);
    for denied in ["example.test", "bad.wild.test", "other.test", "wild.test"] {
        let r = curl(&["--cacert", &ca, "-x", &p.url(), &url(denied)]);
        assert_eq!(r.code, 56, "{denied}: {}", r.stderr);
        assert_eq!(r.stderr.trim(), "curl: (56) CONNECT tunnel failed, response 403", "{denied}");
    }
    let line = p.wait_log(&["\"host\":\"bad.wild.test\""]);
    assert!(line.contains("blocked-by-denylist") && line.contains("\"matched_rule\":\"bad.wild.test\""), "{line}");
    let line = p.wait_log(&["\"host\":\"api.example.test\"", "bytes_down"]);
    assert!(line.contains("\"allow\":true") && line.contains("\"dialed\":\"127.0.0.1:"), "{line}");
    assert!(!line.contains(TOKEN));
}

#[test]
fn plain_http_rewrites_host_strips_hop_by_hop_and_denies_with_403() {
    let o = Origin::start();
    let p = Proxy::start(&settings(&["api.example.test"], &[]), &["--resolve", "api.example.test:*:127.0.0.1"]);
    let r = curl(&[
        "-x",
        &p.url(),
        "-H",
        "Host: evil.test",
        "-H",
        "Connection: keep-alive, X-Secret-Hop",
        "-H",
        "X-Secret-Hop: 1",
        "-H",
        "Upgrade: websocket",
        "-H",
        "Keep-Alive: 5",
        &format!("http://api.example.test:{}/headers?q=secret", o.port),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let head = r.stdout.to_ascii_lowercase();
    assert!(head.starts_with("get /headers?q=secret http/1.1\r\n"), "origin-form upstream: {head}");
    assert!(head.contains(&format!("host: api.example.test:{}\r\n", o.port)), "{head}");
    for gone in ["evil.test", "proxy-authorization", "x-secret-hop", "upgrade", "keep-alive"] {
        assert!(!head.contains(gone), "{gone} reached the origin: {head}");
    }
    let line = p.wait_log(&["\"path\":\"/headers\""]);
    assert!(!line.contains("secret"), "query strings are never logged: {line}");
    let d = curl(&["-i", "-x", &p.url(), "http://denied.test/"]);
    // the status line says what happened: clients print it and nothing else
    assert!(
        d.stdout.starts_with("HTTP/1.1 403 Blocked by sandbox network allowlist (host not allowed)\r\n"),
        "{}",
        d.stdout
    );
    let lower = d.stdout.to_ascii_lowercase();
    assert!(lower.contains("x-proxy-error: blocked-by-allowlist") && lower.contains("content-type: text/plain"));
    let body = "Connection blocked by network allowlist: host is not on the allow list\n";
    assert!(lower.contains("connection: close") && d.stdout.ends_with(body), "{}", d.stdout);
    assert!(lower.contains(&format!("content-length: {}\r\n", body.len())), "{}", d.stdout);
}

#[test]
fn auth_is_required_and_compared_exactly() {
    let o = Origin::start();
    let p = Proxy::start(&settings(&["127.0.0.1"], &[]), &[]);
    let target = format!("127.0.0.1:{}", o.port);
    for creds in ["", "srt:wrong", &format!("srt:{TOKEN}x"), &format!("srt:{}", &TOKEN[..TOKEN.len() - 1])] {
        let proxy = if creds.is_empty() { format!("http://{}", p.addr) } else { format!("http://{creds}@{}", p.addr) };
        let r = curl(&["-i", "-p", "-x", &proxy, &format!("http://{target}/small")]);
        assert!(r.stderr.contains("response 407"), "{creds}: {}", r.stderr);
    }
    let raw407 = raw(p.addr, format!("CONNECT {target} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes());
    assert!(raw407.starts_with("HTTP/1.1 407"), "{raw407}");
    assert!(raw407.to_ascii_lowercase().contains("proxy-authenticate: basic realm=\"srt\""), "{raw407}");
    let ok = curl(&["-p", "-x", &p.url(), &format!("http://{target}/small")]);
    assert_eq!(ok.stdout, "origin-ok\n", "{}", ok.stderr);
    let no_auth_needed = Proxy::start(&settings(&["127.0.0.1"], &[]), &["--no-auth"]);
    let r = curl(&["-x", &format!("http://{}", no_auth_needed.addr), &format!("http://{target}/small")]);
    assert_eq!(r.stdout, "origin-ok\n");
}

#[test]
fn socks5_allows_denies_and_authenticates() {
    let o = Origin::start();
    let p = Proxy::start(&settings(&["api.example.test"], &[]), &["--resolve", "api.example.test:*:127.0.0.1"]);
    let ok = curl(&[
        "-x",
        &format!("socks5h://srt:{TOKEN}@{}", p.addr),
        &format!("http://api.example.test:{}/small", o.port),
    ]);
    assert_eq!(ok.stdout, "origin-ok\n", "{}", ok.stderr);
    let denied = curl(&["-x", &format!("socks5h://srt:{TOKEN}@{}", p.addr), &format!("http://nope.test:{}/", o.port)]);
    assert_eq!(denied.code, 97, "{}", denied.stderr);
    let wrong =
        curl(&["-x", &format!("socks5h://srt:bad@{}", p.addr), &format!("http://api.example.test:{}/", o.port)]);
    assert_ne!(wrong.code, 0);
    assert!(!wrong.stdout.contains("origin-ok"));
}

#[test]
fn sixty_four_mib_each_way_through_a_tunnel() {
    let o = Origin::start();
    let p = Proxy::start(&settings(&["127.0.0.1"], &[]), &[]);
    let dir = tempdir("big");
    let n = 64 << 20;
    let file = dir.join("up.bin");
    std::fs::write(&file, pattern(n).collect::<Vec<u8>>()).unwrap();
    let want = {
        use sha2::Digest;
        hex(&sha2::Sha256::digest(std::fs::read(&file).unwrap()))
    };
    let up = curl(&[
        "-p",
        "-x",
        &p.url(),
        "-H",
        "Expect:",
        "-T",
        file.to_str().unwrap(),
        &format!("http://127.0.0.1:{}/sha256", o.port),
    ]);
    assert_eq!(up.stdout, want, "{}", up.stderr);
    let out = dir.join("down.bin");
    let down =
        curl(&["-p", "-x", &p.url(), "-o", out.to_str().unwrap(), &format!("http://127.0.0.1:{}/bytes/{n}", o.port)]);
    assert_eq!(down.code, 0, "{}", down.stderr);
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&file).unwrap());
    p.wait_log(&["\"bytes_down\":671089"]);
    p.wait_log(&["\"bytes_up\":671089"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tunnel_cap_is_enforced_and_released() {
    let o = Origin::start();
    let p = Proxy::start(&settings(&["127.0.0.1"], &[]), &["--max-tunnels", "2"]);
    let open = || {
        let mut s = TcpStream::connect(p.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        s.write_all(format!("CONNECT 127.0.0.1:{} HTTP/1.1\r\n{}\r\n", o.port, basic()).as_bytes()).unwrap();
        let mut b = [0u8; 12];
        s.read_exact(&mut b).unwrap();
        (s, String::from_utf8_lossy(&b).to_string())
    };
    let (a, ra) = open();
    let (b, rb) = open();
    assert_eq!((ra.as_str(), rb.as_str()), ("HTTP/1.1 200", "HTTP/1.1 200"));
    let (_c, rc) = open();
    assert_eq!(rc, "HTTP/1.1 503", "a third tunnel is refused");
    drop(a);
    let start = Instant::now();
    loop {
        let (_d, rd) = open();
        if rd == "HTTP/1.1 200" {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(5), "the slot was never released");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(b);
}

#[test]
fn slow_header_client_is_cut_off_while_others_are_served() {
    let o = Origin::start();
    let p = Proxy::start(&settings(&["127.0.0.1"], &[]), &["--header-timeout", "1"]);
    let mut slow = TcpStream::connect(p.addr).unwrap();
    slow.write_all(b"GET http://127.0.0.1/ HTTP/1.1\r\nX-A: ").unwrap();
    let start = Instant::now();
    for _ in 0..5 {
        let ok = curl(&["-x", &p.url(), &format!("http://127.0.0.1:{}/small", o.port)]);
        assert_eq!(ok.stdout, "origin-ok\n");
    }
    slow.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut buf = [0u8; 256];
    let closed = loop {
        let _ = slow.write_all(b"a");
        match slow.read(&mut buf) {
            Ok(0) | Err(_) => break true,
            Ok(_) => {}
        }
        if start.elapsed() > Duration::from_secs(4) {
            break false;
        }
    };
    assert!(closed, "the trickling client was not cut off");
    assert!(start.elapsed() < Duration::from_secs(4));
}

fn status(p: &Proxy, url: &str) -> String {
    let r = curl(&["-o", "/dev/null", "-w", "%{http_code}", "-x", &p.url(), url]);
    r.stdout
}

fn wait_status(p: &Proxy, url: &str, want: &str) {
    let start = Instant::now();
    while status(p, url) != want {
        assert!(start.elapsed() < Duration::from_secs(10), "{url} never became {want}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn file_reload_both_ways_invalid_keeps_old_and_symlink_swap() {
    let o = Origin::start();
    let p = Proxy::start(&settings(&["127.0.0.1"], &[]), &[]);
    let url = format!("http://127.0.0.1:{}/small", o.port);
    assert_eq!(status(&p, &url), "200");
    std::fs::write(&p.settings, settings(&["other.test"], &[])).unwrap();
    wait_status(&p, &url, "403");
    std::fs::write(&p.settings, "{\"network\": {\"allowedDomains\": [\"*\"]").unwrap();
    p.wait_log(&["config_reload", "\"result\":\"error\""]);
    assert_eq!(status(&p, &url), "403", "an invalid update keeps the old policy");
    std::fs::write(&p.settings, settings(&["127.0.0.1"], &[])).unwrap();
    wait_status(&p, &url, "200");
    // Kubernetes updates a mounted ConfigMap by swapping a ..data symlink
    let d = tempdir("k8s");
    let v1 = d.join("..v1");
    let v2 = d.join("..v2");
    std::fs::create_dir_all(&v1).unwrap();
    std::fs::create_dir_all(&v2).unwrap();
    std::fs::write(v1.join("srt-settings.json"), settings(&["127.0.0.1"], &[])).unwrap();
    std::fs::write(v2.join("srt-settings.json"), settings(&["other.test"], &[])).unwrap();
    std::os::unix::fs::symlink("..v1", d.join("..data")).unwrap();
    std::os::unix::fs::symlink("..data/srt-settings.json", d.join("srt-settings.json")).unwrap();
    let k = Proxy::start_file(&d.join("srt-settings.json"), &[]);
    assert_eq!(status(&k, &url), "200");
    std::os::unix::fs::symlink("..v2", d.join("..data.tmp")).unwrap();
    std::fs::rename(d.join("..data.tmp"), d.join("..data")).unwrap();
    wait_status(&k, &url, "403");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn control_fd_updates_and_rejects_bad_lines() {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let o = Origin::start();
    let (r, mut w) = std::io::pipe().unwrap();
    let rfd = r.as_raw_fd();
    let p = Proxy::start_with(&settings(&[], &[]), &["--control-fd", "3", "--no-watch"], move |c| {
        // SAFETY: dup2 in the child before exec, onto the fd number the flag names.
        unsafe {
            c.pre_exec(move || {
                if libc::dup2(rfd, 3) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    });
    drop(r);
    let url = format!("http://127.0.0.1:{}/small", o.port);
    assert_eq!(status(&p, &url), "403");
    writeln!(w, "{}", settings(&["127.0.0.1"], &[])).unwrap();
    wait_status(&p, &url, "200");
    writeln!(w, "{{not json").unwrap();
    p.wait_log(&["config_reload", "\"result\":\"error\"", "control-fd 3"]);
    assert_eq!(status(&p, &url), "200");
    writeln!(w, "{}", settings(&[], &[])).unwrap();
    wait_status(&p, &url, "403");
}

#[test]
fn metrics_are_served_when_asked_for() {
    let o = Origin::start();
    let p = Proxy::start(&settings(&["127.0.0.1"], &[]), &["--metrics", "127.0.0.1:0"]);
    let line = p.wait_log(&["metrics_listening"]);
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    let m = v["addr"].as_str().unwrap().to_string();
    let _ = curl(&["-x", &p.url(), &format!("http://127.0.0.1:{}/small", o.port)]);
    let _ = curl(&["-x", &p.url(), "http://denied.test/"]);
    let r = curl(&[&format!("http://{m}/metrics")]);
    assert!(
        r.stdout.contains("proxy_requests_total{kind=\"http\",decision=\"allow\",reason=\"allowed\"} 1"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("decision=\"deny\",reason=\"blocked-by-allowlist\"} 1"), "{}", r.stdout);
    assert!(r.stdout.contains("proxy_active_tunnels 0"));
}

/// An origin that reads until the client half-closes, then answers with the byte count.
fn counting_origin() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            std::thread::spawn(move || {
                let mut all = Vec::new();
                let _ = s.read_to_end(&mut all);
                let _ = s.write_all(format!("got {} bytes", all.len()).as_bytes());
            });
        }
    });
    port
}

fn tunnel(p: &Proxy, port: u16) -> TcpStream {
    connect_tunnel(p, &format!("127.0.0.1:{port}"), Duration::from_secs(5))
}

#[test]
fn half_close_propagates_and_aborts_and_idle_tunnels_are_survived() {
    let port = counting_origin();
    // the counting origin's bytes are neither TLS nor HTTP: allowed to it explicitly
    let text = settings(&["127.0.0.1"], &[]).replacen(
        "\"allowedDomains\"",
        "\"allowOtherProtocols\": [\"127.0.0.1\"], \"allowedDomains\"",
        1,
    );
    let mut p = Proxy::start(&text, &["--idle-timeout", "1"]);
    // half-close: the origin only answers after it saw our EOF through the tunnel
    let mut s = tunnel(&p, port);
    s.write_all(&[7u8; 100_000]).unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    assert_eq!(answer, "got 100000 bytes");
    // client aborts mid-stream, with RST, in a burst: the proxy keeps serving
    let o = Origin::start();
    for _ in 0..15 {
        let mut s = tunnel(&p, o.port);
        s.write_all(format!("GET /bytes/{} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 50 << 20).as_bytes()).unwrap();
        let mut buf = [0u8; 1000];
        s.read_exact(&mut buf).unwrap();
        let sock = socket2_linger_zero(&s);
        drop(s);
        let _ = sock;
    }
    assert!(p.alive());
    let ok = curl(&["-x", &p.url(), &format!("http://127.0.0.1:{}/small", o.port)]);
    assert_eq!(ok.stdout, "origin-ok\n");
    // an idle tunnel is closed after --idle-timeout
    let mut idle = tunnel(&p, port);
    let start = Instant::now();
    let mut buf = [0u8; 64];
    let n = idle.read(&mut buf).unwrap_or(0);
    assert_eq!(n, 0, "the idle tunnel was closed");
    assert!(
        start.elapsed() >= Duration::from_millis(900) && start.elapsed() < Duration::from_secs(4),
        "{:?}",
        start.elapsed()
    );
}

/// Makes the next close send RST instead of FIN (SO_LINGER with a zero timeout).
fn socket2_linger_zero(s: &TcpStream) -> i32 {
    use std::os::fd::AsRawFd;
    let l = libc::linger { l_onoff: 1, l_linger: 0 };
    // SAFETY: setsockopt on a socket we own, with a local struct.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&l as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as u32,
        )
    }
}

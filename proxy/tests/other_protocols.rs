//! Protocols that are neither TLS nor HTTP name no host the gate could check: they pass
//! only to the targets `network.allowOtherProtocols` lists, server-first (an SSH-like
//! banner exchange) and client-first (a PostgreSQL-like binary opening) alike, and are
//! refused elsewhere with a reason the log and the metrics name. And one client of a
//! shared srt-proxy holding 2,000 idle tunnels under `ulimit -n 1024` does not keep
//! another client from being served; a tunnel whose client stays silent is closed after
//! the first-flight timeout.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::time::Duration;

use common::*;

/// A server that speaks first (`SSH-2.0-srt-test`), then answers the client's line.
fn ssh_like() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            std::thread::spawn(move || {
                let _ = s.write_all(b"SSH-2.0-srt-test\r\n");
                let mut line = String::new();
                let _ = BufReader::new(s.try_clone().unwrap()).read_line(&mut line);
                let _ = writeln!(s, "hello {}", line.trim_end());
            });
        }
    });
    port
}

/// A server the client speaks to first, in binary (a PostgreSQL SSLRequest), answered 'N'.
fn pg_like() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            std::thread::spawn(move || {
                let mut b = [0u8; 8];
                if s.read_exact(&mut b).is_ok() && b == PG_SSL_REQUEST {
                    let _ = s.write_all(b"N");
                }
            });
        }
    });
    port
}

const PG_SSL_REQUEST: [u8; 8] = [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f];

fn connect(p: &Proxy, port: u16, from: Option<&str>) -> TcpStream {
    let s = match from {
        Some(src) => {
            let sock = bound_to(src);
            sock.connect(p.addr).map(|_| sock).unwrap()
        }
        None => TcpStream::connect(p.addr).unwrap(),
    };
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut s = s;
    s.write_all(format!("CONNECT allowed.test:{port} HTTP/1.1\r\n{}\r\n", basic()).as_bytes()).unwrap();
    s
}

/// Reads the CONNECT answer's head; returns its status line.
fn status(s: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if s.read(&mut b).unwrap_or(0) == 0 {
            break;
        }
        head.push(b[0]);
    }
    String::from_utf8_lossy(&head).lines().next().unwrap_or_default().to_string()
}

/// A TCP socket bound to source address `src` (another loopback address: another client).
fn bound_to(src: &str) -> TcpStream {
    // std has no bind-before-connect
    let addr: SocketAddr = format!("{src}:0").parse().unwrap();
    // SAFETY: plain socket calls on a descriptor we own, handed to TcpStream at the end.
    unsafe {
        use std::os::fd::FromRawFd;
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0);
        let std::net::SocketAddr::V4(a) = addr else { unreachable!() };
        let sin = libc::sockaddr_in {
            sin_family: libc::AF_INET as u16,
            sin_port: 0,
            sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(a.ip().octets()) },
            sin_zero: [0; 8],
        };
        assert_eq!(libc::bind(fd, (&sin as *const libc::sockaddr_in).cast(), std::mem::size_of_val(&sin) as u32), 0);
        TcpStream::from_raw_fd(fd)
    }
}

trait ConnectFrom {
    fn connect(&self, to: SocketAddr) -> std::io::Result<()>;
}

impl ConnectFrom for TcpStream {
    fn connect(&self, to: SocketAddr) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        let SocketAddr::V4(a) = to else { unreachable!() };
        let sin = libc::sockaddr_in {
            sin_family: libc::AF_INET as u16,
            sin_port: a.port().to_be(),
            sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(a.ip().octets()) },
            sin_zero: [0; 8],
        };
        // SAFETY: connect on a socket we own with a live sockaddr_in.
        let r = unsafe {
            libc::connect(
                self.as_raw_fd(),
                (&sin as *const libc::sockaddr_in).cast(),
                std::mem::size_of_val(&sin) as u32,
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
}

/// The SSH-like exchange: the server's banner, then the client's, then the answer.
fn ssh_exchange(p: &Proxy, port: u16) -> String {
    let mut s = connect(p, port, None);
    assert!(status(&mut s).starts_with("HTTP/1.1 200"));
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut banner = String::new();
    let _ = r.read_line(&mut banner);
    let _ = s.write_all(b"SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n");
    let mut rest = String::new();
    let _ = r.read_to_string(&mut rest);
    banner + &rest
}

fn pg_exchange(p: &Proxy, port: u16) -> Vec<u8> {
    let mut s = connect(p, port, None);
    assert!(status(&mut s).starts_with("HTTP/1.1 200"));
    s.write_all(&PG_SSL_REQUEST).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    out
}

fn proxy(other: Option<&[&str]>) -> Proxy {
    let mut text = settings(&["allowed.test"], &[]);
    if let Some(list) = other {
        let v = serde_json::to_string(list).unwrap();
        text = text.replacen("\"allowedDomains\"", &format!("\"allowOtherProtocols\": {v}, \"allowedDomains\""), 1);
    }
    Proxy::start(&text, &["--resolve", "allowed.test:*:127.0.0.1", "--metrics", "127.0.0.1:0"])
}

#[test]
fn other_protocols_pass_only_where_the_settings_allow_them() {
    let (ssh, pg) = (ssh_like(), pg_like());
    let p = proxy(Some(&["allowed.test"]));
    let got = ssh_exchange(&p, ssh);
    assert!(got.starts_with("SSH-2.0-srt-test") && got.contains("hello SSH-2.0-OpenSSH_9.2p1"), "{got:?}");
    assert_eq!(pg_exchange(&p, pg), b"N");

    // listed with another port: refused here
    let p = proxy(Some(&["allowed.test:1"]));
    assert!(!ssh_exchange(&p, ssh).contains("hello"));
    // not listed at all (the default)
    let p = proxy(None);
    let got = ssh_exchange(&p, ssh);
    assert!(got.starts_with("SSH-2.0-srt-test"), "the server speaks first and is heard: {got:?}");
    assert!(!got.contains("hello"), "the client's bytes never reached it: {got:?}");
    assert_eq!(pg_exchange(&p, pg), b"");
    let line = p.wait_log(&["\"reason\":\"other-protocol\"", "\"allow\":false"]);
    assert!(line.contains("\"host\":\"allowed.test\""), "{line}");
    let v: serde_json::Value = serde_json::from_str(&p.wait_log(&["metrics_listening"])).unwrap();
    let m = curl(&[&format!("http://{}/metrics", v["addr"].as_str().unwrap())]).stdout;
    assert!(m.contains("proxy_requests_total{kind=\"connect\",decision=\"deny\",reason=\"other-protocol\"} 2"), "{m}");
}

#[test]
fn a_client_holding_idle_tunnels_does_not_starve_another() {
    let origin = Origin::start();
    // the proxy may not raise its descriptor limit above 1024
    let text = settings(&["allowed.test"], &[]);
    let p = Proxy::start_with(&text, &["--resolve", "allowed.test:*:127.0.0.1", "--first-flight-timeout", "60"], |c| {
        // SAFETY: setrlimit in the child before exec.
        unsafe {
            c.pre_exec(|| {
                let r = libc::rlimit { rlim_cur: 1024, rlim_max: 1024 };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &r) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    });
    // client 127.0.0.1 opens 2,000 tunnels and never sends a byte through them
    let mut idle = Vec::new();
    let mut refused = 0;
    for _ in 0..2000 {
        let mut s = connect(&p, origin.port, None);
        let st = status(&mut s);
        if st.starts_with("HTTP/1.1 200") {
            idle.push(s);
        } else {
            assert!(st.starts_with("HTTP/1.1 503"), "{st}");
            refused += 1;
        }
    }
    assert_eq!(idle.len(), 128, "--max-pending-per-client's default");
    assert_eq!(refused, 2000 - 128);
    p.wait_log(&["\"reason\":\"too-many-pending-tunnels\""]);
    // another client (127.0.0.2) is served meanwhile, and so is the first one's next honest tunnel
    // once its undecided ones are gone
    let mut s = connect(&p, origin.port, Some("127.0.0.2"));
    assert!(status(&mut s).starts_with("HTTP/1.1 200"));
    s.write_all(b"GET /small HTTP/1.1\r\nHost: allowed.test\r\n\r\n").unwrap();
    let mut got = String::new();
    let _ = s.read_to_string(&mut got);
    assert!(got.ends_with("origin-ok\n"), "{got}");
    drop(idle);
    let mut s = connect(&p, origin.port, None);
    let mut ok = status(&mut s).starts_with("HTTP/1.1 200");
    for _ in 0..50 {
        if ok {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        s = connect(&p, origin.port, None);
        ok = status(&mut s).starts_with("HTTP/1.1 200");
    }
    assert!(ok, "slots are given back when tunnels close");
}

#[test]
fn a_silent_tunnel_is_closed_after_the_first_flight_timeout() {
    let origin = Origin::start();
    let text = settings(&["allowed.test"], &[]).replacen(
        "\"allowedDomains\"",
        "\"firstFlightTimeout\": 1, \"allowedDomains\"",
        1,
    );
    let p = Proxy::start(&text, &["--resolve", "allowed.test:*:127.0.0.1", "--first-flight-timeout", "600"]);
    let mut s = connect(&p, origin.port, None);
    assert!(status(&mut s).starts_with("HTTP/1.1 200"));
    let start = std::time::Instant::now();
    let mut b = [0u8; 16];
    assert_eq!(s.read(&mut b).unwrap_or(0), 0, "closed");
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(900) && took < Duration::from_secs(5), "the settings' 1 s wins: {took:?}");
    p.wait_log(&["\"reason\":\"first-flight-timeout\"", "\"allow\":false"]);
    // a partial request head is refused when the time is up, never passed
    let mut s = connect(&p, origin.port, None);
    assert!(status(&mut s).starts_with("HTTP/1.1 200"));
    s.write_all(b"GET /small HTTP/1.1\r\nHost: allowed.test\r\n").unwrap();
    let mut got = String::new();
    let _ = s.read_to_string(&mut got);
    assert!(!got.contains("origin-ok"), "{got}");
    p.wait_log(&["\"reason\":\"first-flight-incomplete\""]);
    assert!(origin.heads.lock().unwrap().is_empty(), "nothing reached the origin");
}

#[test]
fn a_peer_holding_silent_connections_does_not_starve_another_client() {
    let origin = Origin::start();
    let text = settings(&["allowed.test"], &[]);
    let p = Proxy::start(
        &text,
        &["--resolve", "allowed.test:*:127.0.0.1", "--max-connections", "300", "--max-connections-per-client", "100"],
    );
    // 127.0.0.1 opens connections and sends nothing: it needs no token for that
    let mut silent = Vec::new();
    for _ in 0..400 {
        silent.push(TcpStream::connect(p.addr).unwrap());
    }
    // those beyond its cap are refused at once
    let start = std::time::Instant::now();
    let mut busy = 0;
    while busy < 300 && start.elapsed() < Duration::from_secs(5) {
        for c in &mut silent {
            c.set_nonblocking(true).unwrap();
            let mut b = [0u8; 12];
            if c.read(&mut b).is_ok_and(|n| n == 12 && &b == b"HTTP/1.1 503") {
                busy += 1;
            }
        }
    }
    assert_eq!(busy, 300, "{busy} of 400 were refused");
    // another client is served meanwhile
    let mut s = connect(&p, origin.port, Some("127.0.0.2"));
    let st = status(&mut s);
    assert!(st.starts_with("HTTP/1.1 200"), "{st}");
    s.write_all(b"GET /small HTTP/1.1\r\nHost: allowed.test\r\n\r\n").unwrap();
    let mut got = String::new();
    let _ = s.read_to_string(&mut got);
    assert!(got.ends_with("origin-ok\n"), "{got}");
    drop(silent);
}

//! With no allowed domains the command has no network at all: TCP, UDP, Unix sockets,
//! raw, packet and netlink sockets all fail, and nothing reaches a listener on the host.

use std::io::ErrorKind;
use std::net::UdpSocket;
use std::os::unix::net::UnixListener;

use super::harness::{py, tcp_probe, Env, Scenario};
use super::probes::{register, Probe};
use crate::escapes;

struct Udp(UdpSocket);
impl Probe for Udp {
    fn quiet(&self) -> Result<(), String> {
        let mut buf = [0u8; 64];
        match self.0.recv(&mut buf) {
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(()),
            other => Err(format!("a datagram reached the host sink: {other:?}")),
        }
    }
}

struct Unix(UnixListener);
impl Probe for Unix {
    fn quiet(&self) -> Result<(), String> {
        match self.0.accept() {
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(()),
            other => Err(format!("a Unix connection reached the host socket: {other:?}")),
        }
    }
}

fn tcp(e: &Env) {
    tcp_probe(e, "127.0.0.1:0");
}

fn tcp6(e: &Env) {
    tcp_probe(e, "[::1]:0");
}

fn udp(e: &Env) {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_nonblocking(true).unwrap();
    e.file(&e.o("port"), &s.local_addr().unwrap().port().to_string());
    register(Box::new(Udp(s)));
}

fn unix(e: &Env) {
    let l = UnixListener::bind(e.o("sock")).unwrap();
    l.set_nonblocking(true).unwrap();
    e.own(&e.o("sock"));
    register(Box::new(Unix(l)));
}

escapes! {
    tcp_to_host_listener => Scenario::new(r#"exec 3<>"/dev/tcp/127.0.0.1/$(cat "$O/port")" && echo CONNECTED"#)
        .setup(tcp).fails().lacks("CONNECTED");
    tcp_with_curl => Scenario::new(r#"curl -sS --max-time 5 "http://127.0.0.1:$(cat "$O/port")/" && echo CONNECTED"#)
        .setup(tcp).fails().lacks("CONNECTED");
    // landlock mode has no UDP sockets; namespace mode's reach only its own lo, so the
    // send "succeeds" there, into nothing: either way the host sink stays quiet
    udp_to_host_sink => Scenario::new(&(py("import socket,sys,os; p=int(open(sys.argv[1]).read()); \
        ns=os.environ[\"HTTP_PROXY\"].endswith(\":3128\"); \
        exec(\"try:\\n s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b\\\"leak\\\", (\\\"127.0.0.1\\\", p)); r=ns\\nexcept PermissionError: r=not ns\"); \
        print(\"EXPECTED\" if r else \"UNEXPECTED\")") + r#" "$O/port""#))
        .setup(udp).prints("EXPECTED");
    unix_socket_to_host => Scenario::new(&(py("import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])") + r#" "$O/sock""#))
        .setup(unix).fails().prints("Operation not permitted");
    abstract_unix_socket => Scenario::new(&py("import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"\\0srt-escape-abstract\")"))
        .fails().prints("Operation not permitted");
    netlink_socket => Scenario::new(&py("import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)")).fails().prints("Operation not permitted");
    packet_socket => Scenario::new(&py("import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)")).fails().prints("Operation not permitted");
    raw_ip_socket => Scenario::new(&py("import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, 1)")).fails().prints("Operation not permitted");
    ipv6_tcp_to_host_listener => Scenario::new(&(py("import socket,sys; s=socket.socket(socket.AF_INET6); \
        s.connect((\"::1\", int(open(sys.argv[1]).read())))") + r#" "$O/port""#)).setup(tcp6).fails();
}

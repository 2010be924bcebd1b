//! Through the embedded proxy (landlock mode): only the proxy is reachable, only with the
//! token, only for allowed hosts; no way around it on the same port or by TCP Fast Open.

use std::io::ErrorKind;
use std::net::TcpListener;

use super::harness::{py, register, Env, Probe, Scenario};
use crate::escapes;

struct Tcp(TcpListener);
impl Probe for Tcp {
    fn quiet(&self) -> Result<(), String> {
        match self.0.accept() {
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(()),
            other => Err(format!("a TCP connection reached the host listener: {other:?}")),
        }
    }
}

fn tcp(e: &Env) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    e.file(&e.o("port"), &l.local_addr().unwrap().port().to_string());
    register(Box::new(Tcp(l)));
}

fn proxy_port_of_env() -> &'static str {
    r#"p=${HTTP_PROXY##*:}; p=${p%%/*}; echo "$p""#
}

escapes! {
    other_host_on_the_proxy_port => Scenario::new(&format!(
        r#"port=$({}); exec 3<>"/dev/tcp/127.0.0.2/$port" && echo CONNECTED"#, proxy_port_of_env()))
        .fails().lacks("CONNECTED");
    proxy_without_token_gets_407 => Scenario::new(&format!(
        r#"port=$({}); curl -sS --max-time 5 -x "http://127.0.0.1:$port" -o /dev/null -w '%{{http_code}}' http://example.com/"#,
        proxy_port_of_env()))
        .prints("407");
    denied_https_through_the_proxy => Scenario::new("curl -sS --max-time 5 https://example.com/ -o /dev/null")
        .fails().prints("curl: (56) CONNECT tunnel failed, response 403");
    tcp_fast_open_bypass => Scenario::new(&(py("import socket,sys; s=socket.socket(); \
        s.sendto(b\"x\", 0x20000000, (\"127.0.0.1\", int(open(sys.argv[1]).read())))") + r#" "$O/port""#))
        .setup(tcp).fails();
}

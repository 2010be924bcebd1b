//! Through the embedded proxy (landlock mode): only the proxy is reachable, only with the
//! token, only for allowed hosts; no way around it on the same port or by TCP Fast Open.

use super::harness::{py, tcp_probe, Env, Scenario};
use crate::escapes;

fn tcp(e: &Env) {
    tcp_probe(e, "127.0.0.1:0");
}

fn proxy_port_of_env() -> &'static str {
    r#"p=${HTTP_PROXY##*:}; p=${p%%/*}; echo "$p""#
}

escapes! {
    other_host_on_the_proxy_port => Scenario::new(&format!(
        r#"port=$({}); exec 3<>"/dev/tcp/127.0.0.2/$port" && echo CONNECTED"#, proxy_port_of_env()))
        .fails().lacks("CONNECTED");
    // landlock mode's proxy listens on the host's loopback, where other users reach it: it
    // wants the token. Namespace mode's ports exist only inside the sandbox and take
    // requests without it (Java cannot send proxy credentials), still judged by the policy.
    proxy_without_token_gets_407_or_the_policy => Scenario::new(&format!(
        r#"port=$({}); code=$(curl -sS --max-time 5 -x "http://127.0.0.1:$port" -o /dev/null -w '%{{http_code}}' http://example.com/)
           case "$port:$code" in 3128:403) echo GOOD;; 3128:*) echo "BAD $port $code";; *:407) echo GOOD;; *) echo "BAD $port $code";; esac"#,
        proxy_port_of_env()))
        .prints("GOOD");
    denied_https_through_the_proxy => Scenario::new("curl -sS --max-time 5 https://example.com/ -o /dev/null")
        .fails().prints("curl: (56) CONNECT tunnel failed, response 403");
    tcp_fast_open_bypass => Scenario::new(&(py("import socket,sys; s=socket.socket(); \
        s.sendto(b\"x\", 0x20000000, (\"127.0.0.1\", int(open(sys.argv[1]).read())))") + r#" "$O/port""#))
        .setup(tcp).fails();
}

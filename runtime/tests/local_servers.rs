//! What a test suite does with a local server, under srt in both network modes, as root and
//! as uid 65534, and (`*_pod`) where `pidfd_getfd` is refused as in a pod under containerd's
//! RuntimeDefault: a node HTTP server on `127.0.0.1:0` (and on node's default, every
//! address) with a request to it, as supertest does; `python3 -m http.server` with curl to
//! it; a client of a Unix socket `allowUnixSockets` lists. The attempts to misuse these are
//! in the escape battery (`escape/local_net.rs`, `escape/unix_sockets.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

#[allow(dead_code)] // the battery's harness; not all of it is needed here
mod escape {
    pub mod harness;
    pub mod pod;
    pub mod probes;
    pub mod timed;
}

use escape::harness::Scenario;
use escape::pod::{python, without_pidfd_getfd};
use serde_json::json;

/// A server on `host` (node's default when empty), then a request to 127.0.0.1 on its port
/// (supertest's `request(app)` does exactly this with `app.listen(0)`).
const NODE: &str = r#"
const http = require('http');
const host = process.argv[2];
const s = http.createServer((q, r) => r.end('served ' + q.url));
const go = () => {
  const a = s.address();
  console.log('listening on', a.address, a.port);
  http.get({ host: '127.0.0.1', port: a.port, path: '/supertest' }, res => {
    let b = '';
    res.on('data', d => b += d);
    res.on('end', () => { console.log('GOT', res.statusCode, b); s.close(); });
  }).on('error', e => { console.log('ERROR', e.message); s.close(); process.exitCode = 1; });
};
if (host) s.listen(0, host, go); else s.listen(0, go);
"#;

fn node(host: &str) -> Scenario {
    Scenario::new(&format!(r#"node "$O/server.js" {host}"#))
        .setup(|e| e.file(&e.o("server.js"), NODE))
        .prints("GOT 200 served /supertest")
}

/// `python3 -m http.server` on its default port, curl to it by `localhost`.
fn http_server() -> Scenario {
    Scenario::new(
        r#"python3 -m http.server > "$TMPDIR/server.log" 2>&1 & pid=$!
        for i in $(seq 100); do curl -s -o /dev/null http://localhost:8000/ && break; sleep 0.1; done
        curl -sS -f http://localhost:8000/hello.txt; kill $pid; wait $pid 2>/dev/null; true"#,
    )
    .setup(|e| e.file(&e.w("hello.txt"), "HELLO-FROM-HTTP-SERVER\n"))
    .prints("HELLO-FROM-HTTP-SERVER")
}

/// A stream client of the listed socket; its answer is printed.
const UNIX_CLIENT: &str = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(3); s.connect(sys.argv[1])
print("unix:", s.recv(100).decode().strip())
"#;

fn unix_client() -> Scenario {
    python("client.py", UNIX_CLIENT, r#""$O/a.sock""#)
        .with("network.allowUnixSockets", json!(["{O}/a.sock"]))
        .setup(|e| {
            let l = std::os::unix::net::UnixListener::bind(e.o("a.sock")).unwrap();
            e.own(&e.o("a.sock"));
            // answers the one connection the scenario makes; ends with the test process
            std::thread::spawn(move || {
                if let Ok((mut c, _)) = l.accept() {
                    let _ = std::io::Write::write_all(&mut c, b"HELLO-A\n");
                }
            });
        })
        .prints("unix: HELLO-A")
}

/// A thread made without `CLONE_FILES` (its own descriptor table) binds and listens on its
/// descriptor N while the leader's N is another, unbound socket: srt must act on the
/// thread's (an outside review of c5ee3a3 saw the leader's bound instead).
const OWN_TABLE: &str = r#"
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
static int n;
static volatile int done;
static int port(int fd) {
  struct sockaddr_in a = {0}; socklen_t l = sizeof a;
  return getsockname(fd, (struct sockaddr *)&a, &l) == 0 ? ntohs(a.sin_port) : -1;
}
static int thread(void *x) {
  close(n);
  int s = socket(AF_INET, SOCK_STREAM, 0);
  if (s != n) { dup2(s, n); close(s); }
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  int b = bind(n, (struct sockaddr *)&a, sizeof a), l = listen(n, 1);
  printf("thread: bind %d listen %d port %d\n", b, l, port(n));
  fflush(stdout);
  done = 1;
  for (;;) pause();
  return 0;
}
int main(void) {
  n = socket(AF_INET, SOCK_STREAM, 0);
  char *stack = malloc(1 << 16);
  if (clone(thread, stack + (1 << 16), CLONE_VM | CLONE_SIGHAND | CLONE_THREAD, 0) < 0) { perror("clone"); return 1; }
  for (int i = 0; i < 5000 && !done; i++) usleep(1000);
  printf("leader: port %d\n", port(n));
  fflush(stdout);
  _exit(0);
}
"#;

fn own_table() -> Scenario {
    Scenario::new(r#""$O/own-table""#)
        .setup(|e| e.build_c("own-table", OWN_TABLE))
        .prints("thread: bind 0 listen 0 port ")
        .prints("leader: port 0")
        .lacks("thread: bind 0 listen 0 port 0")
}

escapes! {
    thread_with_a_descriptor_table_of_its_own => own_table();
    thread_with_a_descriptor_table_of_its_own_pod => without_pidfd_getfd(own_table());
    node_server_on_loopback_and_a_request_to_it => node("127.0.0.1");
    node_server_on_its_default_address_and_a_request_to_it => node("");
    node_server_pod => without_pidfd_getfd(node(""));
    python_http_server_and_curl => http_server();
    python_http_server_and_curl_pod => without_pidfd_getfd(http_server());
    unix_client_of_a_listed_socket => unix_client();
    unix_client_of_a_listed_socket_pod => without_pidfd_getfd(unix_client());
}

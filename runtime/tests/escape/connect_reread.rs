//! A connect srt leaves to the kernel (`CONTINUE`) makes the kernel read the address again
//! from the command's memory. With `allowUnixSockets` listing a path, another thread that
//! turns the address's family into `AF_UNIX` in between would reach any Unix socket by
//! path (an outside review of c5ee3a3): an `AF_UNSPEC` disconnect in both modes, and in
//! namespace mode a loopback `AF_INET` connect whose bytes also spell a relative path. The
//! unlisted host socket must stay quiet whatever the race gives.

use serde_json::json;

use super::harness::{tcp_probe, Env, Scenario};
use super::pod::without_pidfd_getfd;
use super::unix_sockets::{host_socket, host_socket_at, listed};
use crate::escapes;

/// `race MODE DIR TRIES`: connects `AF_UNIX` stream sockets while another thread flips the
/// address's family between `AF_UNIX` and `AF_UNSPEC` (MODE u, path DIR/b.sock) or
/// `AF_INET` (MODE i, path `AB\x7f\x01\x01\x01` in DIR: as `sockaddr_in`, 127.1.1.1 port
/// 16706). At most TRIES tries or 10 s.
const FAMILY_RACE: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
static struct sockaddr_un sa;
static volatile int stop;
static int other;
static void *flip(void *x) {
  volatile sa_family_t *f = &sa.sun_family;
  while (!stop) { *f = other; *f = AF_UNIX; }
  return x;
}
int main(int argc, char **argv) {
  if (argc != 4) return 2;
  other = argv[1][0] == 'u' ? AF_UNSPEC : AF_INET;
  sa.sun_family = AF_UNIX;
  if (other == AF_UNSPEC) snprintf(sa.sun_path, sizeof sa.sun_path, "%s/b.sock", argv[2]);
  else { memcpy(sa.sun_path, "AB\x7f\x01\x01\x01", 6); if (chdir(argv[2])) { perror("chdir"); return 2; } }
  int n = atoi(argv[3]), reached = 0, i;
  pthread_t t;
  pthread_create(&t, 0, flip, 0);
  time_t end = time(0) + 10;
  for (i = 0; i < n && time(0) < end; i++) {
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (s < 0) { perror("socket"); break; }
    if (connect(s, (struct sockaddr *)&sa, sizeof sa) == 0) {
      struct sockaddr_un peer; socklen_t l = sizeof peer;
      if (getpeername(s, (struct sockaddr *)&peer, &l) == 0 && l > sizeof(sa_family_t)) reached++;
    }
    close(s);
  }
  stop = 1;
  pthread_join(t, 0);
  printf("%s %c: %d tries, %d connected to a path\n", reached ? "REACHED" : "HELD", argv[1][0], i, reached);
  return 0;
}
"#;

/// Setup: FAMILY_RACE built in O; the listed O/a.sock, the unlisted O/b.sock and the
/// unlisted O/`AB\x7f\x01\x01\x01`.
fn family_race(e: &Env) {
    e.build_c("race", FAMILY_RACE);
    host_socket(e, "a.sock", true);
    host_socket(e, "b.sock", false);
    host_socket_at(e, &e.o("AB\u{7f}\u{1}\u{1}\u{1}"), "inet-spelled", false);
}

fn race() -> Scenario {
    listed(Scenario::new(r#""$O/race" u "$O" 3000; "$O/race" i "$O" 3000"#))
        .setup(family_race)
        .prints("HELD u: ")
        .prints("HELD i: ")
        .lacks("REACHED")
}

/// `tcprace OTHER PORT TRIES`: TCP connects to 127.0.0.1:PORT while another thread flips the
/// family between `AF_INET` and OTHER (`u`: `AF_UNSPEC`, `x`: `AF_UNIX`). At most TRIES
/// tries or 10 s.
const TCP_RACE: &str = r#"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
static struct sockaddr_in sa;
static volatile int stop;
static int other;
static void *flip(void *x) {
  volatile sa_family_t *f = &sa.sin_family;
  while (!stop) { *f = other; *f = AF_INET; }
  return x;
}
int main(int argc, char **argv) {
  if (argc != 4) return 2;
  other = argv[1][0] == 'u' ? AF_UNSPEC : AF_UNIX;
  sa.sin_family = other;
  sa.sin_port = htons(atoi(argv[2]));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int n = atoi(argv[3]), reached = 0, i;
  pthread_t t;
  pthread_create(&t, 0, flip, 0);
  time_t end = time(0) + 10;
  for (i = 0; i < n && time(0) < end; i++) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) { perror("socket"); break; }
    struct sockaddr_in p; socklen_t l = sizeof p;
    if (connect(s, (struct sockaddr *)&sa, sizeof sa) == 0 && getpeername(s, (struct sockaddr *)&p, &l) == 0) reached++;
    close(s);
  }
  stop = 1;
  pthread_join(t, 0);
  printf("%s %c: %d tries, %d connected\n", reached ? "REACHED" : "HELD", argv[1][0], i, reached);
  return 0;
}
"#;

/// Setup: TCP_RACE built in O, a host listener on 127.0.0.1 (its port in O/port).
fn tcp_race(e: &Env) {
    e.build_c("tcprace", TCP_RACE);
    tcp_probe(e, "127.0.0.1:0");
}

/// `--allow-weaker` on a kernel whose Landlock has no TCP rules (before 6.7), made here by
/// answering srt's three Landlock version queries with 3 (strace's fault injection): srt
/// then builds its ruleset as it would there, and every connect rests on the supervisor.
fn without_landlock_tcp(s: Scenario) -> Scenario {
    s.wrap(
        r#"strace -f -qq --seccomp-bpf -e trace=landlock_create_ruleset -e inject=landlock_create_ruleset:retval=3:when=1..3 -o /dev/null "$SRT" --allow-weaker "$MODE" -s "$SETTINGS" -c "$CMD""#,
    )
}

/// `bindrace TRIES`: binds TCP sockets while another thread flips the address between
/// `AF_UNIX` (left to the kernel under `allowAllUnixSockets` where Landlock refuses TCP
/// binds) and `AF_INET 0.0.0.0:0`; a bind that lands on the host's wildcard address (read
/// on descriptor 0, which srt leaves to the kernel) is an escape. At most TRIES or 10 s.
const BIND_RACE: &str = r#"
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
static struct sockaddr_in sa;
static volatile int stop;
static void *flip(void *x) {
  volatile sa_family_t *f = &sa.sin_family;
  while (!stop) { *f = AF_UNIX; *f = AF_INET; }
  return x;
}
int main(int argc, char **argv) {
  if (argc != 2) return 2;
  sa.sin_family = AF_UNIX;
  int n = atoi(argv[1]), wild = 0, i;
  pthread_t t;
  pthread_create(&t, 0, flip, 0);
  time_t end = time(0) + 10;
  for (i = 0; i < n && time(0) < end; i++) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) { perror("socket"); break; }
    if (bind(s, (struct sockaddr *)&sa, sizeof sa) == 0) {
      struct sockaddr_in r = {0}; socklen_t l = sizeof r;
      dup2(s, 0);
      if (getsockname(0, (struct sockaddr *)&r, &l) == 0 && r.sin_addr.s_addr == htonl(INADDR_ANY)) wild++;
    }
    close(s);
  }
  stop = 1;
  pthread_join(t, 0);
  printf("%s bind: %d tries, %d on the host's wildcard address\n", wild ? "REACHED" : "HELD", i, wild);
  return 0;
}
"#;

fn bind_race() -> Scenario {
    // namespace mode leaves binds to the kernel: its wildcard address is the sandbox's own
    // (MODE, the harness's, reaches the command through the wrapper and srt)
    Scenario::new(r#"case "$MODE" in *namespace) echo "HELD bind: the sandbox's own wildcard";; *) "$O/bindrace" 3000 < /dev/null;; esac"#)
        .with("network.allowAllUnixSockets", json!(true))
        .setup(|e| e.build_c("bindrace", BIND_RACE))
        .prints("HELD bind: ")
        .lacks("REACHED")
}

fn tcp_races() -> Scenario {
    Scenario::new(r#"p=$(cat "$O/port"); "$O/tcprace" u "$p" 3000"#).setup(tcp_race).prints("HELD u: ").lacks("REACHED")
}

escapes! {
    // a Unix bind turned into a TCP bind on the host's wildcard address, Landlock's TCP rules
    // missing (and, the control, present)
    bind_family_flipped_to_tcp_without_landlock_tcp => without_landlock_tcp(bind_race());
    // the supervisor makes the connect: a relative path is still the command's (its cwd)
    relative_unix_path_without_landlock_tcp => without_landlock_tcp(
        Scenario::new(r#"cd "$O" && python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.settimeout(3); s.connect("rel.sock"); print("got", s.recv(100).decode().strip())'"#)
            .with("network.allowAllUnixSockets", json!(true))
            .setup(|e| host_socket(e, "rel.sock", true))
            .prints("got HELLO-rel.sock"));
    bind_family_flipped_to_tcp => bind_race().wrap(r#""$SRT" "$MODE" -s "$SETTINGS" -c "$CMD""#);
    // a disconnect turned into a TCP connect to a host listener, Landlock's TCP rules missing
    connect_unspec_flipped_to_tcp_without_landlock_tcp => without_landlock_tcp(tcp_races());
    // the same from AF_UNIX under allowAllUnixSockets
    connect_unix_flipped_to_tcp_without_landlock_tcp => without_landlock_tcp(
        Scenario::new(r#"p=$(cat "$O/port"); "$O/tcprace" x "$p" 3000"#)
            .with("network.allowAllUnixSockets", json!(true))
            .setup(tcp_race).prints("HELD x: ").lacks("REACHED"));

    // a disconnect or loopback connect turned into a Unix path while the kernel reads it again
    connect_family_flipped_to_unix => race();
    connect_family_flipped_to_unix_pod => without_pidfd_getfd(race());
}

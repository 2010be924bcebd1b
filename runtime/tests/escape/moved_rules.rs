//! Landlock's rules are on inodes, and a directory carries its rule wherever it is moved.
//! Round 8 (issue 36's review) read a `denyRead` tree by moving a directory with a read
//! rule into it and then a denied file into that directory: a pool directory (which grants
//! reading since write roots read back), a directory planned at launch (`src/`), and the
//! run's TMPDIR. No directory may be moved into a read-denied tree.

use serde_json::json;

use super::harness::{Env, Scenario};
use crate::escapes;

fn secret() -> Scenario {
    Scenario::new("").with("filesystem.denyRead", json!(["{W}/secret"])).setup(|e| {
        e.file(&e.w("secret/key"), "TOPSECRET\n");
        e.file(&e.w("src/main.c"), "int main;\n");
    })
}

fn attempt(cmd: &str) -> Scenario {
    let mut s = secret();
    s.cmd = cmd.into();
    s.fails().lacks("TOPSECRET")
}

/// Round 8, second pass (F1): a file move judged as a file, with another thread swapping a
/// directory that carries a read rule (`D`, there at launch) in by `RENAME_EXCHANGE` before
/// the supervisor renames by name; stuck FIFO opens make the watchdog add supervisor
/// threads so that the two calls are served at once. Bounded: 3,000 rounds.
const SWAP_RACE: &str = r#"
#define _GNU_SOURCE
#include <stdio.h>
#include <fcntl.h>
#include <unistd.h>
#include <pthread.h>
#include <sys/stat.h>
static pthread_barrier_t b1, b2;
static void *swapper(void *a) {
  for (;;) { pthread_barrier_wait(&b1); renameat2(AT_FDCWD, "D", AT_FDCWD, "f", RENAME_EXCHANGE); pthread_barrier_wait(&b2); }
}
static int isdir(const char *p) { struct stat s; return !lstat(p, &s) && S_ISDIR(s.st_mode); }
int main(void) {
  setvbuf(stdout, 0, _IONBF, 0);
  mkfifo("ff", 0600);
  for (int i = 0; i < 6; i++) { if (!fork()) { open("ff", O_WRONLY | O_CREAT | O_TRUNC, 0600); _exit(0); } usleep(150000); }
  open("ff", O_RDWR | O_CREAT, 0600); usleep(300000);
  pthread_barrier_init(&b1, 0, 2); pthread_barrier_init(&b2, 0, 2);
  pthread_t t; pthread_create(&t, 0, swapper, 0);
  for (int i = 0; i < 3000; i++) {
    if (isdir("f")) renameat2(AT_FDCWD, "D", AT_FDCWD, "f", RENAME_EXCHANGE);
    unlink("secret/x"); close(open("f", O_CREAT | O_WRONLY, 0644));
    pthread_barrier_wait(&b1);
    rename("f", "secret/x");
    pthread_barrier_wait(&b2);
    if (isdir("secret/x")) {
      rename("secret/key", "secret/x/key");
      char buf[64] = {0}; int fd = open("secret/x/key", O_RDONLY);
      printf("round %d: %s\n", i, fd >= 0 && read(fd, buf, 63) > 0 ? buf : "open failed"); _exit(0);
    }
  }
  puts("RACE-LOST"); _exit(1);
}
"#;

/// Setup: SWAP_RACE built in O, and `D` in W (a directory with a rule since launch).
fn swap_race(e: &Env) {
    e.build_c("race", SWAP_RACE);
    e.dir(&e.w("D"));
}

escapes! {
    // a pool directory (mkdir in `.`) moved in, the denied file moved below it
    pool_directory_moved_into_a_denied_tree => attempt(
        "cat secret/key; mkdir x && mv x secret/x && mkdir secret/d && mv secret/key secret/d/ && mv secret/d secret/x/ && cat secret/x/d/key");
    // a directory with a rule of its own since launch
    planned_directory_moved_into_a_denied_tree => attempt(
        "mv src secret/src && mv secret/key secret/src/key && cat secret/src/key");
    // the run's TMPDIR, whose rule lets the kernel make files
    tmpdir_moved_into_a_denied_tree => attempt(
        r#"mv "$TMPDIR" secret/t && mv secret/key secret/t/key && cat secret/t/key"#);
    // a directory moved in by its parent
    parent_of_a_pool_directory_moved_into_a_denied_tree => attempt(
        "mkdir -p a/b && mv a secret/a && mv secret/key secret/a/b/key && cat secret/a/b/key");
    // round 8, second pass (F1)
    directory_swapped_in_for_a_judged_file => attempt(r#"cat secret/key; "$O/race""#).prints("RACE-LOST")
        .setup(swap_race)
        .within(std::time::Duration::from_secs(120));
    // round 8, second pass (F2): onto a readable name with a denied path below it, where a
    // denied file then follows
    directory_onto_a_name_with_a_denied_path_below => Scenario::new(
        "mkdir p && mv p keys && mv secret.txt keys/id && cat keys/id; mv src keys2 && mv secret.txt keys2/id && cat keys2/id; exit 1")
        .with("filesystem.denyRead", json!(["{W}/secret.txt", "{W}/keys/id", "{W}/keys2/id"]))
        .setup(|e| { e.file(&e.w("secret.txt"), "TOPSECRET\n"); e.file(&e.w("src/main.c"), "int main;\n"); })
        .fails().lacks("TOPSECRET");
}

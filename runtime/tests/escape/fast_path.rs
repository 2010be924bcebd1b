//! The supervisor's fast path: below a Landlock write rule (an existing directory such as
//! `sub/`) it answers name operations with CONTINUE after checking the path, so the kernel
//! re-reads the path from the command's memory. These scenarios flip that memory between
//! a name in `sub/` and a protected name (or a path outside) from a second thread while the
//! first keeps calling: the kernel, under the command's Landlock domain, must refuse every
//! flipped call by itself.

use super::harness::Scenario;
use crate::escapes;

/// argv: OP EVIL. Thread A flips a buffer between "sub/<name>" and EVIL; thread B calls OP
/// with it (bounded: 20000 calls or 4 s) and removes what it made in sub/ each time. Exits 0
/// only if EVIL came to exist.
const FLIP: &str = r#"
import ctypes, os, sys, threading, time
l = ctypes.CDLL(None, use_errno=True)
op, evil = sys.argv[1], sys.argv[2]
good = b"sub/made"
bad = evil.encode()
buf = ctypes.create_string_buffer(max(len(good), len(bad)) + 1)
src = b"sub/src\0"
open("sub/src", "w").close()
stop = time.time() + 4
done = []
def flip():
    while not done and time.time() < stop:
        ctypes.memmove(buf, good + b"\0", len(good) + 1); ctypes.memmove(buf, bad + b"\0", len(bad) + 1)
t = threading.Thread(target=flip); t.start()
won = False
for i in range(20000):
    if time.time() > stop: break
    if op == "create": fd = l.open(buf, os.O_WRONLY | os.O_CREAT, 0o755); fd >= 0 and os.close(fd)
    elif op == "mkdir": l.mkdir(buf, 0o755)
    elif op == "symlink": l.symlink(b"/tmp\0", buf)
    elif op == "link": l.link(src, buf)
    elif op == "rename": l.rename(src, buf); open("sub/src", "w").close()
    if os.path.lexists(evil): won = True; break
    for p in ("sub/made",):
        try: os.rmdir(p)
        except OSError:
            try: os.unlink(p)
            except OSError: pass
done.append(1); t.join()
print("RACE WON after", i) if won else print("race lost after", i)
sys.exit(0 if won else 1)
"#;

fn flip(op: &'static str, evil: &'static str) -> Scenario {
    Scenario::new(&format!(r#"/usr/bin/python3 "$O/flip.py" {op} {evil}"#))
        .setup(|e| {
            e.dir(&e.w("sub"));
            e.file(&e.o("flip.py"), FLIP);
        })
        .fails()
        .lacks("RACE WON")
}

escapes! {
    create_flipped_to_mandatory_deny => flip("create", ".bashrc").absent("w/.bashrc");
    create_flipped_to_git_hook => flip("create", ".git/hooks/pre-commit")
        .setup(|e| e.dir(&e.w(".git/hooks"))).absent("w/.git/hooks/pre-commit");
    create_flipped_outside => flip("create", "../o/evil").absent("o/evil");
    mkdir_flipped_to_protected_dir => flip("mkdir", ".vscode").absent("w/.vscode");
    symlink_flipped_to_guarded_name => flip("symlink", ".claude").absent("w/.claude");
    link_flipped_to_mandatory_deny => flip("link", ".profile").absent("w/.profile");
    rename_flipped_to_mandatory_deny => flip("rename", ".zshrc").absent("w/.zshrc");
    rename_flipped_outside => flip("rename", "../o/moved").absent("o/moved");
}

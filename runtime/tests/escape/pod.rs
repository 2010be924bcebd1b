//! Helpers shared by scenarios that also run as in a restricted pod.

use super::harness::Scenario;

/// The stand-in for a restricted pod: refuses `pidfd_getfd` (as containerd's RuntimeDefault
/// does without CAP_SYS_PTRACE) to srt and everything below it.
const RESTRICTED: &str = include_str!("../../../tests/tests/pod/restricted.py");

/// Runs `s` (and any srt its wrapper starts through `$WRAP "$SRT"`) where `pidfd_getfd` is
/// refused.
pub fn without_pidfd_getfd(s: Scenario) -> Scenario {
    let s = s
        .setup(|e| e.file(&e.o("restricted.py"), RESTRICTED))
        .env("WRAP", "/usr/bin/python3 {O}/restricted.py")
        .env("RESTRICTED_CALLS", "pidfd_getfd")
        // restricted.py switches root to this uid: stay root in the root runs
        .env("POD_UID", "0");
    if s.wrapper.is_some() {
        s
    } else {
        s.wrap(r#"$WRAP "$SRT" "$MODE" -s "$SETTINGS" -c "$CMD""#)
    }
}

/// `script` written to O/<name>, run by the command with `args`.
pub fn python(name: &'static str, script: &'static str, args: &str) -> Scenario {
    Scenario::new(&format!(r#"/usr/bin/python3 "$O/{name}" {args}"#)).setup(move |e| e.file(&e.o(name), script))
}

/// A Python function `real(sock)`: where a listening or connected TCP socket really is, as
/// the kernel's socket table says (`/proc/net/tcp{,6}`), v4-mapped addresses as IPv4. In
/// landlock mode `getsockname()` shows the command the address it asked for, not the run's
/// own where srt placed it; scenarios about that placement need the real one.
#[macro_export]
macro_rules! real_addr_py {
    () => {
        r#"
def real(s):
    import os, socket
    ino = os.fstat(s.fileno()).st_ino
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in open(f).read().splitlines()[1:]:
            x = line.split()
            if int(x[9]) != ino: continue
            h, port = x[1].split(":")
            b = bytes.fromhex(h)
            b = b"".join(b[i:i + 4][::-1] for i in range(0, len(b), 4))
            a = socket.inet_ntop(socket.AF_INET if len(b) == 4 else socket.AF_INET6, b)
            return (a[7:] if a.startswith("::ffff:") else a), int(port, 16)
    raise OSError("socket not in /proc/net/tcp")
"#
    };
}

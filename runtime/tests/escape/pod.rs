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

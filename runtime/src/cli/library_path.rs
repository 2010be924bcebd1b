//! srt's own `LD_LIBRARY_PATH`. glibc reads it once, at start-up, into the search path of
//! every later `dlopen` (static and dynamic builds alike), and srt's resolver (the proxy's
//! `getaddrinfo`) loads an NSS module, `libnss_<service>.so.2` for each `hosts:` service of
//! `/etc/nsswitch.conf` but the built-in `files` and `dns`, at its first lookup: while the
//! command runs. An entry the command may write (an empty or relative one names the working
//! directory; a project's own `lib/`) would load the command's library into srt, outside
//! the sandbox. So srt starts itself once more without it, before anything else, and hands
//! the value on to the command, which gets it as it was.

use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

/// Where the restarted srt finds the value to give the command.
const HANDED_ON: &str = "SRT_COMMAND_LD_LIBRARY_PATH";
const VAR: &str = "LD_LIBRARY_PATH";

/// Restarts srt without `LD_LIBRARY_PATH` when it is set (never returns then), or, in the
/// restarted srt, puts the value back in the environment the command inherits (glibc's
/// search path is fixed by now). `Err`: the message to stop with.
pub fn settle(args: &[OsString]) -> Result<(), String> {
    // musl has no NSS and a static srt loads no library after its start: the variable
    // names nothing srt reads, and the command inherits it as it is
    if cfg!(target_env = "musl") {
        return Ok(());
    }
    match std::env::var_os(VAR) {
        // glibc ignores an empty value, and there is nothing to hand on
        Some(v) if !v.is_empty() => {
            let e = restart(args, &v);
            Err(format!(
                "srt: error: LD_LIBRARY_PATH is set, and srt could not start itself again without it ({e}): its \
                 resolver would load NSS modules from there while the command runs, and the command may write \
                 some of those directories. Unset LD_LIBRARY_PATH for srt and set it inside the command \
                 (srt -c 'LD_LIBRARY_PATH=... cmd')"
            ))
        }
        _ => {
            if let Some(v) = std::env::var_os(HANDED_ON) {
                // only this thread runs yet (nothing has been started), so nothing reads the
                // environment while it changes
                std::env::set_var(VAR, v);
                std::env::remove_var(HANDED_ON);
            }
            Ok(())
        }
    }
}

/// execve of srt's own binary with the same arguments and the environment less
/// `LD_LIBRARY_PATH` plus [`HANDED_ON`]; returns only on failure. A raw execve, not
/// `Command::exec`: that resets the signal mask and `SIGPIPE`, which are the command's.
fn restart(args: &[OsString], value: &OsStr) -> std::io::Error {
    let c = |b: &[u8]| CString::new(b).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL));
    let build = || -> std::io::Result<(Vec<CString>, Vec<CString>)> {
        let argv = args.iter().map(|a| c(a.as_bytes())).collect::<Result<Vec<_>, _>>()?;
        let mut envp = Vec::new();
        for (k, v) in std::env::vars_os() {
            if k != VAR && k != HANDED_ON {
                envp.push(c(&[k.as_bytes(), b"=", v.as_bytes()].concat())?);
            }
        }
        envp.push(c(&[HANDED_ON.as_bytes(), b"=", value.as_bytes()].concat())?);
        Ok((argv, envp))
    };
    let (argv, envp) = match build() {
        Ok(b) => b,
        Err(e) => return e,
    };
    let mut argv_p: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_p.push(std::ptr::null());
    let mut envp_p: Vec<*const libc::c_char> = envp.iter().map(|a| a.as_ptr()).collect();
    envp_p.push(std::ptr::null());
    // srt raised its own soft limits first thing (main.rs): the restarted srt must find, and
    // pass on to the command, those it was given
    crate::limits::given().restore();
    // SAFETY: NUL-terminated path, and NULL-terminated arrays of pointers into `argv` and
    // `envp`, which outlive the call.
    unsafe { libc::execve(c"/proc/self/exe".as_ptr(), argv_p.as_ptr(), envp_p.as_ptr()) };
    let e = std::io::Error::last_os_error();
    crate::limits::raise_again();
    e
}

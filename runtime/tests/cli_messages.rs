//! What users read: unknown options, settings errors that name their source, `-d` output
//! that stays plain in files, the hosts the proxy refused, and live policy updates over
//! `--control-fd` (srt 0.0.83's option).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::os::unix::process::CommandExt;
use std::process::Stdio;
use std::time::Duration;

mod common;
use common::{dir, out, srt, srt_for_any_user};

#[test]
fn a_misspelt_option_is_named_not_run() {
    let d = dir("typo");
    let (code, stdout, stderr) = out(srt(&d.0).args(["--setings", "s.json", "-c", "echo RAN"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(!stdout.contains("RAN"));
    assert!(stderr.contains("srt: unknown option --setings (did you mean --settings?)"), "{stderr}");
    assert!(!stderr.contains("bash"), "bash never saw it: {stderr}");
    // after the command starts, words are the command's
    let (code, stdout, _) = out(srt(&d.0).arg("-s").arg(d.0.join("s.json")).args(["--", "echo", "--setings"]));
    assert_eq!(code, 0);
    assert!(stdout.contains("--setings"), "{stdout}");
}

#[test]
fn settings_errors_name_where_the_settings_came_from() {
    let d = dir("source");
    std::fs::write(d.0.join("bad.json"), "{").unwrap();
    let (code, _, stderr) = out(srt(&d.0).env("SRT_SETTINGS_PATH", d.0.join("bad.json")).args(["-c", "true"]));
    assert_eq!(code, 1);
    assert!(stderr.contains("$SRT_SETTINGS_PATH"), "{stderr}");
    assert!(!stderr.contains("--settings asked"), "{stderr}");
    std::fs::write(d.0.join(".srt-settings.json"), "{").unwrap();
    let (code, _, stderr) = out(srt(&d.0).args(["-c", "true"]));
    assert_eq!(code, 1);
    assert!(stderr.contains(".srt-settings.json (read because no --settings was given)"), "{stderr}");
    let (_, _, stderr) = out(srt(&d.0).arg("-s").arg(d.0.join("bad.json")).args(["-c", "true"]));
    assert!(stderr.contains("the rules --settings"), "{stderr}");
}

#[test]
fn debug_output_has_no_colour_codes_in_a_file() {
    let d = dir("debug");
    let (code, _, stderr) = out(srt(&d.0).arg("-d").arg("-s").arg(d.0.join("s.json")).args(["-c", "echo x > f"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("mediated") || stderr.contains("DEBUG"), "-d logs: {stderr}");
    assert!(!stderr.contains('\u{1b}'), "escape codes in a non-terminal: {stderr:?}");
}

#[test]
fn refused_hosts_are_named_at_exit_unless_asked_not_to() {
    let d = dir("hints");
    for mode in ["landlock", "namespace"] {
        let curl = "curl -s -o /dev/null --max-time 8 https://example.com/; curl -s -o /dev/null --max-time 8 http://denied.test/";
        let (_, _, stderr) =
            out(srt(&d.0).args(["--network-mode", mode, "-s"]).arg(d.0.join("s.json")).args(["-c", curl]));
        assert!(stderr.contains("srt: network: refused example.com:443 (not in allowedDomains)"), "{mode}: {stderr}");
        assert!(stderr.contains("srt: network: refused denied.test:80 (not in allowedDomains)"), "{mode}: {stderr}");
        let (_, _, quiet) = out(srt(&d.0)
            .args(["--network-mode", mode, "--no-network-hints", "-s"])
            .arg(d.0.join("s.json"))
            .args(["-c", curl]));
        assert!(!quiet.contains("srt: network:"), "{mode}: {quiet}");
    }
}

#[test]
fn refusals_explain_themselves_in_the_status_line_and_body() {
    let d = dir("reason");
    for mode in ["landlock", "namespace"] {
        let (_, stdout, stderr) = out(srt(&d.0).args(["--network-mode", mode, "-s"]).arg(d.0.join("s.json")).args([
            "-c",
            "curl -s -i --max-time 8 http://example.com/; curl -s -v -o /dev/null --max-time 8 https://example.com/ 2>&1 | grep '< HTTP'",
        ]));
        assert!(
            stdout.contains("HTTP/1.1 403 Blocked by sandbox network allowlist (host not allowed)"),
            "{mode}: {stdout}{stderr}"
        );
        assert!(stdout.contains("Connection blocked by network allowlist"), "srt 0.0.83's body words: {stdout}");
        assert_eq!(stdout.matches("403 Blocked by sandbox").count(), 2, "the CONNECT answer too: {stdout}");
    }
}

#[test]
fn control_fd_replaces_the_network_policy_while_the_command_runs() {
    let d = dir("control");
    let port = srt_tests::http_origin();
    for mode in ["landlock", "namespace"] {
        let mut fds = [0; 2];
        // SAFETY: pipe writes two fresh descriptors.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let (r, w) = (fds[0], fds[1]);
        let script = format!(
            "curl -s --noproxy '' --max-time 8 http://localhost:{port}/ -o /dev/null -w 'before=%{{http_code}}\\n'; \
             while [ ! -e go ]; do sleep 0.05; done; \
             curl -s --noproxy '' --max-time 8 http://localhost:{port}/ -w 'after=%{{http_code}}\\n'"
        );
        let mut c = srt(&d.0);
        c.args(["--network-mode", mode, "--control-fd", "3", "-s"]).arg(d.0.join("s.json")).args(["-c", &script]);
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        // SAFETY: dup2 in the child before exec, onto fd 3, from a descriptor it inherited.
        unsafe {
            c.pre_exec(move || {
                if libc::dup2(r, 3) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = c.spawn().unwrap();
        // SAFETY: the parent's copy of the read end is not needed any more.
        unsafe { libc::close(r) };
        std::thread::sleep(Duration::from_millis(1500));
        let allow = r#"{"network":{"allowedDomains":["localhost"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}"#;
        let line = format!("{allow}\n");
        // SAFETY: writing a buffer we own to our pipe end, then closing it.
        unsafe {
            libc::write(w, line.as_ptr().cast(), line.len());
            libc::close(w);
        }
        std::thread::sleep(Duration::from_millis(300));
        std::fs::write(d.0.join("w/go"), "").unwrap();
        let o = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        let _ = std::fs::remove_file(d.0.join("w/go"));
        assert!(text.contains("before=403"), "{mode}: {text}{}", String::from_utf8_lossy(&o.stderr));
        assert!(text.contains("origin-ok") && text.contains("after=200"), "{mode}: {text}");
    }
}

#[test]
fn a_control_fd_that_is_not_open_is_an_error_before_the_command_runs() {
    let d = dir("badfd");
    let (code, stdout, stderr) =
        out(srt(&d.0).args(["--control-fd", "77", "-s"]).arg(d.0.join("s.json")).args(["-c", "echo RAN"]));
    assert_eq!(code, 1, "{stderr}");
    assert!(!stdout.contains("RAN"));
    assert!(stderr.contains("--control-fd 77"), "{stderr}");
}

/// srt started with stderr closed opens `/dev/null` there before anything else (else its
/// messages would go into the first file it keeps open); where `/dev/null` cannot be
/// opened it refuses to run, and says so on stdout, the channel left. Root only: a mount
/// namespace whose `/dev/null` uid 65534 may not open.
#[test]
fn a_closed_stderr_without_dev_null_is_refused_on_stdout() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        srt_tests::skip("a_closed_stderr_without_dev_null_is_refused_on_stdout", "needs root for a mount namespace");
        return;
    }
    let d = dir("nonull");
    let blocked = d.0.join("nonull");
    std::fs::write(&blocked, "").unwrap();
    std::fs::set_permissions(&blocked, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
    let blocked = std::ffi::CString::new(blocked.to_str().unwrap()).unwrap();
    let mut c = srt_for_any_user(&d.0);
    c.args(["-c", "echo RAN"]);
    // SAFETY: only system calls on values prepared before the fork.
    unsafe {
        c.pre_exec(move || {
            let ok = |r: libc::c_int| if r < 0 { Err(std::io::Error::last_os_error()) } else { Ok(()) };
            ok(libc::unshare(libc::CLONE_NEWNS))?;
            let none = std::ptr::null();
            ok(libc::mount(none, c"/".as_ptr(), none, libc::MS_REC | libc::MS_PRIVATE, std::ptr::null()))?;
            ok(libc::mount(blocked.as_ptr(), c"/dev/null".as_ptr(), none, libc::MS_BIND, std::ptr::null()))?;
            ok(libc::setgroups(0, std::ptr::null()))?;
            ok(libc::setgid(65534))?;
            ok(libc::setuid(65534))?;
            ok(libc::close(2))
        })
    };
    let (code, stdout, _) = out(&mut c);
    assert_eq!(code, 1, "{stdout}");
    assert!(!stdout.contains("RAN"), "{stdout}");
    assert!(stdout.contains("descriptor 2 is closed and /dev/null cannot be opened"), "{stdout}");
}

/// Round 7's second review: with `$HOME` elsewhere, the user's own home (from the password
/// database) in a writable tree had no home rules. srt refuses to run and says why.
#[test]
fn a_writable_home_that_home_does_not_name_is_refused() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        srt_tests::skip("a_writable_home_that_home_does_not_name_is_refused", "needs root, whose home is /root");
        return;
    }
    let d = dir("otherhome");
    let everything = r#"{"network":{"allowedDomains":[],"deniedDomains":[]},
 "filesystem":{"denyRead":[],"allowWrite":["/"],"denyWrite":[]}}"#;
    std::fs::write(d.0.join("all.json"), everything).unwrap();
    let (code, stdout, stderr) = out(srt(&d.0).arg("-s").arg(d.0.join("all.json")).args(["-c", "echo RAN"]));
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(!stdout.contains("RAN"), "{stdout}");
    assert!(
        stderr.contains("your home directory /root (from the password database) lies in a writable tree"),
        "{stderr}"
    );
    // with $HOME naming it, the home rules protect it and the command runs
    let (code, stdout, stderr) =
        out(srt(&d.0).env("HOME", "/root").arg("-s").arg(d.0.join("all.json")).args(["-c", "echo RAN"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("RAN"), "{stdout}");
}

//! What the command is given: bash's argv for `-c CMD` or for argv words, and the
//! environment under the settings' `environment` policy.

use std::ffi::{CString, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use settings_schema::Settings;

use crate::error::LaunchError;

/// srt runs commands with bash: `-c CMD` as given, argv words shell-quoted and joined.
pub fn shell_argv(words: &[OsString]) -> Result<(CString, Vec<CString>), LaunchError> {
    let shell = find_in_path("bash").or_else(|| find_in_path("sh")).ok_or(LaunchError::NoShell)?;
    let cstr = |b: Vec<u8>| {
        CString::new(b).map_err(|_| LaunchError::Io(std::io::Error::other("argument contains a NUL byte")))
    };
    let program = cstr(shell.into_os_string().into_vec())?;
    let argv = words.iter().map(|w| cstr(w.as_bytes().to_vec())).collect::<Result<Vec<_>, _>>()?;
    let mut full = vec![cstr(b"bash".to_vec())?, cstr(b"-c".to_vec())?];
    full.extend(argv);
    Ok((program, full))
}

pub(crate) fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| {
        use std::os::unix::fs::PermissionsExt;
        p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// srt's environment under the settings' `environment` policy, with the sandbox marker,
/// the private TMPDIR and the proxy variables on top (they replace any inherited ones).
/// What the policy left out is named under `-d`; a command that reads a dropped name
/// simply finds it unset.
pub(crate) fn environment(
    settings: &Settings,
    tmpdir: &Path,
    proxy: &[(String, String)],
    preload: Option<&Path>,
) -> Vec<CString> {
    let mut own = proxy.to_vec();
    own.push(("SANDBOX_RUNTIME".into(), "1".into()));
    own.push(("TMPDIR".into(), tmpdir.to_string_lossy().into_owned()));
    let built = crate::launch::env_policy::build(&settings.environment(), std::env::vars_os().collect(), &own);
    if !built.report.is_empty() {
        tracing::debug!("environment: {}", crate::launch::env_policy::describe(&built.report));
    }
    let mut envp = built.envp;
    if let Some(ours) = preload {
        add_preload(&mut envp, ours);
    }
    envp
}

/// Puts srt's library last in `LD_PRELOAD`, after whatever the policy let through.
fn add_preload(envp: &mut Vec<CString>, ours: &Path) {
    const NAME: &[u8] = b"LD_PRELOAD=";
    let at = envp.iter().position(|e| e.as_bytes().starts_with(NAME));
    let inherited = at.map(|i| &envp[i].as_bytes()[NAME.len()..]);
    let Some(value) = crate::fs::preload::ld_preload(ours, inherited) else {
        tracing::debug!("the create preload's path {} cannot be named in LD_PRELOAD; not used", ours.display());
        return;
    };
    let mut entry = NAME.to_vec();
    entry.extend_from_slice(&value);
    // no NUL: built from a CString's bytes and a path checked by ld_preload
    let Ok(entry) = CString::new(entry) else { return };
    match at {
        Some(i) => envp[i] = entry,
        None => envp.push(entry),
    }
    allow_asan_after(envp);
}

/// AddressSanitizer's runtime aborts a program when a preloaded library comes before it
/// (srt's does); its option `verify_asan_link_order=0` lets it run (srt's library then
/// answers the program's `open` calls before ASan's interceptors: they only go unchecked).
fn allow_asan_after(envp: &mut Vec<CString>) {
    const NAME: &[u8] = b"ASAN_OPTIONS=";
    const OPTION: &[u8] = b"verify_asan_link_order=0";
    let at = envp.iter().position(|e| e.as_bytes().starts_with(NAME));
    let mut entry = at.map(|i| envp[i].as_bytes().to_vec()).unwrap_or_else(|| NAME.to_vec());
    if entry.windows(b"verify_asan_link_order".len()).any(|w| w == b"verify_asan_link_order") {
        return; // the user's choice stands
    }
    if entry.len() > NAME.len() {
        entry.push(b':');
    }
    entry.extend_from_slice(OPTION);
    // no NUL: a CString's bytes and a constant
    let Ok(entry) = CString::new(entry) else { return };
    match at {
        Some(i) => envp[i] = entry,
        None => envp.push(entry),
    }
}

/// Shell-quotes words for `bash -c` so arguments keep their boundaries.
pub fn quote_words(words: &[OsString]) -> OsString {
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        let b = w.as_bytes();
        if !b.is_empty() && b.iter().all(|c| c.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(c)) {
            out.extend_from_slice(b);
        } else {
            out.push(b'\'');
            for &c in b {
                if c == b'\'' {
                    out.extend_from_slice(b"'\\''");
                } else {
                    out.push(c);
                }
            }
            out.push(b'\'');
        }
    }
    OsString::from_vec(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_keeps_word_boundaries() {
        let w: Vec<OsString> = ["printf", "%s|", "a b", "it's", "$HOME", ""].iter().map(OsString::from).collect();
        assert_eq!(quote_words(&w), OsString::from("printf '%s|' 'a b' 'it'\\''s' '$HOME' ''"));
    }
}

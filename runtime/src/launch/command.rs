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

/// Puts srt's library last in `LD_PRELOAD`, after whatever the policy let through, and
/// `verify_asan_link_order=0` in `ASAN_OPTIONS`: AddressSanitizer's runtime aborts a program
/// when a preloaded library comes before it (srt's library then answers the program's
/// `open` calls before ASan's interceptors: they only go unchecked). An option the user
/// set stands.
fn add_preload(envp: &mut Vec<CString>, ours: &Path) {
    let set = update(envp, "LD_PRELOAD", |inherited| crate::fs::preload::ld_preload(ours, inherited));
    if !set {
        tracing::debug!("the create preload's path {} cannot be named in LD_PRELOAD; not used", ours.display());
        return;
    }
    const OPTION: &[u8] = b"verify_asan_link_order";
    update(envp, "ASAN_OPTIONS", |options| match options {
        Some(o) if o.windows(OPTION.len()).any(|w| w == OPTION) => None,
        Some(o) if !o.is_empty() => Some([o, b":", OPTION, b"=0"].concat()),
        _ => Some([OPTION, b"=0"].concat()),
    });
}

/// Sets `name` in `envp` to what `value` makes of its current value (`None`: unset);
/// `false` when it leaves the variable as it was.
fn update(envp: &mut Vec<CString>, name: &str, value: impl FnOnce(Option<&[u8]>) -> Option<Vec<u8>>) -> bool {
    let prefix = [name.as_bytes(), b"="].concat();
    let at = envp.iter().position(|e| e.as_bytes().starts_with(&prefix));
    let Some(value) = value(at.map(|i| &envp[i].as_bytes()[prefix.len()..])) else { return false };
    // a NUL in the value (none of srt's has one) leaves the variable as it was
    let Ok(entry) = CString::new([prefix, value].concat()) else { return false };
    match at {
        Some(i) => envp[i] = entry,
        None => envp.push(entry),
    }
    true
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

//! Pure relations between absolute, normalised paths, shared by every room.

use std::path::Path;

/// `p` is `base` or beneath it. Both are absolute and normalised (no `.`, no repeated or
/// trailing `/`), so a byte prefix ending at a separator is exactly `Path::starts_with`,
/// without its component-by-component walk (this runs for every rule and mediated call).
pub fn under(p: &Path, base: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let (p, b) = (p.as_os_str().as_bytes(), base.as_os_str().as_bytes());
    p.starts_with(b) && (p.len() == b.len() || b == b"/" || p[b.len()] == b'/')
}

/// The home the password database gives the user srt runs as.
pub fn passwd_home() -> Option<std::path::PathBuf> {
    let user = nix::unistd::User::from_uid(nix::unistd::Uid::current()).ok()??;
    Some(user.dir).filter(|d| d.is_absolute())
}

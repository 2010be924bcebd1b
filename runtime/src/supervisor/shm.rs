//! `/dev/shm` for the command ([`crate::fs::shm`]). Namespace mode mounts a private tmpfs
//! there, which the kernel judges alone: calls naming it are continued. Landlock mode shares
//! the host's: the supervisor makes the command's entries itself, remembers them (device
//! and inode), opens, links, renames and removes only those, and writes each to the run's
//! journal before it gets a name, so that the check after the run removes what is left.
//!
//! A new file is made unnamed (`O_TMPFILE`), journaled with its inode, then linked in with
//! no replacing: should srt die in between, no file is left behind, and the name the
//! journal holds is removed only while it still holds that inode.

use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::ffi::OsStrExt;

use super::names::Step;
use super::resolve::Target;
use super::state::SharedMemory;
use super::sys;
use super::{Call, Outcome};
use crate::check::journal::Entry;
use crate::fs::shm::{self, Ask, Found, Verdict};

impl Call<'_> {
    /// Namespace mode: a name in the private `/dev/shm` is the kernel's to judge.
    pub(super) fn private_shm(&self, t: &Target) -> bool {
        matches!(self.sup.shm, SharedMemory::Private) && shm::is_entry(&t.path)
    }

    /// Landlock mode: `t` names an entry of the host's `/dev/shm`.
    pub(super) fn in_host_shm(&self, t: &Target) -> bool {
        let SharedMemory::Host { dir, .. } = &self.sup.shm else { return false };
        shm::is_entry(&t.path) && sys::fstat(t.parent.as_fd()).is_ok_and(|st| (st.st_dev, st.st_ino) == *dir)
    }

    fn shm_found(&self, t: &Target) -> Step<(Found, Option<libc::stat>)> {
        let SharedMemory::Host { own, .. } = &self.sup.shm else { return Err(Outcome::Continue) };
        match sys::lstat_at(t.parent.as_fd(), &t.name) {
            Ok(st) => {
                let mine = sys::file_type(&st) == libc::S_IFREG
                    && own.lock().is_ok_and(|o| o.contains(&(st.st_dev, st.st_ino)));
                Ok((if mine { Found::Own } else { Found::Other }, Some(st)))
            }
            Err(libc::ENOENT) => Ok((Found::Missing, None)),
            Err(e) => Err(Outcome::Fail(e)),
        }
    }

    fn shm_own(&self, st: &libc::stat) {
        if let SharedMemory::Host { own, .. } = &self.sup.shm {
            if let Ok(mut o) = own.lock() {
                o.insert((st.st_dev, st.st_ino));
            }
        }
    }

    /// Journals that the name `t` is about to hold the run's file `st`.
    fn shm_journal(&self, t: &Target, st: &libc::stat) -> Step<()> {
        self.journal(Entry::Shm { path: t.path.clone(), dev: st.st_dev, ino: st.st_ino })
    }

    pub(super) fn open_shm(&self, t: &Target, flags: i32, mode: u32) -> Step<Outcome> {
        let create = flags & libc::O_CREAT != 0;
        let excl = create && flags & libc::O_EXCL != 0;
        let (entry, _) = self.shm_found(t)?;
        match shm::decide(Ask::Open { create, excl, entry }) {
            Verdict::OpenOwn => self.shm_reopen(t, flags),
            Verdict::Create => self.shm_create(t, flags, mode),
            Verdict::Refuse(e) => Ok(self.shm_refuse(t, e)),
            Verdict::Perform => Err(Outcome::Fail(libc::EINVAL)),
        }
    }

    fn shm_refuse(&self, t: &Target, e: i32) -> Outcome {
        self.note(&t.path, "/dev/shm: only what this run made");
        Outcome::Fail(e)
    }

    /// Opens the run's own entry with the command's flags (no following a symlink put there
    /// meanwhile), checked to still be a file of the run's.
    fn shm_reopen(&self, t: &Target, flags: i32) -> Step<Outcome> {
        let how = (flags & !(libc::O_CREAT | libc::O_EXCL | libc::O_TRUNC)) | libc::O_NOFOLLOW;
        let file = sys::open_entry(t.parent.as_fd(), &t.name, how, 0).map_err(Outcome::Fail)?;
        let st = sys::fstat(file.as_fd()).map_err(Outcome::Fail)?;
        let SharedMemory::Host { own, .. } = &self.sup.shm else { return Err(Outcome::Continue) };
        if !own.lock().is_ok_and(|o| o.contains(&(st.st_dev, st.st_ino))) {
            return Ok(self.shm_refuse(t, libc::EACCES));
        }
        if flags & libc::O_TRUNC != 0 {
            // SAFETY: plain syscall on a descriptor we own.
            if unsafe { libc::ftruncate(file.as_raw_fd(), 0) } < 0 {
                return Err(Outcome::Fail(sys::last_errno()));
            }
        }
        self.note(&t.path, "/dev/shm: the run's own");
        Ok(Outcome::Fd { fd: file, cloexec: flags & libc::O_CLOEXEC != 0 })
    }

    /// Makes the file unnamed, journals it, and links it in without replacing anything.
    fn shm_create(&self, t: &Target, flags: i32, mode: u32) -> Step<Outcome> {
        // no setuid, setgid or sticky bit on a file in a directory other programs share
        let mode = self.mode(mode) & 0o777;
        let made = sys::openat2(Some(t.parent.as_fd()), c".", libc::O_TMPFILE | libc::O_RDWR, u64::from(mode), 0)
            .map_err(Outcome::Fail)?;
        let st = sys::fstat(made.as_fd()).map_err(Outcome::Fail)?;
        self.shm_journal(t, &st)?;
        self.shm_own(&st);
        let from = sys::proc_self(made.as_fd());
        // SAFETY: linkat with live descriptors and NUL-terminated paths; following the
        // magic link of our own descriptor is how an unnamed file gets a name unprivileged.
        let r = unsafe {
            libc::linkat(libc::AT_FDCWD, from.as_ptr(), t.parent.as_raw_fd(), t.name.as_ptr(), libc::AT_SYMLINK_FOLLOW)
        };
        match sys::result(r.into()) {
            Ok(_) => {}
            // someone made the name meanwhile: as if it had been there
            Err(libc::EEXIST) if flags & libc::O_EXCL == 0 => return self.open_shm(t, flags & !libc::O_CREAT, mode),
            Err(e) => return Err(Outcome::Fail(e)),
        }
        // the command's own access mode, on the very file made
        let how = (flags & !(libc::O_CREAT | libc::O_EXCL | libc::O_TRUNC | libc::O_NOFOLLOW)) | libc::O_CLOEXEC;
        let file = sys::openat2(None, &from, how, 0, 0).map_err(Outcome::Fail)?;
        self.note(&t.path, "/dev/shm: made for the run");
        Ok(Outcome::Fd { fd: file, cloexec: flags & libc::O_CLOEXEC != 0 })
    }

    /// Removes the run's own entry.
    pub(super) fn unlink_shm(&self, t: &Target) -> Step<Outcome> {
        let (entry, found) = self.shm_found(t)?;
        match shm::decide(Ask::Unlink { entry }) {
            Verdict::Perform => {}
            Verdict::Refuse(e) => return Ok(self.shm_refuse(t, e)),
            _ => return Err(Outcome::Fail(libc::EINVAL)),
        }
        self.remove_own(t, found.as_ref())?;
        self.note(&t.path, "/dev/shm: removed the run's own");
        Ok(Outcome::Value(0))
    }

    /// Removes the run's own file at `t`, seen as `found`. The name was checked, then is
    /// acted on: another program could put its own file there in between (unlink and create
    /// its fixed name). So the entry is first renamed to a name of srt's (never replacing),
    /// checked there, and only then removed; anything else is put back and refused.
    fn remove_own(&self, t: &Target, found: Option<&libc::stat>) -> Step<()> {
        let aside = aside_name();
        let dir = t.parent.as_raw_fd();
        // journaled under srt's name too: should srt die before the unlink, the check removes it
        if let Some(st) = found {
            let path = t.path.with_file_name(std::ffi::OsStr::from_bytes(aside.to_bytes()));
            self.journal(Entry::Shm { path, dev: st.st_dev, ino: st.st_ino })?;
        }
        rename_noreplace(dir, &t.name, dir, &aside).map_err(Outcome::Fail)?;
        let st = sys::lstat_at(t.parent.as_fd(), &aside).map_err(Outcome::Fail)?;
        let SharedMemory::Host { own, .. } = &self.sup.shm else { return Err(Outcome::Continue) };
        let mine =
            sys::file_type(&st) == libc::S_IFREG && own.lock().is_ok_and(|o| o.contains(&(st.st_dev, st.st_ino)));
        if !mine {
            // not what was checked: back where it was (should the name be taken again by
            // then, it stays under srt's name, which no program looks for)
            let _ = rename_noreplace(dir, &aside, dir, &t.name);
            return Err(self.shm_refuse(t, libc::EACCES));
        }
        // SAFETY: plain syscall with a live fd and a NUL-terminated name.
        let r = unsafe { libc::unlinkat(dir, aside.as_ptr(), 0) };
        sys::result(r.into()).map_err(Outcome::Fail)?;
        if st.st_nlink <= 1 {
            if let Ok(mut o) = own.lock() {
                o.remove(&(st.st_dev, st.st_ino));
            }
        }
        Ok(())
    }

    /// A link or rename with a name in the host's `/dev/shm`: judged here when both are
    /// there; with only one there the kernel refuses it (Landlock, or `EXDEV`).
    pub(super) fn across_host_shm(&self, src: &Target, dst: &Target, rename: Option<u32>) -> Option<Step<Outcome>> {
        match (self.in_host_shm(src), self.in_host_shm(dst)) {
            (true, true) => Some(self.rename_shm(src, dst, rename)),
            (false, false) => None,
            _ => Some(Ok(Outcome::Continue)),
        }
    }

    /// `link` (`rename: None`) or `rename` with its flags, both names in `/dev/shm`.
    pub(super) fn rename_shm(&self, src: &Target, dst: &Target, rename: Option<u32>) -> Step<Outcome> {
        let (from, s) = self.shm_found(src)?;
        let (to, d) = self.shm_found(dst)?;
        let flags = rename.unwrap_or(0);
        let ask = Ask::Name {
            from,
            to,
            replace: rename.is_some() && flags & libc::RENAME_NOREPLACE == 0,
            exchange: flags & libc::RENAME_EXCHANGE != 0,
        };
        match shm::decide(ask) {
            Verdict::Perform => {}
            Verdict::Refuse(e) => return Ok(self.shm_refuse(dst, e)),
            _ => return Err(Outcome::Fail(libc::EINVAL)),
        }
        // each name gets its new file in the journal first
        if let Some(s) = &s {
            self.shm_journal(dst, s)?;
        }
        if let (Some(d), true) = (&d, ask_exchange(flags)) {
            self.shm_journal(src, d)?;
        }
        // a rename over the run's own entry: that entry goes first, the verified way, and the
        // rename then never replaces (what is there by then is another program's)
        let mut to = to;
        if rename.is_some() && to == Found::Own && !ask_exchange(flags) {
            self.remove_own(dst, d.as_ref())?;
            to = Found::Missing;
        }
        let (a, b) = (src.parent.as_raw_fd(), dst.parent.as_raw_fd());
        // what was missing at the check must still be missing: never replace a file another
        // program made there in between (a link never replaces)
        let f = match (to, ask_exchange(flags)) {
            (Found::Missing, false) => flags | libc::RENAME_NOREPLACE,
            _ => flags,
        };
        let r = match rename {
            // SAFETY: plain syscalls with live fds and NUL-terminated names.
            None => unsafe { libc::linkat(a, src.name.as_ptr(), b, dst.name.as_ptr(), 0) }.into(),
            Some(_) => unsafe {
                libc::syscall(libc::SYS_renameat2, a, src.name.as_ptr(), b, dst.name.as_ptr(), f as libc::c_uint)
            },
        };
        sys::result(r).map_err(Outcome::Fail)?;
        self.note(&dst.path, "/dev/shm: the run's own");
        Ok(Outcome::Value(0))
    }
}

fn ask_exchange(flags: u32) -> bool {
    flags & libc::RENAME_EXCHANGE != 0
}

/// A name of srt's own in `/dev/shm` for an entry on its way out.
fn aside_name() -> std::ffi::CString {
    let mut r = [0u8; 8];
    // SAFETY: getrandom writes at most the buffer's length into it.
    unsafe { libc::getrandom(r.as_mut_ptr().cast(), r.len(), 0) };
    // a decimal number and a hex one: never a NUL
    std::ffi::CString::new(format!(".srt-{}-{:016x}", std::process::id(), u64::from_ne_bytes(r))).unwrap_or_default()
}

fn rename_noreplace(a: i32, from: &std::ffi::CStr, b: i32, to: &std::ffi::CStr) -> Result<i64, i32> {
    // SAFETY: plain syscall with live fds and NUL-terminated names.
    let r = unsafe { libc::syscall(libc::SYS_renameat2, a, from.as_ptr(), b, to.as_ptr(), libc::RENAME_NOREPLACE) };
    sys::result(r)
}

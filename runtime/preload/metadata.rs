//! Owner and times of directories this program made, set through a descriptor.
//!
//! In landlock mode the filter sends every metadata call that names a path to srt's
//! supervisor (Landlock does not judge metadata), about 50 µs a round trip, while the
//! descriptor forms `fchown` (to the caller's own uid and gid) and `futimens` go to the
//! kernel alone. `tar x` makes each directory, fills it, then sets its owner and times by
//! path: two round trips per directory.
//!
//! So this library remembers the directories it saw this program make (`mkdir` and
//! `mkdirat` that returned 0: each made by the supervisor, only where the policy lets the
//! command write), and turns a `chown`, `lchown`, `fchownat` or `utimensat` by path on one
//! of them into the call on a descriptor. That changes nothing a program can do: the
//! descriptor forms are the command's to use anyway, and the filter judges them as
//! always. It only changes which calls of a well-behaved program succeed where none did
//! before: none, as the supervisor allows these calls on a directory the run made.
//! Anything else (no such directory, a symlink, a directory it cannot open, one it did
//! not make, an `AT_EMPTY_PATH` call) is passed on unchanged.
//!
//! The table is small and never blocks: a lookup or insert that finds it in use (another
//! thread, a signal handler) is skipped, which only costs the round trip again.

use core::ffi::{c_char, c_int, c_long, c_uint};
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use super::{EACCES, EROFS, NATIVE, __errno_location, syscall};

#[cfg(target_arch = "x86_64")]
mod nr {
    use core::ffi::c_long;
    pub const OPENAT: c_long = 257;
    pub const MKDIRAT: c_long = 258;
    pub const FCHOWNAT: c_long = 260;
    pub const FCHOWN: c_long = 93;
    pub const UTIMENSAT: c_long = 280;
    pub const FSTAT: c_long = 5;
    pub const NEWFSTATAT: c_long = 262;
    pub const CLOSE: c_long = 3;
}
#[cfg(target_arch = "aarch64")]
mod nr {
    use core::ffi::c_long;
    pub const OPENAT: c_long = 56;
    pub const MKDIRAT: c_long = 34;
    pub const FCHOWNAT: c_long = 54;
    pub const FCHOWN: c_long = 55;
    pub const UTIMENSAT: c_long = 88;
    pub const FSTAT: c_long = 80;
    pub const NEWFSTATAT: c_long = 79;
    pub const CLOSE: c_long = 57;
}

const O_RDONLY: c_int = 0;
const O_DIRECTORY: c_int = 0o200000;
const O_NOFOLLOW: c_int = 0o400000;
const O_CLOEXEC: c_int = 0o2000000;
pub(crate) const AT_SYMLINK_NOFOLLOW: c_int = 0x100;
const AT_EMPTY_PATH: c_int = 0x1000;
const S_IFMT: u32 = 0o170000;
const S_IFDIR: u32 = 0o040000;

/// Slots of the table (a power of two); a `tar x` sets its directories' metadata when it
/// leaves them, so this covers trees far wider than a program keeps pending.
const SLOTS: usize = 8192;
/// Slots tried from a key's home slot before the key is dropped (lookup) or the home slot
/// is overwritten (insert).
const PROBES: usize = 16;

/// `(dev, ino)` pairs, `(0, 0)` for an empty slot (no directory has inode 0).
static DEV: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];
static INO: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];
static BUSY: AtomicBool = AtomicBool::new(false);
/// Entries ever added: while 0, the wrappers pass every call on without a look.
static ADDED: AtomicUsize = AtomicUsize::new(0);

fn home(dev: u64, ino: u64) -> usize {
    let x = (ino ^ dev.rotate_left(32)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (x >> 51) as usize & (SLOTS - 1)
}

/// Runs `f` holding the table, or not at all when something else holds it.
fn with_table<T>(f: impl FnOnce() -> T) -> Option<T> {
    if BUSY.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
        return None;
    }
    let r = f();
    BUSY.store(false, Ordering::Release);
    Some(r)
}

fn remember(dev: u64, ino: u64) {
    if ino == 0 {
        return;
    }
    with_table(|| {
        let h = home(dev, ino);
        let mut at = h;
        for i in 0..PROBES {
            let s = (h + i) & (SLOTS - 1);
            let (d, n) = (DEV[s].load(Ordering::Relaxed), INO[s].load(Ordering::Relaxed));
            if (d, n) == (dev, ino) {
                return;
            }
            if n == 0 {
                at = s;
                break;
            }
        }
        DEV[at].store(dev, Ordering::Relaxed);
        INO[at].store(ino, Ordering::Relaxed);
        ADDED.fetch_add(1, Ordering::Relaxed);
    });
}

fn made_here(dev: u64, ino: u64) -> bool {
    with_table(|| {
        let h = home(dev, ino);
        (0..PROBES).any(|i| {
            let s = (h + i) & (SLOTS - 1);
            DEV[s].load(Ordering::Relaxed) == dev && INO[s].load(Ordering::Relaxed) == ino
        })
    })
    .unwrap_or(false)
}

/// `struct stat` on x86_64 and aarch64 starts with `st_dev` and `st_ino` (both 64-bit),
/// and `st_mode` is the 32-bit field at 24 (x86_64) or 16 (aarch64); at most 144 bytes.
struct Stat([u64; 32]);

impl Stat {
    fn id(&self) -> (u64, u64) {
        (self.0[0], self.0[1])
    }
    fn is_dir(&self) -> bool {
        #[cfg(target_arch = "x86_64")]
        let mode = (self.0[3] & 0xffff_ffff) as u32;
        #[cfg(target_arch = "aarch64")]
        let mode = (self.0[2] & 0xffff_ffff) as u32;
        mode & S_IFMT == S_IFDIR
    }
}

/// Keeps the caller's errno across calls whose failure is not the caller's.
struct SavedErrno(c_int);

impl SavedErrno {
    fn new() -> SavedErrno {
        // SAFETY: the calling thread's errno, which the C library keeps valid.
        SavedErrno(unsafe { *__errno_location() })
    }
    fn restore(&self) {
        // SAFETY: as above.
        unsafe { *__errno_location() = self.0 };
    }
}

/// Whether the last component of `path` starts with a dot (at most `PATH_MAX` bytes
/// are looked at).
unsafe fn dot_name(path: *const c_char) -> bool {
    if path.is_null() {
        return false;
    }
    let (mut first, mut prev) = (0u8, b'/');
    for i in 0..4096 {
        // SAFETY: the caller's NUL-terminated path, read up to its NUL.
        let c = unsafe { *path.add(i) } as u8;
        if c == 0 {
            break;
        }
        if c != b'/' && prev == b'/' {
            first = c;
        }
        prev = c;
    }
    first == b'.'
}

/// `mkdirat`, with the native bit first (below the pool's directories Landlock lets the
/// kernel make it), then without it; a directory made is remembered. A name with a dot
/// first (`.claude`, `.vscode`, `.git`: names the supervisor judges) is asked the
/// supervised way only, so that a program hears at once what srt refuses to make; one a
/// command makes with the bit itself is moved aside by the check after the run.
pub(crate) unsafe fn mkdir_at(dirfd: c_int, path: *const c_char, mode: c_uint) -> c_int {
    let call = |mode: c_long| {
        // SAFETY: the raw syscall with the caller's own arguments, as libc would make it.
        unsafe { syscall(nr::MKDIRAT, dirfd as c_long, path, mode) as c_int }
    };
    let saved = SavedErrno::new();
    // SAFETY: the caller's path.
    let dot = unsafe { dot_name(path) };
    let mut r = call(if dot { mode as c_long } else { mode as c_long | NATIVE as c_long });
    if r < 0 && !dot {
        // SAFETY: the calling thread's errno, which the C library keeps valid.
        let refused = unsafe { *__errno_location() };
        if refused == EACCES || refused == EROFS {
            saved.restore();
            r = call(mode as c_long);
        }
    }
    if r == 0 {
        let saved = SavedErrno::new();
        let mut st = Stat([0; 32]);
        // SAFETY: the caller's path, a buffer larger than struct stat.
        let s = unsafe { syscall(nr::NEWFSTATAT, dirfd as c_long, path, st.0.as_mut_ptr(), AT_SYMLINK_NOFOLLOW) };
        if s == 0 && st.is_dir() {
            let (dev, ino) = st.id();
            remember(dev, ino);
        }
        saved.restore();
    }
    r
}

/// A descriptor for `path` when it names a directory this program made, else `None` (and
/// errno as it was).
unsafe fn own_dir(dirfd: c_int, path: *const c_char, flags: c_int) -> Option<c_int> {
    if ADDED.load(Ordering::Relaxed) == 0 || path.is_null() || flags & AT_EMPTY_PATH != 0 {
        return None;
    }
    let saved = SavedErrno::new();
    let nofollow = if flags & AT_SYMLINK_NOFOLLOW != 0 { O_NOFOLLOW } else { 0 };
    let how = O_RDONLY | O_DIRECTORY | O_CLOEXEC | nofollow;
    // SAFETY: the raw openat with the caller's path (an empty one fails: ENOENT).
    let fd = unsafe { syscall(nr::OPENAT, dirfd as c_long, path, how as c_long, 0 as c_long) } as c_int;
    if fd < 0 {
        saved.restore();
        return None;
    }
    let mut st = Stat([0; 32]);
    // SAFETY: a descriptor we opened, a buffer larger than struct stat.
    let s = unsafe { syscall(nr::FSTAT, fd as c_long, st.0.as_mut_ptr()) };
    let (dev, ino) = st.id();
    if s == 0 && st.is_dir() && made_here(dev, ino) {
        saved.restore();
        return Some(fd);
    }
    close(fd);
    saved.restore();
    None
}

fn close(fd: c_int) {
    let saved = SavedErrno::new();
    // SAFETY: a descriptor this library opened and nothing else holds.
    unsafe { syscall(nr::CLOSE, fd as c_long) };
    saved.restore();
}

/// `fchownat`, through a descriptor where [`own_dir`] finds one.
pub(crate) unsafe fn chown_at(dirfd: c_int, path: *const c_char, uid: c_uint, gid: c_uint, flags: c_int) -> c_int {
    // SAFETY: the caller's arguments.
    if let Some(fd) = unsafe { own_dir(dirfd, path, flags) } {
        // SAFETY: the raw syscall on our descriptor with the caller's ids.
        let r = unsafe { syscall(nr::FCHOWN, fd as c_long, uid as c_long, gid as c_long) } as c_int;
        close(fd);
        return r;
    }
    // SAFETY: the raw syscall with the caller's own arguments.
    unsafe { syscall(nr::FCHOWNAT, dirfd as c_long, path, uid as c_long, gid as c_long, flags as c_long) as c_int }
}

/// `utimensat`, through a descriptor (`futimens`) where [`own_dir`] finds one.
pub(crate) unsafe fn utimens_at(dirfd: c_int, path: *const c_char, times: *const u8, flags: c_int) -> c_int {
    // SAFETY: the caller's arguments.
    if let Some(fd) = unsafe { own_dir(dirfd, path, flags) } {
        // SAFETY: the raw syscall on our descriptor with the caller's times (NULL: now).
        let r = unsafe { syscall(nr::UTIMENSAT, fd as c_long, 0 as c_long, times, 0 as c_long) } as c_int;
        close(fd);
        return r;
    }
    // SAFETY: the raw syscall with the caller's own arguments.
    unsafe { syscall(nr::UTIMENSAT, dirfd as c_long, path, times, flags as c_long) as c_int }
}

//! The trapped thread as the supervisor sees it: its memory, read through `/proc/<pid>/mem`
//! (an ordinary open and pread, where `process_vm_readv` is refused by container runtimes'
//! default seccomp profiles), and its working directory, root and descriptors, opened as
//! `O_PATH` descriptors of our own through `/proc/<pid>/{cwd,root,fd/N}`.
//!
//! Every `/proc/<pid>` lookup names the right process only while the notification is still
//! pending (a pid can be reused once its owner exits), so callers check
//! [`crate::seccomp::notify::id_valid`] after opening and before acting.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use super::sys::{self, Errno};

pub struct Tracee {
    pub pid: u32,
    mem: OnceLock<Result<OwnedFd, Errno>>,
    mem_rw: OnceLock<Result<OwnedFd, Errno>>,
}

/// Where a relative path starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    Cwd,
    Root,
    Fd(i32),
}

const PAGE: u64 = 4096;

impl Tracee {
    pub fn new(pid: u32) -> Tracee {
        Tracee { pid, mem: OnceLock::new(), mem_rw: OnceLock::new() }
    }

    fn mem(&self) -> Result<&OwnedFd, Errno> {
        self.mem
            .get_or_init(|| {
                let path = sys::cstr(format!("/proc/{}/mem", self.pid).as_bytes())?;
                sys::openat2(None, &path, libc::O_RDONLY, 0, 0)
            })
            .as_ref()
            .map_err(|e| *e)
    }

    /// Exactly `len` bytes at `addr`, or EFAULT.
    pub fn read_bytes(&self, addr: u64, len: usize) -> Result<Vec<u8>, Errno> {
        let mut buf = vec![0u8; len];
        let mut done = 0;
        while done < len {
            let n = self.pread(&mut buf[done..], addr.checked_add(done as u64).ok_or(libc::EFAULT)?)?;
            if n == 0 {
                return Err(libc::EFAULT);
            }
            done += n;
        }
        Ok(buf)
    }

    fn pread(&self, buf: &mut [u8], addr: u64) -> Result<usize, Errno> {
        // process_vm_readv needs no descriptor (a third of the cost), but container
        // runtimes' default seccomp profiles refuse it: then /proc/<pid>/mem, for good
        static VM_READV: AtomicBool = AtomicBool::new(true);
        if VM_READV.load(Ordering::Relaxed) {
            let local = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
            let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: buf.len() };
            // SAFETY: the local iovec covers `buf`; the kernel checks the remote one against
            // the target's mappings.
            let n = unsafe { libc::process_vm_readv(self.pid as libc::pid_t, &local, 1, &remote, 1, 0) };
            match n {
                n if n >= 0 => return Ok(n as usize),
                _ if matches!(sys::last_errno(), libc::EPERM | libc::ENOSYS) => {
                    VM_READV.store(false, Ordering::Relaxed)
                }
                _ => return Err(libc::EFAULT),
            }
        }
        let off = i64::try_from(addr).map_err(|_| libc::EFAULT)?;
        let fd = self.mem()?;
        // SAFETY: `buf` is a live, writable buffer of the given length.
        let n = unsafe { libc::pread(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), off) };
        if n < 0 {
            Err(libc::EFAULT)
        } else {
            Ok(n as usize)
        }
    }

    /// Writes `bytes` at `addr` of the tracee (a syscall's out-argument, written while the
    /// thread waits in that syscall), or EFAULT. `process_vm_writev` where allowed, else
    /// `/proc/<pid>/mem`, which the kernel lets srt write as it lets srt read it.
    pub fn write_bytes(&self, addr: u64, bytes: &[u8]) -> Result<(), Errno> {
        static VM_WRITEV: AtomicBool = AtomicBool::new(true);
        if VM_WRITEV.load(Ordering::Relaxed) {
            let local = libc::iovec { iov_base: bytes.as_ptr() as *mut libc::c_void, iov_len: bytes.len() };
            let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: bytes.len() };
            // SAFETY: the local iovec covers `bytes` (only read); the kernel checks the
            // remote one against the target's mappings.
            let n = unsafe { libc::process_vm_writev(self.pid as libc::pid_t, &local, 1, &remote, 1, 0) };
            match n {
                n if n == bytes.len() as isize => return Ok(()),
                n if n >= 0 => return Err(libc::EFAULT),
                _ if matches!(sys::last_errno(), libc::EPERM | libc::ENOSYS) => {
                    VM_WRITEV.store(false, Ordering::Relaxed)
                }
                _ => return Err(libc::EFAULT),
            }
        }
        // /proc/<pid>/mem writes even where the program could not (read-only and PROT_NONE
        // pages, code): only into what its own mappings let it write, as the kernel's copy
        // to user memory would
        if !self.writable(addr, bytes.len()) {
            return Err(libc::EFAULT);
        }
        let off = i64::try_from(addr).map_err(|_| libc::EFAULT)?;
        let fd = self
            .mem_rw
            .get_or_init(|| {
                let path = sys::cstr(format!("/proc/{}/mem", self.pid).as_bytes())?;
                sys::openat2(None, &path, libc::O_RDWR, 0, 0)
            })
            .as_ref()
            .map_err(|e| *e)?;
        // SAFETY: `bytes` is a live buffer of the given length.
        let n = unsafe { libc::pwrite(fd.as_raw_fd(), bytes.as_ptr().cast(), bytes.len(), off) };
        if n == bytes.len() as isize {
            Ok(())
        } else {
            Err(libc::EFAULT)
        }
    }

    /// Whether `[addr, addr + len)` lies in mappings of the tracee that it may write
    /// (`/proc/<pid>/maps`, contiguous `w` entries).
    fn writable(&self, addr: u64, len: usize) -> bool {
        let Some(end) = addr.checked_add(len as u64) else { return false };
        let Ok(maps) = std::fs::read_to_string(format!("/proc/{}/maps", self.pid)) else { return false };
        writable_in(&maps, addr, end)
    }

    /// A NUL-terminated string at `addr` (at most PATH_MAX), read page by page so that a
    /// string ending just before an unmapped page is still read.
    pub fn read_path(&self, addr: u64) -> Result<CString, Errno> {
        const MAX: usize = libc::PATH_MAX as usize;
        if addr == 0 {
            return Err(libc::EFAULT);
        }
        let mut out = Vec::with_capacity(128);
        let mut at = addr;
        while out.len() < MAX {
            let in_page = (PAGE - at % PAGE) as usize;
            let mut chunk = vec![0u8; in_page.min(MAX - out.len())];
            let n = self.pread(&mut chunk, at)?;
            if n == 0 {
                return Err(libc::EFAULT);
            }
            if let Some(end) = chunk[..n].iter().position(|&b| b == 0) {
                out.extend_from_slice(&chunk[..end]);
                return CString::new(out).map_err(|_| libc::EINVAL);
            }
            out.extend_from_slice(&chunk[..n]);
            at += n as u64;
        }
        Err(libc::ENAMETOOLONG)
    }

    /// An `O_PATH` descriptor of the directory a path of the tracee starts from.
    pub fn open_base(&self, base: Base) -> Result<OwnedFd, Errno> {
        let link = match base {
            Base::Cwd => format!("/proc/{}/cwd", self.pid),
            Base::Root => format!("/proc/{}/root", self.pid),
            Base::Fd(fd) => format!("/proc/{}/fd/{fd}", self.pid),
        };
        let link = sys::cstr(link.as_bytes())?;
        // following the magic link is the point here: it lands on the tracee's object
        sys::openat2(None, &link, libc::O_PATH | libc::O_DIRECTORY, 0, 0).map_err(|e| match e {
            libc::ENOENT if matches!(base, Base::Fd(_)) => libc::EBADF,
            e => e,
        })
    }

    /// An `O_PATH` descriptor of whatever the tracee's descriptor `fd` refers to: a file,
    /// a directory, a pipe, a socket. It keeps referring to that object whatever the tracee
    /// does with its descriptor table afterwards.
    pub fn open_fd_object(&self, fd: i32) -> Result<OwnedFd, Errno> {
        if fd < 0 {
            return Err(libc::EBADF);
        }
        let link = sys::cstr(format!("/proc/{}/fd/{fd}", self.pid).as_bytes())?;
        sys::openat2(None, &link, libc::O_PATH, 0, 0).map_err(|e| if e == libc::ENOENT { libc::EBADF } else { e })
    }

    /// The tracee's umask (from /proc, which renders the whole status file: callers cache).
    pub fn read_umask(&self) -> u32 {
        std::fs::read_to_string(format!("/proc/{}/status", self.pid))
            .ok()
            .and_then(|s| {
                s.lines().find_map(|l| l.strip_prefix("Umask:")).and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
            })
            .unwrap_or(0o022)
    }
}

/// Whether `[addr, end)` is covered by contiguous writable mappings of `maps` (the text of
/// `/proc/<pid>/maps`, sorted by address).
fn writable_in(maps: &str, addr: u64, end: u64) -> bool {
    let mut at = addr;
    for line in maps.lines() {
        let mut f = line.split_whitespace();
        let (Some(range), Some(perms)) = (f.next(), f.next()) else { continue };
        let Some((lo, hi)) = range.split_once('-') else { continue };
        let (Ok(lo), Ok(hi)) = (u64::from_str_radix(lo, 16), u64::from_str_radix(hi, 16)) else { continue };
        if hi <= at {
            continue;
        }
        if lo > at || !perms.starts_with("rw") {
            return false;
        }
        at = hi;
        if at >= end {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_only_into_writable_mappings() {
        let maps =
            "1000-3000 rw-p 0 00:00 0\n3000-4000 rw-p 0 00:00 0\n5000-6000 r--p 0 00:00 0\n6000-7000 ---p 0 00:00 0";
        assert!(writable_in(maps, 0x1000, 0x4000), "across two writable mappings");
        assert!(writable_in(maps, 0x2ff0, 0x3010));
        assert!(!writable_in(maps, 0x3ff0, 0x4010), "into a hole");
        assert!(!writable_in(maps, 0x5000, 0x5001), "read-only");
        assert!(!writable_in(maps, 0x6000, 0x6001), "PROT_NONE");
        assert!(!writable_in(maps, 0x800, 0x1001), "before the first");
        assert!(!writable_in(maps, 0x8000, 0x8001), "after the last");
    }

    #[test]
    fn reads_strings_across_page_boundaries_from_our_own_memory() {
        let me = Tracee::new(std::process::id());
        // a string straddling a page boundary inside one allocation
        let mut buf = vec![b'x'; 3 * PAGE as usize];
        let start = buf.as_ptr() as u64;
        let cross = (PAGE - start % PAGE) as usize + PAGE as usize - 3;
        buf[cross + 6] = 0;
        let got = me.read_path(start + cross as u64).unwrap();
        assert_eq!(got.as_bytes(), b"xxxxxx");
        assert_eq!(me.read_bytes(start, 4).unwrap(), b"xxxx");
        assert_eq!(me.read_path(0), Err(libc::EFAULT));
        assert_eq!(me.read_path(u64::MAX - 3), Err(libc::EFAULT));
        assert!(me.read_umask() <= 0o777);
    }

    #[test]
    fn writes_into_our_own_memory() {
        let me = Tracee::new(std::process::id());
        let mut buf = vec![0u8; 16];
        let at = buf.as_mut_ptr() as u64;
        me.write_bytes(at + 3, b"abc").unwrap();
        // the write went through the kernel, not through `buf`: read it back the same way
        assert_eq!(me.read_bytes(at, 7).unwrap(), b"\0\0\0abc\0");
        assert_eq!(me.write_bytes(8, b"x"), Err(libc::EFAULT));
        drop(buf);
    }
}

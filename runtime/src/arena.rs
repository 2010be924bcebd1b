//! srt's allocator: a bump arena for the launch, the system allocator after it.
//!
//! A launch allocates a few thousand small, short-lived objects (settings, paths, the
//! Landlock plan, the filter) and then exits. glibc's and, more so, musl's allocators spend
//! measurable time per call on bookkeeping that a process living 5 ms does not need. The
//! arena hands out memory by moving one pointer and never reuses it; `free` of arena memory
//! does nothing. When the arena is used up (a command that runs long enough for the
//! supervisor and the proxy to allocate that much), every later allocation goes to the
//! system allocator, so memory stays bounded: the arena's size, plus what the system
//! allocator holds.
//!
//! The arena is mapped at the first allocation: pages the launch never reaches cost
//! nothing, and fresh arena memory is already zero (`alloc_zeroed` does not clear it
//! again). After `fork` each process bumps its own copy. Not in `.bss`: an `RLIMIT_DATA`
//! below its size would keep srt from starting at all, before it can raise its own limits
//! ([`crate::limits`]); where the mapping is refused, the system allocator does everything.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicUsize, Ordering};

/// More than a launch takes: one measured 0.23 MiB in an empty directory and 1.3-1.7 MiB in
/// this repository (with `/tmp` writable too); the auditor's check after the run gets the
/// rest (its own copy after the fork). It is also what a long run's srt may hold beyond
/// what the system allocator would (about 1,500 supervised `mkdir`s use it up).
pub const SIZE: usize = 4 << 20;

/// [`Arena::base`] when the mapping could not be made.
const REFUSED: usize = 1;

/// While a `CLONE_VM` child runs in this process's memory (`process::child::spawn`, from
/// its `clone` to its `exec`): this process's pid, else 0. The child shares the arena and
/// the system allocator's heap with a parent thread suspended wherever it was, so the
/// child must not allocate or free; an allocation or free from any other pid is the
/// child's.
static SHARED_BY: AtomicI32 = AtomicI32::new(0);
/// What the child calls instead of allocating or freeing (a `fn() -> !`).
static IN_CHILD: AtomicPtr<()> = AtomicPtr::new(std::ptr::null_mut());

/// Until [`allow_in_children`], an allocation or free by another process in this memory (a
/// `CLONE_VM` child) calls `fail`, which must neither return, allocate nor free. Checked by
/// every [`Arena`] (the global allocator of `srt`, and of this crate's unit tests).
pub fn forbid_in_children(fail: fn() -> !) {
    IN_CHILD.store(fail as *mut (), Ordering::Release);
    // SAFETY: getpid cannot fail.
    SHARED_BY.store(unsafe { libc::getpid() }, Ordering::Release);
}

/// Ends [`forbid_in_children`]: the child has exec'd or exited.
pub fn allow_in_children() {
    SHARED_BY.store(0, Ordering::Release);
}

/// One load on the allocator's way; the rest only while a `CLONE_VM` child runs.
#[inline]
fn check_shared() {
    if SHARED_BY.load(Ordering::Relaxed) != 0 {
        check_process();
    }
}

#[cold]
fn check_process() {
    let owner = SHARED_BY.load(Ordering::Acquire);
    // SAFETY: getpid cannot fail.
    if owner == 0 || owner == unsafe { libc::getpid() } {
        return; // srt's own threads
    }
    let fail = IN_CHILD.load(Ordering::Acquire);
    if !fail.is_null() {
        // SAFETY: only forbid_in_children stores here, a `fn() -> !` cast to a pointer.
        let fail = unsafe { std::mem::transmute::<*mut (), fn() -> !>(fail) };
        fail();
    }
}

/// The global allocator of the `srt` binary, with an arena of `N` bytes.
pub struct Arena<const N: usize = SIZE> {
    /// The mapping's address: 0 before the first allocation, [`REFUSED`] when none.
    base: AtomicUsize,
    /// Offset of the first byte not yet handed out.
    next: AtomicUsize,
}

impl<const N: usize> Arena<N> {
    pub const fn new() -> Self {
        Arena { base: AtomicUsize::new(0), next: AtomicUsize::new(0) }
    }

    /// The arena's address, mapped on first use; None when it could not be.
    fn base(&self) -> Option<usize> {
        match self.base.load(Ordering::Acquire) {
            0 => self.map(),
            REFUSED => None,
            b => Some(b),
        }
    }

    fn map(&self) -> Option<usize> {
        let (rw, private) = (libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS);
        // SAFETY: a fresh anonymous mapping, which nothing else refers to yet.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), N, rw, private, -1, 0) };
        let mine = if p == libc::MAP_FAILED { REFUSED } else { p as usize };
        match self.base.compare_exchange(0, mine, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => (mine != REFUSED).then_some(mine),
            Err(theirs) => {
                // another thread mapped it first: ours was never handed out
                if mine != REFUSED {
                    // SAFETY: our own mapping of N bytes, unused.
                    unsafe { libc::munmap(p, N) };
                }
                (theirs != REFUSED).then_some(theirs)
            }
        }
    }

    fn owns(&self, p: *mut u8) -> bool {
        let (p, base) = (p as usize, self.base.load(Ordering::Acquire));
        base > REFUSED && p >= base && p < base + N
    }

    /// A fresh, zeroed range for `layout` from the arena, or None when it is used up.
    fn bump(&self, layout: Layout) -> Option<*mut u8> {
        let base = self.base()?;
        let mut start = 0;
        self.next
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |next| {
                // align the address, not the offset (the base is page-aligned anyway)
                start = (base + next).checked_next_multiple_of(layout.align())? - base;
                let end = start.checked_add(layout.size())?;
                (end <= N).then_some(end)
            })
            .ok()
            .map(|_| (base + start) as *mut u8)
    }
}

impl<const N: usize> Default for Arena<N> {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: arena ranges are disjoint, aligned as asked and never handed out twice; anything
// else is the system allocator's, passed to it unchanged.
unsafe impl<const N: usize> GlobalAlloc for Arena<N> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        check_shared();
        match self.bump(layout) {
            Some(p) => p,
            // SAFETY: the caller's layout, as GlobalAlloc::alloc requires.
            None => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        check_shared();
        match self.bump(layout) {
            // never handed out before, so still the zeroes the mapping began with
            Some(p) => p,
            // SAFETY: as in alloc.
            None => unsafe { System.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        check_shared();
        if !self.owns(p) {
            // SAFETY: not arena memory, so the system allocator's, with its layout.
            unsafe { System.dealloc(p, layout) }
        }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        check_shared();
        if !self.owns(p) {
            // SAFETY: the system allocator's block, with the caller's layout and size.
            return unsafe { System.realloc(p, layout, new_size) };
        }
        if new_size <= layout.size() {
            return p; // shrinking in place: the tail is simply not used
        }
        // the last block handed out grows in place (a Vec or String being built)
        let end = p as usize - self.base.load(Ordering::Acquire) + layout.size();
        if end + (new_size - layout.size()) <= N
            && self
                .next
                .compare_exchange(end, end + (new_size - layout.size()), Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            return p;
        }
        // SAFETY: GlobalAlloc::realloc's contract: new_size rounded to align fits isize.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: a valid layout, as just built.
        let q = unsafe { self.alloc(new_layout) };
        if !q.is_null() {
            // SAFETY: `p` holds layout.size() bytes, `q` at least new_size > that; the
            // ranges are distinct allocations.
            unsafe { std::ptr::copy_nonoverlapping(p, q, layout.size()) };
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZE: usize = 1 << 16;
    type Arena = super::Arena<SIZE>;

    #[test]
    fn hands_out_aligned_disjoint_zeroed_ranges_then_falls_back() {
        let a = Box::new(Arena::new());
        let mut seen: Vec<(usize, usize)> = Vec::new();
        for (size, align) in [(1, 1), (24, 8), (3, 1), (64, 64), (4096, 4096), (5, 2)] {
            let l = Layout::from_size_align(size, align).unwrap();
            let p = unsafe { a.alloc_zeroed(l) };
            assert!(a.owns(p));
            assert_eq!(p as usize % align, 0, "aligned to {align}");
            assert!(unsafe { std::slice::from_raw_parts(p, size) }.iter().all(|b| *b == 0));
            unsafe { std::ptr::write_bytes(p, 0xa5, size) };
            let r = (p as usize, p as usize + size);
            assert!(seen.iter().all(|s| r.1 <= s.0 || s.1 <= r.0), "disjoint");
            seen.push(r);
        }
        // the rest of the arena in one piece, then nothing fits: the system allocator's
        let used = a.next.load(Ordering::Relaxed);
        let rest = Layout::from_size_align(SIZE - used, 1).unwrap();
        assert!(a.owns(unsafe { a.alloc(rest) }));
        let l = Layout::from_size_align(16, 8).unwrap();
        let p = unsafe { a.alloc(l) };
        assert!(!p.is_null() && !a.owns(p));
        unsafe { a.dealloc(p, l) };
    }

    #[test]
    fn without_its_mapping_everything_goes_to_the_system_allocator() {
        let a = Arena::new();
        a.base.store(REFUSED, Ordering::Release); // as when RLIMIT_DATA refused the mapping
        let l = Layout::from_size_align(64, 16).unwrap();
        let p = unsafe { a.alloc_zeroed(l) };
        assert!(!p.is_null() && !a.owns(p) && (p as usize).is_multiple_of(16));
        assert!(unsafe { std::slice::from_raw_parts(p, 64) }.iter().all(|b| *b == 0));
        let q = unsafe { a.realloc(p, l, 4096) };
        assert!(!q.is_null() && !a.owns(q));
        unsafe { a.dealloc(q, Layout::from_size_align(4096, 16).unwrap()) };
        assert_eq!(a.next.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn realloc_keeps_the_bytes_in_and_out_of_the_arena() {
        let a = Box::new(Arena::new());
        let l = Layout::from_size_align(8, 8).unwrap();
        let p = unsafe { a.alloc(l) };
        unsafe { std::ptr::copy_nonoverlapping(b"abcdefgh".as_ptr(), p, 8) };
        let q = unsafe { a.realloc(p, l, 16) };
        assert_eq!(q, p, "the last block grows in place");
        let _other = unsafe { a.alloc(l) };
        let q = unsafe { a.realloc(p, Layout::from_size_align(16, 8).unwrap(), 32) };
        assert!(a.owns(q) && q != p, "a block with another after it moves");
        assert_eq!(unsafe { std::slice::from_raw_parts(q, 8) }, b"abcdefgh");
        assert_eq!(unsafe { a.realloc(q, Layout::from_size_align(32, 8).unwrap(), 4) }, q, "shrinks in place");
        // a block too big for the arena moves to the system allocator, bytes and all
        let big = unsafe { a.realloc(q, Layout::from_size_align(32, 8).unwrap(), SIZE + 1) };
        assert!(!big.is_null() && !a.owns(big));
        assert_eq!(unsafe { std::slice::from_raw_parts(big, 8) }, b"abcdefgh");
        unsafe { a.dealloc(big, Layout::from_size_align(SIZE + 1, 8).unwrap()) };
    }
}

//! The program's vocabulary (what a listed syscall gets: [`Action`], [`Rule`]) and the
//! assembler that turns a table of rules into classic BPF, and its installation. Layout:
//! architecture check (foreign arch and x32 numbers kill the process), then one block per
//! listed syscall found by binary search, then allow.

use std::io;

use super::sysno::Arch;

pub(super) const BPF_LD_W_ABS: u16 = 0x20;
pub(super) const BPF_JEQ_K: u16 = 0x15;
pub(super) const BPF_JGE_K: u16 = 0x35;
pub(super) const BPF_JSET_K: u16 = 0x45;
pub(super) const BPF_RET_K: u16 = 0x06;
pub(super) const BPF_ALU_AND_K: u16 = 0x54;

pub(super) const RET_KILL_PROCESS: u32 = 0x8000_0000;
pub(super) const RET_USER_NOTIF: u32 = 0x7fc0_0000;
pub(super) const RET_ERRNO: u32 = 0x0005_0000;
pub(super) const RET_ALLOW: u32 = 0x7fff_0000;

pub(super) const OFF_NR: u32 = 0;
pub(super) const OFF_ARCH: u32 = 4;
/// Low 32 bits of argument `i` (little-endian): comparisons are deliberately 32-bit so
/// `TIOCSTI | 1 << 32` cannot slip past (CVE-2019-10063).
pub(super) const fn arg_lo(i: u32) -> u32 {
    16 + 8 * i
}
/// High 32 bits of argument `i`: only for whole-pointer checks (NULL).
pub(super) const fn arg_hi(i: u32) -> u32 {
    20 + 8 * i
}

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SockFilter {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

pub(super) const fn stmt(code: u16, k: u32) -> SockFilter {
    SockFilter { code, jt: 0, jf: 0, k }
}
pub(super) const fn jump(code: u16, k: u32, jt: u8, jf: u8) -> SockFilter {
    SockFilter { code, jt, jf, k }
}

/// What a matched syscall gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Allow,
    Errno(i32),
    Notify,
}

impl Action {
    pub(super) fn ret(self) -> u32 {
        match self {
            Action::Allow => RET_ALLOW,
            Action::Errno(e) => RET_ERRNO | (e as u32 & 0xffff),
            Action::Notify => RET_USER_NOTIF,
        }
    }
}

/// The decision for one syscall.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    Always(Action),
    /// `then` when any bit of `mask` is set in argument `arg`, else `otherwise`.
    AnyBit {
        arg: u32,
        mask: u32,
        then: Action,
        otherwise: Action,
    },
    /// Allow when `native` is set in argument `arg` and no bit of `native_unless`; else
    /// `then` when any bit of `always` is set; else allow when any bit of `unless` is set;
    /// else `then` when any bit of `mask` is set; else allow. (`native` 0: no such bit.)
    AnyBitUnless {
        arg: u32,
        native: u32,
        native_unless: u32,
        always: u32,
        unless: u32,
        mask: u32,
        then: Action,
    },
    /// socket(): TCP only. Family AF_INET/AF_INET6 with type SOCK_STREAM (flags masked)
    /// and protocol 0 or IPPROTO_TCP is allowed; AF_UNIX too when `unix`, only of stream
    /// and seqpacket type when `unix_stream_only`; all else EPERM.
    TcpOnly {
        unix: bool,
        /// `allowUnixSockets`: no datagram socket, which could `sendto` any path unseen.
        unix_stream_only: bool,
        /// UDP datagram sockets too (protocol 0 or IPPROTO_UDP): namespace mode's
        /// transparent DNS, where only the namespace's own loopback is reachable.
        udp: bool,
    },
    /// socketpair(): AF_UNIX only; unless `any_type`, only SOCK_STREAM and SOCK_SEQPACKET
    /// (a datagram socket can `sendto` any host socket path, and be bound to receive).
    UnixPair {
        any_type: bool,
    },
    /// ioctl(): the request (32-bit compare) in `refuse` fails with EPERM, in `notify` goes
    /// to the supervisor, anything else is allowed.
    Ioctl {
        refuse: Vec<u32>,
        notify: Vec<u32>,
    },
    /// `then` when argument `arg` is a NULL pointer (both 32-bit halves zero), else
    /// `otherwise`.
    Null {
        arg: u32,
        then: Action,
        otherwise: Action,
    },
    /// `then` when each argument of `args` equals one of its values (32-bit compare), else
    /// `otherwise`.
    AllOneOf {
        args: Vec<(u32, Vec<u32>)>,
        then: Action,
        otherwise: Action,
    },
    /// `then` when argument `arg` equals one of `values`, else `otherwise`.
    OneOf {
        arg: u32,
        values: Vec<u32>,
        then: Action,
        otherwise: Action,
    },
    /// A call naming a process: allowed when the pid in argument `pid` is 0 (the caller
    /// itself) and, with `which: Some((arg, user))`, argument `arg` is not `user` (a whole
    /// uid's processes); otherwise to the supervisor.
    SelfOrJudged {
        pid: u32,
        which: Option<(u32, u32)>,
    },
}

/// Assembles the program: the architecture checks, then a binary search over the
/// sorted syscall numbers (a few compares per syscall instead of one per listed syscall,
/// which also keeps the kernel's per-syscall action-cache precomputation cheap), with
/// small linear leaves that hold each syscall's block.
pub fn assemble(arch: &Arch, table: &[(&'static str, i64, Rule)]) -> io::Result<Vec<SockFilter>> {
    let mut p = vec![
        stmt(BPF_LD_W_ABS, OFF_ARCH),
        jump(BPF_JEQ_K, arch.audit_arch, 1, 0),
        stmt(BPF_RET_K, RET_KILL_PROCESS),
        stmt(BPF_LD_W_ABS, OFF_NR),
    ];
    if let Some(x32) = arch.x32_bit {
        p.push(jump(BPF_JGE_K, x32, 0, 1));
        p.push(stmt(BPF_RET_K, RET_KILL_PROCESS));
    }
    let mut sorted: Vec<&(&'static str, i64, Rule)> = table.iter().collect();
    sorted.sort_by_key(|(_, nr, _)| *nr);
    sorted.dedup_by_key(|(_, nr, _)| *nr);
    p.extend(tree(&sorted)?);
    if p.len() > 4096 {
        return Err(io::Error::other("seccomp program exceeds 4096 instructions"));
    }
    Ok(p)
}

pub(super) const LEAF: usize = 8;
pub(super) const BPF_JA: u16 = 0x05;

/// The accumulator holds the syscall number on entry; every path ends in a return.
pub(super) fn tree(entries: &[&(&'static str, i64, Rule)]) -> io::Result<Vec<SockFilter>> {
    if entries.len() <= LEAF {
        return leaf(entries);
    }
    let mid = entries.len() / 2;
    let left = tree(&entries[..mid])?;
    let right = tree(&entries[mid..])?;
    // nr >= pivot: fall through to the long jump over the left half; else skip it.
    let mut out = vec![jump(BPF_JGE_K, entries[mid].1 as u32, 0, 1), stmt(BPF_JA, left.len() as u32)];
    out.extend(left);
    out.extend(right);
    Ok(out)
}

/// A linear run of compares. Syscalls whose rule is a plain action jump to one shared
/// return per action; the others get their block inline, after the shared returns.
pub(super) fn leaf(entries: &[&(&'static str, i64, Rule)]) -> io::Result<Vec<SockFilter>> {
    let mut shared: Vec<u32> = Vec::new();
    for (_, _, rule) in entries {
        if let Rule::Always(a) = rule {
            if !shared.contains(&a.ret()) {
                shared.push(a.ret());
            }
        }
    }
    let blocks: Vec<(usize, Vec<SockFilter>)> = entries
        .iter()
        .enumerate()
        .filter(|(_, (_, _, r))| !matches!(r, Rule::Always(_)))
        .map(|(i, (_, _, r))| (i, body(r)))
        .collect();
    // layout: n compares, `ret allow`, shared returns, inline blocks
    let n = entries.len();
    let shared_at = n + 1;
    let mut block_at = shared_at + shared.len();
    let mut starts = vec![0usize; n];
    for (i, b) in &blocks {
        starts[*i] = block_at;
        block_at += b.len();
    }
    let mut out = Vec::with_capacity(block_at);
    for (i, (name, nr, rule)) in entries.iter().enumerate() {
        let target = match rule {
            Rule::Always(a) => shared_at + shared.iter().position(|r| *r == a.ret()).unwrap_or(0),
            _ => starts[i],
        };
        let jt = u8::try_from(target - i - 1)
            .map_err(|_| io::Error::other(format!("seccomp leaf holding {name} is too long")))?;
        out.push(jump(BPF_JEQ_K, *nr as u32, jt, 0));
    }
    out.push(stmt(BPF_RET_K, RET_ALLOW));
    out.extend(shared.iter().map(|r| stmt(BPF_RET_K, *r)));
    for (_, b) in blocks {
        out.extend(b);
    }
    Ok(out)
}

pub(super) fn body(rule: &Rule) -> Vec<SockFilter> {
    match rule {
        Rule::Always(a) => vec![stmt(BPF_RET_K, a.ret())],
        Rule::AnyBit { arg, mask, then, otherwise } => vec![
            stmt(BPF_LD_W_ABS, arg_lo(*arg)),
            jump(BPF_JSET_K, *mask, 0, 1),
            stmt(BPF_RET_K, then.ret()),
            stmt(BPF_RET_K, otherwise.ret()),
        ],
        Rule::AnyBitUnless { arg, native, native_unless, always, unless, mask, then } => {
            let mut b = vec![stmt(BPF_LD_W_ABS, arg_lo(*arg))];
            if *native != 0 {
                // native set -> next, else past the allow; native_unless set -> past it too
                b.extend([
                    jump(BPF_JSET_K, *native, 0, 2),
                    jump(BPF_JSET_K, *native_unless, 1, 0),
                    stmt(BPF_RET_K, RET_ALLOW),
                ]);
            }
            b.extend([
                jump(BPF_JSET_K, *always, 2, 0),
                jump(BPF_JSET_K, *unless, 2, 0),
                jump(BPF_JSET_K, *mask, 0, 1),
                stmt(BPF_RET_K, then.ret()),
                stmt(BPF_RET_K, RET_ALLOW),
            ]);
            b
        }
        Rule::TcpOnly { unix, unix_stream_only, udp } => {
            let eperm = Action::Errno(libc::EPERM).ret();
            // 0: ld family; 1: jeq INET -> 4; 2: jeq INET6 -> 4; 3: unix? allow : eperm;
            // 4: ld type; 5: and 0xf; then per allowed (type, protocol) a block of four:
            // jeq type ? on : next block (or eperm); ld proto; jeq 0 -> allow; jeq proto -> allow : eperm
            let kinds: &[(i32, i32)] = if *udp {
                &[(libc::SOCK_STREAM, libc::IPPROTO_TCP), (libc::SOCK_DGRAM, libc::IPPROTO_UDP)]
            } else {
                &[(libc::SOCK_STREAM, libc::IPPROTO_TCP)]
            };
            let deny = 6 + 4 * kinds.len();
            let allow = deny + 1;
            // the offset of a jump at `from` to `to`
            let to = |from: usize, to: usize| (to - from - 1) as u8;
            let mut b = vec![
                stmt(BPF_LD_W_ABS, arg_lo(0)),
                jump(BPF_JEQ_K, libc::AF_INET as u32, 2, 0),
                jump(BPF_JEQ_K, libc::AF_INET6 as u32, 1, 0),
            ];
            b.push(if *unix {
                jump(BPF_JEQ_K, libc::AF_UNIX as u32, to(3, allow), to(3, deny))
            } else {
                stmt(BPF_RET_K, eperm)
            });
            b.extend([stmt(BPF_LD_W_ABS, arg_lo(1)), stmt(BPF_ALU_AND_K, 0xf)]);
            for (i, (ty, proto)) in kinds.iter().enumerate() {
                let at = 6 + 4 * i;
                let next = if i + 1 == kinds.len() { deny } else { at + 4 };
                b.extend([
                    jump(BPF_JEQ_K, *ty as u32, 0, to(at, next)),
                    stmt(BPF_LD_W_ABS, arg_lo(2)),
                    jump(BPF_JEQ_K, 0, to(at + 2, allow), 0),
                    jump(BPF_JEQ_K, *proto as u32, to(at + 3, allow), to(at + 3, deny)),
                ]);
            }
            b.extend([stmt(BPF_RET_K, eperm), stmt(BPF_RET_K, RET_ALLOW)]);
            if *unix_stream_only {
                // AF_UNIX jumps to a type check appended after `ret allow`
                let check = b.len();
                b[3] = jump(BPF_JEQ_K, libc::AF_UNIX as u32, to(3, check), to(3, deny));
                b.extend(unix_stream_check(eperm));
            }
            b
        }
        Rule::UnixPair { any_type } => {
            let eperm = Action::Errno(libc::EPERM).ret();
            // 0: ld family; 1: jeq UNIX ? 2 : eperm; then either allow, or the type check
            let mut b = vec![stmt(BPF_LD_W_ABS, arg_lo(0)), jump(BPF_JEQ_K, libc::AF_UNIX as u32, 0, 4)];
            if *any_type {
                b.truncate(1);
                b.extend([
                    jump(BPF_JEQ_K, libc::AF_UNIX as u32, 0, 1),
                    stmt(BPF_RET_K, RET_ALLOW),
                    stmt(BPF_RET_K, eperm),
                ]);
                return b;
            }
            b.extend(unix_stream_check(eperm));
            b
        }
        Rule::Ioctl { refuse, notify } => {
            let eperm = Action::Errno(libc::EPERM).ret();
            let mut b = vec![stmt(BPF_LD_W_ABS, arg_lo(1))];
            let n = refuse.len() + notify.len();
            // each compare jumps to its return: after the remaining compares and `ret allow`
            for (i, v) in refuse.iter().chain(notify).enumerate() {
                let to_ret = if i < refuse.len() { n - i } else { n - i + 1 };
                b.push(jump(BPF_JEQ_K, *v, to_ret as u8, 0));
            }
            b.push(stmt(BPF_RET_K, RET_ALLOW));
            b.push(stmt(BPF_RET_K, eperm));
            b.push(stmt(BPF_RET_K, RET_USER_NOTIF));
            b
        }
        Rule::Null { arg, then, otherwise } => vec![
            stmt(BPF_LD_W_ABS, arg_lo(*arg)),
            jump(BPF_JEQ_K, 0, 0, 2),
            stmt(BPF_LD_W_ABS, arg_hi(*arg)),
            jump(BPF_JEQ_K, 0, 1, 0),
            stmt(BPF_RET_K, otherwise.ret()),
            stmt(BPF_RET_K, then.ret()),
        ],
        Rule::AllOneOf { args, then, otherwise } => {
            // per argument: ld; one jeq per value to the next argument's block, else to
            // `otherwise`; after the last block `ret then`, then `ret otherwise`
            let total: usize = args.iter().map(|(_, v)| 1 + v.len()).sum();
            let mut b = Vec::with_capacity(total + 2);
            for (arg, values) in args {
                let start = b.len();
                let next = start + 1 + values.len();
                b.push(stmt(BPF_LD_W_ABS, arg_lo(*arg)));
                for (i, v) in values.iter().enumerate() {
                    let at = start + 1 + i;
                    let no = if i + 1 == values.len() { total + 1 - at - 1 } else { 0 };
                    b.push(jump(BPF_JEQ_K, *v, (next - at - 1) as u8, no as u8));
                }
            }
            b.push(stmt(BPF_RET_K, then.ret()));
            b.push(stmt(BPF_RET_K, otherwise.ret()));
            b
        }
        Rule::SelfOrJudged { pid, which: None } => vec![
            stmt(BPF_LD_W_ABS, arg_lo(*pid)),
            jump(BPF_JEQ_K, 0, 0, 1),
            stmt(BPF_RET_K, RET_ALLOW),
            stmt(BPF_RET_K, RET_USER_NOTIF),
        ],
        // 0: ld pid; 1: jeq 0 ? 2 : notify(5); 2: ld which; 3: jeq user ? notify(5) : allow(4)
        Rule::SelfOrJudged { pid, which: Some((arg, user)) } => vec![
            stmt(BPF_LD_W_ABS, arg_lo(*pid)),
            jump(BPF_JEQ_K, 0, 0, 3),
            stmt(BPF_LD_W_ABS, arg_lo(*arg)),
            jump(BPF_JEQ_K, *user, 1, 0),
            stmt(BPF_RET_K, RET_ALLOW),
            stmt(BPF_RET_K, RET_USER_NOTIF),
        ],
        Rule::OneOf { arg, values, then, otherwise } => {
            let n = values.len();
            let mut b = vec![stmt(BPF_LD_W_ABS, arg_lo(*arg))];
            for (i, v) in values.iter().enumerate() {
                // on a match skip the remaining compares and the `otherwise` return
                b.push(jump(BPF_JEQ_K, *v, (n - i) as u8, 0));
            }
            b.push(stmt(BPF_RET_K, otherwise.ret()));
            b.push(stmt(BPF_RET_K, then.ret()));
            b
        }
    }
}

/// Allows SOCK_STREAM and SOCK_SEQPACKET (type argument, flags masked), else `eperm`:
/// ld type; and 0xf; jeq STREAM -> allow; jeq SEQPACKET -> allow; ret eperm; ret allow.
pub(super) fn unix_stream_check(eperm: u32) -> [SockFilter; 6] {
    [
        stmt(BPF_LD_W_ABS, arg_lo(1)),
        stmt(BPF_ALU_AND_K, 0xf),
        jump(BPF_JEQ_K, libc::SOCK_STREAM as u32, 2, 0),
        jump(BPF_JEQ_K, libc::SOCK_SEQPACKET as u32, 1, 0),
        stmt(BPF_RET_K, eperm),
        stmt(BPF_RET_K, RET_ALLOW),
    ]
}

/// Installs the program on the calling thread and returns the notification listener.
/// Async-signal-safe: only syscalls, used between fork and exec.
pub fn install(prog: &[SockFilter]) -> Result<libc::c_int, i32> {
    #[repr(C)]
    struct SockFprog {
        len: u16,
        filter: *const SockFilter,
    }
    let fprog = SockFprog { len: prog.len() as u16, filter: prog.as_ptr() };
    const SECCOMP_SET_MODE_FILTER: libc::c_ulong = 1;
    const SECCOMP_FILTER_FLAG_NEW_LISTENER: libc::c_ulong = 1 << 3;
    // SAFETY: fprog points at a live, correctly laid out program for the whole call.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            SECCOMP_SET_MODE_FILTER,
            SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &fprog as *const SockFprog,
        )
    };
    if fd < 0 {
        Err(errno())
    } else {
        Ok(fd as libc::c_int)
    }
}

pub(super) fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(libc::EINVAL)
}

"""Run a command the way a restricted Kubernetes pod would: as POD_UID (when started as
root), no capabilities, no_new_privs, and a seccomp filter that, like containerd's
RuntimeDefault profile without capabilities, refuses new user namespaces (unshare and
clone with CLONE_NEWUSER get EPERM, clone3 gets ENOSYS) and the calls that profile grants
only with CAP_SYS_PTRACE or CAP_SYS_ADMIN (pidfd_getfd, process_vm_readv/writev, ptrace,
kcmp, mount, setns): srt must work without them.

usage: restricted.py COMMAND [ARG...]   (COMMAND is looked up on PATH)

RESTRICTED_CALLS=name,...: refuse only these calls (EPERM) and leave user namespaces
alone, for profiles that differ from RuntimeDefault in that one respect.
"""
import ctypes
import os
import platform
import struct
import sys

# machine: AUDIT_ARCH and the numbers of the calls containerd's RuntimeDefault profile
# grants only with CAP_SYS_PTRACE or CAP_SYS_ADMIN (contrib/seccomp/seccomp_default.go):
# pidfd_getfd, process_vm_readv/writev, ptrace, kcmp (ptrace); mount, setns, unshare (admin)
ARCHES = {
    "x86_64": (0xC000003E, {"pidfd_getfd": 438, "process_vm_readv": 310, "process_vm_writev": 311,
                            "ptrace": 101, "kcmp": 312, "mount": 165, "setns": 308, "unshare": 272},
               56, 435),
    "aarch64": (0xC00000B7, {"pidfd_getfd": 438, "process_vm_readv": 270, "process_vm_writev": 271,
                             "ptrace": 117, "kcmp": 272, "mount": 40, "setns": 268, "unshare": 97},
                220, 435),
}
CLONE_NEWUSER = 0x10000000
EPERM, ENOSYS = 1, 38
LD_ABS_W, JEQ_K, JSET_K, RET_K = 0x20, 0x15, 0x45, 0x06
ALLOW, ERRNO = 0x7FFF0000, 0x00050000


def program(arch, refused, clone, clone3):
    """ld arch; foreign -> allow; ld nr; each refused -> EPERM; clone3 -> ENOSYS;
    clone with CLONE_NEWUSER -> EPERM; else allow."""
    n = len(refused)
    # layout: 0 ld arch, 1 jeq arch, 2 ld nr, 3..3+n-1 refused, 3+n clone3, 4+n clone,
    # 5+n ld flags, 6+n jset, 7+n allow, 8+n eperm, 9+n enosys
    allow, eperm, enosys = 7 + n, 8 + n, 9 + n
    prog = [(LD_ABS_W, 0, 0, 4), (JEQ_K, 0, allow - 2, arch), (LD_ABS_W, 0, 0, 0)]
    for i, nr in enumerate(refused):
        pc = 3 + i
        prog.append((JEQ_K, eperm - pc - 1, 0, nr))
    prog.append((JEQ_K, enosys - (3 + n) - 1, 0, clone3))
    prog.append((JEQ_K, 0, allow - (4 + n) - 1, clone))
    prog.append((LD_ABS_W, 0, 0, 16))  # clone flags (args[0], low word)
    prog.append((JSET_K, eperm - (6 + n) - 1, 0, CLONE_NEWUSER))
    prog += [(RET_K, 0, 0, ALLOW), (RET_K, 0, 0, ERRNO | EPERM), (RET_K, 0, 0, ERRNO | ENOSYS)]
    return prog


def main():
    uid = int(os.environ.pop("POD_UID", "1001"))
    if os.geteuid() == 0:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)  # drops every capability
    arch, refused, clone, clone3 = ARCHES[platform.machine()]
    only = os.environ.pop("RESTRICTED_CALLS", "")
    if only:
        refused = {name: refused[name] for name in only.split(",")}
        clone = clone3 = 0xFFFFFFFF  # no such call: the clone rules never match
    prog = program(arch, sorted(refused.values()), clone, clone3)
    raw = b"".join(struct.pack("HBBI", *insn) for insn in prog)
    buf = ctypes.create_string_buffer(raw)

    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = Fprog(len(prog), ctypes.addressof(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        sys.exit("restricted.py: PR_SET_NO_NEW_PRIVS failed: errno %d" % ctypes.get_errno())
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        sys.exit("restricted.py: seccomp failed: errno %d" % ctypes.get_errno())
    os.execvp(sys.argv[1], sys.argv[1:])


main()

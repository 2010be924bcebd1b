"""Run a command the way a restricted Kubernetes pod would: as POD_UID (when started as
root), no capabilities, no_new_privs, and a seccomp filter that, like the container
runtimes' default profile, refuses new user namespaces (unshare and clone with
CLONE_NEWUSER get EPERM, clone3 gets ENOSYS).

usage: restricted.py COMMAND [ARG...]   (COMMAND is looked up on PATH)
"""
import ctypes
import os
import platform
import struct
import sys

ARCHES = {  # machine: (AUDIT_ARCH, unshare, clone, clone3)
    "x86_64": (0xC000003E, 272, 56, 435),
    "aarch64": (0xC00000B7, 97, 220, 435),
}
CLONE_NEWUSER = 0x10000000
EPERM, ENOSYS = 1, 38
LD_ABS_W, JEQ_K, JSET_K, RET_K = 0x20, 0x15, 0x45, 0x06
ALLOW, ERRNO = 0x7FFF0000, 0x00050000


def main():
    uid = int(os.environ.pop("POD_UID", "1001"))
    if os.geteuid() == 0:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)  # drops every capability
    arch, unshare, clone, clone3 = ARCHES[platform.machine()]
    prog = [
        (LD_ABS_W, 0, 0, 4),          # 0: arch
        (JEQ_K, 0, 7, arch),          # 1: foreign arch -> 9 allow
        (LD_ABS_W, 0, 0, 0),          # 2: syscall number
        (JEQ_K, 6, 0, unshare),       # 3: -> 10 EPERM
        (JEQ_K, 6, 0, clone3),        # 4: -> 11 ENOSYS
        (JEQ_K, 0, 3, clone),         # 5: not clone -> 9 allow
        (LD_ABS_W, 0, 0, 16),         # 6: clone flags (args[0], low word)
        (JSET_K, 2, 1, CLONE_NEWUSER),  # 7: -> 10 EPERM, else 9 allow
        (RET_K, 0, 0, ALLOW),         # 8: (not reached)
        (RET_K, 0, 0, ALLOW),         # 9
        (RET_K, 0, 0, ERRNO | EPERM),  # 10
        (RET_K, 0, 0, ERRNO | ENOSYS),  # 11
    ]
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

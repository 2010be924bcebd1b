#!/usr/bin/env python3
"""Derive containerd's RuntimeDefault seccomp profile (as a pod with every capability
dropped gets it) from podman's /usr/share/containers/seccomp.json.

podman's profile allows, unconditionally, syscalls that containerd grants only together
with a capability (unshare, setns, mount, ptrace, pidfd_getfd, ...), because podman
expects user namespaces inside containers. A Kubernetes pod that drops ALL gets none of
them. So:
  * every rule that needs a capability (includes.caps) goes: no capability is held;
  * every rule that applies only without a capability (excludes.caps) goes too: it only
    denies what the default action denies anyway (podman's audit-socket rules included:
    containerd allows socket() unconditionally, so socket is added to the allowed list);
  * the names containerd allows only with a capability are removed from the
    unconditional rules (the list below, grouped by the capability containerd requires);
  * clone is allowed only without namespace flags and clone3 answers ENOSYS (so libc falls
    back to clone), as containerd does without CAP_SYS_ADMIN;
  * refused syscalls answer EPERM (containerd's default) instead of podman's ENOSYS.
Usage: seccomp-runtime-default.py [PODMAN_PROFILE] > profile.json
"""
import json
import sys

CAP_ONLY = {
    "CAP_SYS_ADMIN": "bpf clone clone3 fanotify_init fsconfig fsmount fsopen fspick move_mount "
    "open_tree mount mount_setattr umount umount2 lookup_dcookie name_to_handle_at "
    "perf_event_open quotactl quotactl_fd setdomainname sethostname setns syslog unshare "
    "vm86 vm86old",
    "CAP_SYS_PTRACE": "kcmp pidfd_getfd process_madvise process_vm_readv process_vm_writev ptrace",
    "CAP_SYS_BOOT": "reboot",
    "CAP_SYS_CHROOT": "chroot",
    "CAP_SYS_MODULE": "delete_module init_module finit_module",
    "CAP_SYS_PACCT": "acct",
    "CAP_SYS_NICE": "get_mempolicy mbind set_mempolicy set_mempolicy_home_node",
    "CAP_SYS_RAWIO": "iopl ioperm",
    "CAP_SYS_TIME": "settimeofday stime clock_settime clock_settime64 clock_adjtime "
    "clock_adjtime64 adjtimex",
    "CAP_SYS_TTY_CONFIG": "vhangup",
    "CAP_SYSLOG": "syslog",
}
REMOVED = {name for names in CAP_ONLY.values() for name in names.split()}
# CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |
# CLONE_NEWPID | CLONE_NEWNET
CLONE_NAMESPACE_FLAGS = 0x7E020000
EPERM, ENOSYS = 1, 38

path = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/containers/seccomp.json"
with open(path) as f:
    profile = json.load(f)

rules = []
for rule in profile["syscalls"]:
    includes, excludes = rule.get("includes") or {}, rule.get("excludes") or {}
    if includes.get("caps") or excludes.get("caps"):
        continue
    if rule["action"] == "SCMP_ACT_ALLOW":
        rule["names"] = [n for n in rule["names"] if n not in REMOVED]
        if not rule["names"]:
            continue
    rules.append(rule)

plain = next(
    r
    for r in rules
    if r["action"] == "SCMP_ACT_ALLOW" and not r.get("args") and not r.get("includes")
)
plain["names"] = sorted(set(plain["names"]) | {"socket"})
rules.append(
    {
        "names": ["clone"],
        "action": "SCMP_ACT_ALLOW",
        "args": [
            {"index": 0, "value": CLONE_NAMESPACE_FLAGS, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}
        ],
        "comment": "containerd: clone without namespace flags (no CAP_SYS_ADMIN)",
    }
)
rules.append(
    {
        "names": ["clone3"],
        "action": "SCMP_ACT_ERRNO",
        "errnoRet": ENOSYS,
        "comment": "containerd: clone3 is ENOSYS without CAP_SYS_ADMIN, libc falls back to clone",
    }
)
profile["syscalls"] = rules
profile["defaultErrnoRet"] = EPERM
profile.pop("defaultErrno", None)
json.dump(profile, sys.stdout, indent=1)
sys.stdout.write("\n")

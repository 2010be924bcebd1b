//! The filesystem part of `srt explain`: every rule, every protected name (also those
//! protected only if they appear during the run) and the mechanism behind each.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::git_guard::Guard;
use crate::launch::{NetworkMode, Prepared};
use crate::mandatory::{DANGEROUS_DIRS, DANGEROUS_FILES};

pub fn report(w: &mut String, p: &Prepared, settings_files: &[PathBuf]) {
    let ns = p.mode == NetworkMode::Namespace;
    let _ = writeln!(w, "\nfilesystem:");
    if !p.fs_enabled {
        let _ = writeln!(w, "  filesystem.disabled: no filesystem rules at all (reads and writes unrestricted)");
        return;
    }
    let pol = &p.policy;
    let _ = writeln!(w, "  reads: everywhere except denyRead  [Landlock]");
    for d in &pol.deny_read {
        let listable = pol.rights(d).list;
        let _ = writeln!(w, "    deny read   {}{}", d.display(), if listable { " (names listable)" } else { "" });
    }
    if pol.deny_read.iter().any(|d| !pol.rights(d).list && d.as_os_str() != "/") {
        let _ = writeln!(
            w,
            "  LIMIT: a denied directory cannot be listed, and neither can the directories above it (filesystem.listable"
        );
        let _ = writeln!(w, "  keeps names visible)");
    }
    for a in &pol.allow_read {
        let _ = writeln!(w, "    allow read  {}", a.display());
    }
    let floor = if ns { "Landlock + read-only mount view" } else { "Landlock" };
    let _ = writeln!(w, "  writes: only beneath these  [{floor}]");
    for d in &pol.write {
        let _ = writeln!(w, "    allow write {}", d.display());
    }
    let exists_how =
        if ns { "exists: Landlock + mounted read-only" } else { "exists: Landlock; its metadata by the supervisor" };
    let missing_how = "missing: refused if it is made during the run [supervisor]";
    let _ = writeln!(w, "  protected: never written, created, replaced or removed, nor their metadata changed");
    for d in &pol.deny_write {
        let how = if d.symlink_metadata().is_ok() { exists_how } else { missing_how };
        let _ = writeln!(w, "    {:<48} {:<16} {how}", d.display(), origin(d, settings_files));
    }
    let guarded_parents = guarded_parents(p);
    if !guarded_parents.is_empty() {
        let _ = writeln!(
            w,
            "  names with protected paths below: only a new empty directory may be made there (what is made"
        );
        let _ = writeln!(
            w,
            "  inside goes to the supervisor), and they are never replaced, renamed or linked  [supervisor]"
        );
        for d in guarded_parents {
            let _ = writeln!(w, "    {}", d.display());
        }
    }
    for g in &pol.git_dirs {
        let state = if g.is_dir() { "exists" } else { "missing: guarded if the command makes it" };
        let _ = writeln!(w, "  git directory {} ({state})  [Landlock split + supervisor]", g.display());
        let config = if pol.allow_git_config {
            "config          writable (allowGitConfig)".to_string()
        } else {
            format!(
                "config          never written in place; replaced only whole, and only when every key is on srt's list of keys that cannot make git run a program{}",
                if g.join("config").exists() && ns { " (mounted read-only now)" } else { "" }
            )
        };
        for line in [
            config.as_str(),
            "hooks/          may be made empty (git init does); inside only *.sample files, which git never runs",
            "commondir       never written: it would point git at another config and hooks",
            "config.worktree never written: the same for per-worktree config",
            "modules/*/      submodules' git directories: the same rules",
            "worktrees/*/    linked worktrees' git directories: the same rules",
            "objects, refs, logs, index, HEAD, ...: writable (git add, commit and fetch work)",
        ] {
            let _ = writeln!(w, "    {line}");
        }
    }
    if let Some(head) = pol.deny_write.iter().find(|d| d.file_name().is_some_and(|n| n == "HEAD")) {
        let _ = writeln!(
            w,
            "  {}: may not be made, so the working directory cannot be turned into a bare repository for a host git",
            head.display()
        );
    }
    let _ = writeln!(w, "  Landlock rules: {}", p.plan.rules.len());
    if !p.plan.split_write_dirs.is_empty() {
        let _ =
            writeln!(w, "  directories that hold protected names: the supervisor makes, renames and removes entries");
        let _ = writeln!(w, "  there itself after judging the real location (elsewhere the kernel judges alone):");
        for d in &p.plan.split_write_dirs {
            let _ = writeln!(w, "    {}", d.display());
        }
    }
    let reading_back: Vec<&PathBuf> =
        p.plan.split_read_dirs.iter().filter(|d| pol.in_write_tree(&d.join("x"))).collect();
    if !reading_back.is_empty() {
        let _ =
            writeln!(w, "  LIMIT: these writable directories hold a denyRead entry, so files made in them during the");
        let _ = writeln!(w, "  run cannot be read back by the command:");
        for d in reading_back {
            let _ = writeln!(w, "    {}", d.display());
        }
    }
    if ns {
        let _ = writeln!(
            w,
            "  metadata (chmod, chown, timestamps, xattrs, inode flags): refused by the kernel outside the"
        );
        let _ = writeln!(w, "  writable trees and on protected paths (read-only mounts)  [mount view]");
        let _ =
            writeln!(w, "  terminals: a private /dev/pts; other sessions' terminals are not there  [mount namespace]");
    } else {
        let _ = writeln!(
            w,
            "  metadata (chmod, chown, timestamps, xattrs): every call judged and performed by the supervisor"
        );
        let _ =
            writeln!(w, "  on an object it opened itself; objects without an ordinary path are refused  [supervisor]");
        let _ = writeln!(w, "  terminals: only the command's own (stdin/stdout/stderr) and ptys it allocates; other");
        let _ = writeln!(w, "  sessions' terminals cannot be opened  [Landlock + supervisor]");
    }
    let _ = writeln!(w, "  inode flags (chattr, FS_IOC_SETFLAGS, file_setattr): refused  [seccomp]");
    let _ = writeln!(
        w,
        "  LIMIT: O_NONBLOCK opens of existing files for writing are left to the kernel, so one cannot write"
    );
    let _ = writeln!(w, "  a file made during the run directly in a directory listed above that way (meant for ttys).");
    let _ = writeln!(
        w,
        "  LIMIT: a file that already had several hard links at launch is written only where Landlock itself"
    );
    let _ = writeln!(w, "  allows it; in landlock mode its metadata not at all (another name may be protected), in");
    let _ = writeln!(w, "  namespace mode metadata calls are not trapped, so they change it through its name here.");
    let _ =
        writeln!(w, "  git repositories the command makes anywhere in the writable trees: after the run, with every");
    let _ =
        writeln!(w, "  process of the command gone, srt checks each directory holding HEAD and each .git directory");
    let _ = writeln!(w, "  (config, config.worktree, commondir, hooks) and moves what could make a host git run a");
    let _ = writeln!(w, "  program aside to <name>.srt-quarantined, saying so  [post-run audit]");
    let _ = writeln!(w, "  LIMIT: a host git run in such a repository while the command still runs is not covered.");
}

/// Where a protected path comes from, for the listing.
fn origin(p: &Path, settings_files: &[PathBuf]) -> &'static str {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if settings_files.iter().any(|s| s == p || crate::prepare::canonical(s) == p) {
        "(settings file)"
    } else if p == crate::journal::state_dir() || p == crate::prepare::canonical(&crate::journal::state_dir()) {
        "(srt's state)"
    } else if name == "HEAD" {
        "(bare repo)"
    } else if DANGEROUS_FILES.contains(&name) || DANGEROUS_DIRS.iter().any(|d| p.ends_with(d)) || name == ".git" {
        "(mandatory)"
    } else {
        "(denyWrite)"
    }
}

/// Missing names on the way to a protected path (`.claude` for `.claude/commands`,
/// `.github` for `.github/workflows`).
fn guarded_parents(p: &Prepared) -> Vec<PathBuf> {
    let pol = &p.policy;
    let mut out: Vec<PathBuf> = pol
        .deny_write
        .iter()
        .flat_map(|d| d.ancestors().skip(1).map(Path::to_path_buf).collect::<Vec<_>>())
        .filter(|a| a.symlink_metadata().is_err() && pol.in_write_tree(a) && pol.guard(a) == Guard::Open)
        .collect();
    out.sort();
    out.dedup();
    out
}

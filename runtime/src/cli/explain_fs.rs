//! The filesystem part of `srt explain`: every rule, every protected name (also those
//! protected only if they appear during the run) and the mechanism behind each.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::fs::policy::under;
use crate::git::guard::Guard;
use crate::launch::{NetworkMode, Prepared};

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
        let why = if pol.readable_as_writable.contains(a) {
            " (allowWrite: what the command writes it reads back)"
        } else {
            ""
        };
        let _ = writeln!(w, "    allow read  {}{why}", a.display());
    }
    shm(w, pol, ns);
    let floor = if ns { "Landlock + read-only mount view" } else { "Landlock" };
    let _ = writeln!(w, "  writes: only beneath these  [{floor}]");
    for d in &pol.write {
        let missing = match (d.symlink_metadata().is_ok() || *d == p.tmpdir, ns) {
            (true, _) => "",
            (false, true) => {
                " (missing: namespace mode's mount view cannot make it writable; create it before the run)"
            }
            (false, false) => " (missing: the command may make it)",
        };
        let _ = writeln!(w, "    allow write {}{missing}", d.display());
    }
    let exists_how =
        if ns { "exists: Landlock + mounted read-only" } else { "exists: Landlock; its metadata by the supervisor" };
    let missing_how = "missing: refused if it is made during the run [supervisor]";
    let _ = writeln!(w, "  protected: never written, created, replaced or removed, nor their metadata changed");
    let shm = Path::new(crate::fs::shm::DIR);
    for d in pol.deny_write.iter().filter(|d| d.symlink_metadata().is_ok() && d.as_path() != shm) {
        let o =
            if pol.second_names.iter().any(|(at, _)| at == d) { "(second name)" } else { origin(d, settings_files) };
        let _ = writeln!(w, "    {:<48} {:<16} {exists_how}", d.display(), o);
    }
    for (at, shows) in &pol.second_names {
        let _ =
            writeln!(w, "    second name: {} is {} mounted again; protected as it is", at.display(), shows.display());
    }
    for d in pol.deny_write.iter().filter(|d| d.symlink_metadata().is_err()) {
        let o = origin(d, settings_files);
        if o != "(mandatory)" {
            let _ = writeln!(w, "    {:<48} {:<16} {missing_how}", d.display(), o);
        }
    }
    missing_by_directory(w, pol, settings_files, missing_how);
    if !pol.tops.is_empty() {
        let tops: Vec<String> = pol.tops.iter().map(|t| t.display().to_string()).collect();
        let _ = writeln!(
            w,
            "  at the top of {} (mandatory, whether or not they exist; refused if made  [supervisor]):",
            tops.join(", ")
        );
        let names: Vec<&str> = crate::fs::protected_names::PROJECT.iter().map(|e| e.path).collect();
        wrap(w, &names);
    }
    if !pol.dot_tops.is_empty() {
        let tops: Vec<String> = pol.dot_tops.iter().map(|t| t.display().to_string()).collect();
        let _ = writeln!(
            w,
            "  new dot-entries at the top of {}: refused unless named here as data, a cache or the",
            tops.join(", ")
        );
        let _ = writeln!(
            w,
            "  project's own build, or in allowWrite; below a dot-directory not named here nothing is written  [supervisor]:"
        );
        let mut names: Vec<&str> = crate::fs::protected_names::PROJECT_DOT_ALLOW.iter().map(|d| d.name).collect();
        names.extend(
            crate::fs::protected_names::PROJECT_NOT_PROTECTED
                .iter()
                .filter(|d| d.path.starts_with('.'))
                .filter_map(|d| d.path.split('/').next()),
        );
        names.sort_unstable();
        names.dedup();
        wrap(w, &names);
        for f in &pol.top_dot_files {
            let _ = writeln!(w, "    {} existed at launch: stays writable", f.display());
        }
    }
    // said only where a writable tree holds the home, lies below it, or holds an XDG base
    // the rules follow: elsewhere nothing they name can be written
    let reached = |h: &crate::fs::policy::HomePolicy| {
        pol.write.iter().any(|t| under(t, &h.home) || under(&h.home, t)) || !h.xdg.is_empty()
    };
    if let Some(h) = pol.home.as_ref().filter(|h| reached(h)) {
        let on: Vec<&str> =
            crate::fs::protected_names::HOME_ALLOW.iter().filter(|a| a.default).map(|a| a.path).collect();
        let how = if pol.in_write_tree(&h.home) { "lies in a writable tree" } else { "holds writable trees" };
        let _ = writeln!(w, "  $HOME ({}) {how}: its dot-entries, and the files home tools run", h.home.display());
        let _ = writeln!(
            w,
            "  (shell rc, git, ssh, PATH directories, python .pth, systemd units, editors, agents' configs),"
        );
        let _ = writeln!(w, "  are protected; writable there: {}", on.join(", "));
        if !h.allow.is_empty() {
            let _ = writeln!(w, "  and, named in allowWrite: {}", h.allow.join(", "));
        }
        let _ = writeln!(w, "  (docs/delayed-execution.md lists each with its source)");
    }
    for m in &pol.mediated {
        let _ = writeln!(
            w,
            "  {}: too big for the launch's look ({} entries or {} µs of CPU in the working directory's tree, {} or {} µs in the others, {} at a tree's top): no",
            m.display(),
            crate::fs::mandatory::BUDGET,
            crate::fs::mandatory::SEARCH_CPU.as_micros(),
            crate::fs::mandatory::OTHER_BUDGET,
            crate::fs::mandatory::OTHER_SEARCH_CPU.as_micros(),
            crate::fs::mandatory::SPLIT_MAX
        );
        let _ = writeln!(
            w,
            "    Landlock write rule; the supervisor judges each write there by the protected names and the git"
        );
        let _ = writeln!(w, "    directories it meets (same rules, slower)  [supervisor]");
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
    let _ = writeln!(
        w,
        "  directories, symlinks and FIFOs: made and moved only by the supervisor (no Landlock rule grants"
    );
    let _ =
        writeln!(w, "  them), which writes each to the run's journal first; links and FIFOs are refused inside git");
    let _ = writeln!(w, "  directories  [supervisor]. Below a directory handed out from the pool the kernel makes");
    let _ =
        writeln!(w, "  directories too: the hand-out is journaled as moved in, and the check walks that whole tree");
    let _ =
        writeln!(w, "  files and sockets: made by the kernel only below directories made during the run (and TMPDIR);");
    let _ =
        writeln!(w, "  in directories that existed at launch the supervisor makes, links and moves in every file, and");
    let _ = writeln!(
        w,
        "  journals the directory for names git reads (HEAD, objects, refs, commondir, config, .git)  [supervisor]"
    );
    let _ =
        writeln!(w, "  after the run, with every process of the command gone, srt checks what the journal names: each");
    let _ = writeln!(
        w,
        "  directory made and the one it was made in, each directory moved or handed out (with what it holds),"
    );
    let _ = writeln!(
        w,
        "  each link, and the guarded git directories; a git directory's config, config.worktree, commondir, hooks or"
    );
    let _ = writeln!(
        w,
        "  links that could make a host git run a program are moved aside to <name>.srt-quarantined, saying"
    );
    let _ =
        writeln!(w, "  so. It costs what the command changed, never the size of the trees  [journal + post-run check]");
    let _ = writeln!(w, "  LIMIT: a host git run in such a repository while the command still runs is not covered.");
    let _ =
        writeln!(w, "  LIMIT: a repository that existed before the run deeper than mandatoryDenySearchDepth (or below");
    let _ = writeln!(w, "  node_modules) is not guarded: its files are written as any other there (raise the depth).");
}

fn wrap(w: &mut String, names: &[&str]) {
    let mut line = String::from("      ");
    for n in names {
        if line.len() + n.len() > 96 {
            let _ = writeln!(w, "{}", line.trim_end_matches(' '));
            line = String::from("      ");
        }
        line.push_str(n);
        line.push(' ');
    }
    let _ = writeln!(w, "{}", line.trim_end_matches(' '));
}

/// The protected names that do not exist, one line per directory.
fn missing_by_directory(w: &mut String, pol: &crate::fs::policy::FsPolicy, settings_files: &[PathBuf], how: &str) {
    let mut by_dir: std::collections::BTreeMap<PathBuf, Vec<String>> = std::collections::BTreeMap::new();
    let missing_mandatory = |d: &&PathBuf| d.symlink_metadata().is_err() && origin(d, settings_files) == "(mandatory)";
    for d in pol.deny_write.iter().filter(missing_mandatory) {
        let (Some(parent), Some(name)) = (d.parent(), d.file_name()) else { continue };
        // names of two components (.claude/commands) under the directory they start in
        let (dir, shown) = match parent.symlink_metadata() {
            Ok(_) => (parent.to_path_buf(), name.to_string_lossy().into_owned()),
            Err(_) => match parent.parent() {
                Some(pp) => (
                    pp.to_path_buf(),
                    format!("{}/{}", parent.file_name().unwrap_or_default().to_string_lossy(), name.to_string_lossy()),
                ),
                None => continue,
            },
        };
        by_dir.entry(dir).or_default().push(shown);
    }
    for (dir, names) in by_dir {
        let _ = writeln!(w, "    in {} (mandatory; {how}):", dir.display());
        let mut line = String::from("      ");
        for n in names {
            if line.len() + n.len() > 96 {
                let _ = writeln!(w, "{}", line.trim_end_matches(' '));
                line = String::from("      ");
            }
            line.push_str(&n);
            line.push(' ');
        }
        let _ = writeln!(w, "{}", line.trim_end_matches(' '));
    }
}

/// Where a protected path comes from, for the listing.
fn origin(p: &Path, settings_files: &[PathBuf]) -> &'static str {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if settings_files.iter().any(|s| s == p || crate::fs::resolve::canonical(s) == p) {
        "(settings file)"
    } else if crate::check::journal::state_dir_candidates()
        .iter()
        .any(|s| s == p || crate::fs::resolve::canonical(s) == p)
    {
        "(srt's state)"
    } else if name == "HEAD" {
        "(bare repo)"
    } else if name == ".git" || crate::fs::protected_names::PROJECT.iter().any(|e| p.ends_with(e.path)) {
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

/// `/dev/shm`: the run's own in both modes ([`crate::fs::shm`]).
fn shm(w: &mut String, pol: &crate::fs::policy::FsPolicy, ns: bool) {
    if !pol.deny_write.iter().any(|d| d.as_path() == Path::new(crate::fs::shm::DIR)) {
        return;
    }
    if ns {
        let _ = writeln!(w, "  /dev/shm: the run's own, a fresh tmpfs in the sandbox's mount namespace, gone with it  [mount + Landlock]");
    } else {
        let _ = writeln!(
            w,
            "  /dev/shm: the host's, where the command makes new entries and opens, renames and removes only"
        );
        let _ = writeln!(
            w,
            "  those (shm_open, sem_open, mkstemp); other programs' stay out of reach; what the run made is"
        );
        let _ = writeln!(w, "  removed when it ends  [supervisor + journal]");
        let _ = writeln!(
            w,
            "  LIMIT: a read-only open by name of the run's own entry is refused (opening for writing works);"
        );
        let _ = writeln!(w, "  while the run lasts, the host's programs of the same uid see its entries");
    }
    for p in &pol.shm_settings_ignored {
        let _ = writeln!(w, "    set aside: {} (settings cannot open the host's /dev/shm)", p.display());
    }
}

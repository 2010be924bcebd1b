//! From validated settings to a canonical [`FsPolicy`]: `~` and relative paths resolved,
//! symlinks resolved (a deny on a link protects the link and its target), globs expanded
//! against the disk, mandatory denies, git directories, the settings files and the private
//! TMPDIR added.

use std::path::{Path, PathBuf};

use settings_schema::paths::{resolve, ResolvedEntry};
use settings_schema::{PathEntry, Settings};

use crate::error::LaunchError;
use crate::fs::mandatory::mandatory_denies;
use crate::fs::policy::{under, FsPolicy};
use crate::fs::resolve::{canonical, expand_glob, push_with_link};

/// Devices every command may write, as srt's built-in write paths. `/dev/pts` only in
/// namespace mode, where it is a private instance; in landlock mode only the command's own
/// terminal is (see [`Context::own_ttys`]).
const DEVICES: &[&str] =
    &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"];

/// Bound on directories visited below git directories' `modules/` and `worktrees/`.
const GIT_WALK_MAX: usize = 5_000;

pub struct Context<'a> {
    pub cwd: &'a Path,
    pub home: Option<&'a Path>,
    pub tmpdir: &'a Path,
    /// Settings files that decide later runs (the one in use, `$SRT_SETTINGS_PATH`,
    /// `~/.srt-settings.json`): never writable, whatever `allowWrite` says.
    pub settings_files: &'a [PathBuf],
    /// srt's own paths (its state directory with the run journals, [`crate::check::journal`]; the
    /// run's directory pool, [`crate::fs::pool`]): never writable by the command.
    pub own: &'a [PathBuf],
    /// Landlock mode: the terminals on the command's stdin/stdout/stderr, the only ones
    /// under `/dev/pts` it may open (other sessions' terminals could be read or written).
    /// `None` in namespace mode, where `/dev/pts` is a private instance.
    pub own_ttys: Option<&'a [PathBuf]>,
}

pub fn fs_policy(s: &Settings, cx: &Context<'_>) -> Result<FsPolicy, LaunchError> {
    let fs = &s.filesystem;
    let mut policy = FsPolicy {
        deny_read: expand_all(&fs.deny_read, cx, true),
        allow_read: expand_all(fs.allow_read.as_deref().unwrap_or(&[]), cx, true),
        listable: expand_all(fs.listable.as_deref().unwrap_or(&[]), cx, true),
        write: expand_all(&fs.allow_write, cx, false),
        allow_git_config: fs.allow_git_config.unwrap_or(false),
        ..FsPolicy::default()
    };
    check_planted_symlinks(&fs.allow_write, "allowWrite", &policy.write, cx)?;
    check_planted_symlinks(fs.allow_read.as_deref().unwrap_or(&[]), "allowRead", &policy.write, cx)?;
    check_links_into_denied(&fs.allow_write, "allowWrite", &policy, cx)?;
    check_links_into_denied(fs.allow_read.as_deref().unwrap_or(&[]), "allowRead", &policy, cx)?;
    for e in &fs.deny_write {
        if let ResolvedEntry::Path(p) = resolve(e, cx.cwd, cx.home, false) {
            push_with_link(&mut policy.deny_write, &p);
        }
    }
    let user_denied = policy.deny_write.clone();
    for p in cx.settings_files.iter().chain(cx.own) {
        push_with_link(&mut policy.deny_write, p);
    }
    // Landlock mode (the only one with `own_ttys`) shares the host's /proc: a write there
    // reaches other processes (srt's and its auditor's oom_score_adj and autogroup nice,
    // whatever allowWrite says about `/`). Namespace mode mounts a /proc of its own.
    if cx.own_ttys.is_some() {
        policy.deny_write.push(PathBuf::from("/proc"));
    }
    // The working directory is canonical (getcwd) and the search walks real directories,
    // so these need no realpath unless the entry itself (or `.claude`) is a symlink.
    let cwd = canonical(cx.cwd);
    // the writable trees as the settings give them: TMPDIR and devices come later
    // a root missing at launch is a top all the same: the command may make it (landlock mode)
    let roots: Vec<PathBuf> =
        policy.write.iter().filter(|w| w.is_dir() || w.symlink_metadata().is_err()).cloned().collect();
    let mandatory = mandatory_denies(&cwd, &roots, s.search_depth());
    policy.mediated = mandatory.mediated;
    policy.tops = mandatory.tops;
    let top_dots = mandatory.top_dots;

    for p in mandatory.deny {
        let parent_plain = |d: &Path| d == cwd || d.symlink_metadata().map_or(true, |m| !m.file_type().is_symlink());
        let plain =
            p.symlink_metadata().map_or(true, |m| !m.file_type().is_symlink()) && p.parent().is_none_or(parent_plain);
        if plain {
            policy.deny_write.push(p);
        } else {
            push_with_link(&mut policy.deny_write, &p);
        }
    }
    policy.git_dirs = mandatory.git_dirs;
    for p in hooks_and_worktrees(&policy.git_dirs, cx.home) {
        if policy.in_write_tree(&p) {
            policy.deny_write.push(p);
        }
    }
    // deepest first: a path below a nested repository is judged by that repository's rules
    policy.git_dirs.sort_by_key(|g| std::cmp::Reverse(g.as_os_str().len()));
    policy.git_dirs.dedup();
    policy.extra_bounds = git_bounds(&policy.git_dirs);
    // the password database's home, read at most once a launch (both rules below may ask)
    let passwd_home: std::cell::OnceCell<Option<PathBuf>> = std::cell::OnceCell::new();
    let passwd = || passwd_home.get_or_init(|| crate::paths::passwd_home().map(|h| canonical(&h))).clone();
    own_home_writable_elsewhere(&policy, cx.home, passwd())?;
    let mut env_named_elsewhere = Vec::new();
    if let Some(home) = cx.home.filter(|h| h.is_absolute()).map(canonical) {
        let allow_write = expand_all(&s.filesystem.allow_write, cx, false);
        env_named_elsewhere = crate::fs::home_rules::home_rules(&mut policy, &home, &allow_write, cx.cwd)?;
    }
    // a protected directory in a home that is also a tree's top (`~/.claude`, a project name
    // too) is the home rules' to judge: they protect it as well, but for the allow-list's
    // entries inside it (`~/.claude/debug`), which a write-denial of the whole would hide
    if let Some(h) = policy.home.as_mut() {
        use crate::fs::protected_names::ALLOW_OVERLAPS;
        let overlap = |rel: &str| ALLOW_OVERLAPS.iter().any(|(_, protected, _)| rel == *protected);
        let home = h.home.clone();
        let mandatory = |d: &PathBuf| !user_denied.contains(d);
        h.deny.retain(|d| !overlap(d) || !mandatory(&home.join(d)));
        policy
            .deny_write
            .retain(|d| !mandatory(d) || !d.strip_prefix(&home).ok().and_then(Path::to_str).is_some_and(overlap));
    }
    top_dot_entries(&mut policy, cx.home.filter(|h| h.is_absolute()).map(canonical).as_deref(), &top_dots, &passwd);
    // after every denial and the home rules, before TMPDIR (new, so no mount lies in it)
    let mounts = crate::fs::mount_aliases::read();
    if let Some(mounts) = &mounts {
        let known = policy.git_dirs.clone();
        crate::fs::mount_aliases::protect_second_names(&mut policy, mounts, &env_named_elsewhere);
        let second: Vec<PathBuf> = policy.git_dirs.iter().filter(|g| !known.contains(g)).cloned().collect();
        policy.extra_bounds.extend(git_bounds(&second));
    }
    policy.write.push(cx.tmpdir.to_path_buf());
    // Missing devices cost nothing: the ruleset builder skips paths that do not open.
    // Canonical, because some containers make /dev/ptmx a symlink to pts/ptmx.
    let devices: Vec<PathBuf> = DEVICES
        .iter()
        .map(|d| canonical(Path::new(d)))
        .chain(match cx.own_ttys {
            None => vec![PathBuf::from("/dev/pts")],
            Some(ttys) => ttys.to_vec(),
        })
        .collect();
    if !policy.deny_read.iter().any(|d| d.as_os_str() == "/") {
        policy.deny_read.push(PathBuf::from("/dev"));
        policy.listable.push(PathBuf::from("/dev"));
        policy.allow_read.extend(devices.iter().cloned());
    }
    policy.write.extend(devices);
    shm_is_the_runs_own(&mut policy, mounts.as_deref().unwrap_or(&[]));
    // What the command may write it may read back, as in srt 0.0.83, also below a denyRead
    // entry (`denyRead: ["~"]` with `allowWrite: ["~/.npm"]`: npm reads the cache it wrote).
    // A write root counts as an allowRead entry: a deeper denyRead still wins inside it.
    policy.readable_as_writable = policy.write.iter().filter(|w| !policy.can_read(w)).cloned().collect();
    policy.allow_read.extend(policy.readable_as_writable.iter().cloned());
    for list in [
        &mut policy.deny_read,
        &mut policy.allow_read,
        &mut policy.write,
        &mut policy.deny_write,
        &mut policy.extra_bounds,
    ] {
        list.sort();
        list.dedup();
    }
    Ok(policy)
}

/// `/dev/shm` is the run's own ([`crate::fs::shm`]): settings that would open the host's,
/// where other programs keep their shared memory, are set aside (and `srt explain` names
/// them), and it is denied to Landlock whatever tree around it the settings open (a
/// `denyRead` deeper than any `allowRead` or writable root that holds it), so that
/// only the run's own `/dev/shm` is reachable (namespace mode's tmpfs has a rule of its
/// own; landlock mode's entries are the supervisor's).
fn shm_is_the_runs_own(policy: &mut FsPolicy, mounts: &[crate::fs::mount_aliases::Mount]) {
    let shm = Path::new(crate::fs::shm::DIR);
    if !shm.is_dir() {
        return;
    }
    // and every other name a mount gives it (the same tmpfs mounted again elsewhere)
    for a in crate::fs::mount_aliases::aliases(mounts, shm) {
        if a.at != shm {
            policy.deny_read.push(a.at.clone());
            policy.deny_write.push(a.at.clone());
            policy.second_names.push((a.at, shm.join(a.stands_for)));
        }
    }
    let named = |list: &mut Vec<PathBuf>, out: &mut Vec<PathBuf>| {
        out.extend(list.iter().filter(|p| under(p, shm)).cloned());
        list.retain(|p| !under(p, shm));
    };
    let mut ignored = Vec::new();
    named(&mut policy.write, &mut ignored);
    named(&mut policy.allow_read, &mut ignored);
    ignored.sort();
    ignored.dedup();
    policy.shm_settings_ignored = ignored;
    // also under `denyRead: ["/"]`: an allowRead of `/dev` (or `/`) would otherwise re-allow it
    policy.deny_read.push(shm.to_path_buf());
    policy.deny_write.push(shm.to_path_buf());
}

/// What the git configs known at launch make host git run or write elsewhere: a
/// `core.hooksPath` is a hooks directory like `.git/hooks` (husky's `.husky/_`), protected
/// whole; a `core.worktree` is a work tree whose top gets the mandatory names. Read from
/// the guarded git directories' configs and the user's global ones.
fn hooks_and_worktrees(git_dirs: &[PathBuf], home: Option<&Path>) -> Vec<PathBuf> {
    let xdg = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from).filter(|p| p.is_absolute());
    let globals: Vec<PathBuf> = [
        Some(PathBuf::from("/etc/gitconfig")),
        home.map(|h| h.join(".gitconfig")),
        xdg.or_else(|| home.map(|h| h.join(".config"))).map(|c| c.join("git/config")),
    ]
    .into_iter()
    .flatten()
    .collect();
    let expand = |v: &str, base: &Path| -> PathBuf {
        match (v.strip_prefix("~/"), home) {
            (Some(rest), Some(h)) => h.join(rest),
            _ => base.join(v),
        }
    };
    let mut out = Vec::new();
    let mut look = |config: &Path, base: &Path| {
        let Ok(text) = std::fs::read(config) else { return };
        let here = config.parent().unwrap_or(base);
        for (sec, _, key, v) in crate::git::config::entries(&text) {
            match (sec.as_str(), key.as_str()) {
                ("core", "hookspath") => out.push(canonical(&expand(&v, base))),
                // more config, attributes that pick drivers, templates a later `git init` copies
                ("include" | "includeif", "path") | ("core", "attributesfile") | ("init", "templatedir") => {
                    out.push(canonical(&expand(&v, here)))
                }
                ("core", "worktree") => {
                    // relative to the git directory, which holds the config
                    let top = canonical(&expand(&v, here));
                    out.extend(
                        crate::fs::protected_names::PROJECT
                            .iter()
                            .filter(|e| !e.path.contains('*'))
                            .map(|e| top.join(e.path)),
                    );
                }
                _ => {}
            }
        }
    };
    for g in git_dirs {
        // relative hook paths are taken from the top of the work tree (`.git`'s directory)
        let top = if g.file_name() == Some(std::ffi::OsStr::new(".git")) { g.parent().unwrap_or(g) } else { g };
        look(&g.join("config"), top);
    }
    for c in &globals {
        look(c, home.unwrap_or(Path::new("/")));
    }
    out
}

/// Where the Landlock plan must split rights for git directories: their guarded names
/// (existing or not), and the same names in every existing directory below `modules/` and
/// `worktrees/` (submodules' and linked worktrees' git directories, or the way to them).
fn git_bounds(git_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for g in git_dirs {
        out.extend(crate::git::guard::PLAN_BOUNDS.iter().map(|b| g.join(b)));
        let mut budget = GIT_WALK_MAX;
        let mut stack: Vec<PathBuf> = ["modules", "worktrees"].iter().map(|n| g.join(n)).collect();
        while let Some(dir) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&dir) else { continue };
            for e in rd.flatten() {
                if !e.file_type().is_ok_and(|t| t.is_dir()) || !crate::git::guard::walk_into(&e.file_name()) {
                    continue;
                }
                if budget == 0 {
                    crate::warn!(
                        "stopped looking for nested git directories below {} after {GIT_WALK_MAX}",
                        g.display()
                    );
                    return out;
                }
                budget -= 1;
                let d = e.path();
                out.extend(crate::git::guard::NESTED_PLAN_BOUNDS.iter().map(|b| d.join(b)));
                stack.push(d);
            }
        }
    }
    out
}

/// The tops' dot-entries ([`FsPolicy::dot_tops`]): each top but the home and the system's
/// shared scratch directories fails closed for new ones; an unnamed dot-directory that
/// exists is write-denied whole (the Landlock plan and namespace mode's mounts then refuse
/// it natively), an unnamed dot-file stays writable, but in the user's own home when
/// `$HOME` names another (its `.zshenv` is no project file). `listed`: the dot-entries the
/// launch's search found at the tops it listed; a top too big to list is judged whole by
/// the supervisor (`mediated`), where the rule refuses what lies below every unnamed one.
fn top_dot_entries(
    policy: &mut FsPolicy,
    home: Option<&Path>,
    listed: &[(PathBuf, bool)],
    passwd_home: &dyn Fn() -> Option<PathBuf>,
) {
    for t in policy.tops.clone() {
        if Some(t.as_path()) == home || shared_scratch(&t) || t.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
            continue;
        }
        policy.dot_tops.push(t.clone());
        for (p, is_dir) in listed.iter().filter(|(p, _)| p.parent() == Some(t.as_path())) {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if crate::fs::protected_names::top_dot_allowed(name, None) {
                continue;
            }
            if *is_dir || passwd_home().as_ref() == Some(&t) {
                policy.deny_write.push(p.clone());
            } else {
                policy.top_dot_files.push(p.clone());
            }
        }
    }
}

/// The user's own home (from the password database) may be written while `$HOME` names
/// another place: the home rules would protect the wrong one, so srt refuses to run.
fn own_home_writable_elsewhere(
    policy: &FsPolicy,
    home: Option<&Path>,
    passwd: Option<PathBuf>,
) -> Result<(), LaunchError> {
    let Some(passwd) = passwd else { return Ok(()) };
    let home = home.map(canonical);
    // a home that does not exist (`/nonexistent`, as Debian gives nobody) holds nothing
    if home.as_deref() == Some(passwd.as_path()) || !policy.in_write_tree(&passwd) || !passwd.is_dir() {
        return Ok(());
    }
    Err(LaunchError::OtherHome { passwd, home: home.unwrap_or_default() })
}

/// `/tmp` or `/var/tmp`, sticky and writable by all: shared scratch space, not a project,
/// whose top other programs fill with dot-entries (`.X11-unix`, `.X0-lock`). Decided by
/// what the command cannot change (which directory it is), not only by its mode, which a
/// command may set on its own project (`chmod 1777 .`).
fn shared_scratch(t: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let system = t == Path::new("/tmp") || t == Path::new("/var/tmp");
    system && std::fs::metadata(t).is_ok_and(|m| m.permissions().mode() & 0o1002 == 0o1002)
}

/// Existing paths the policy protects: write-denied ones and git directories' guarded
/// files and hooks directories. Namespace mode mounts these read-only; the supervisor
/// refuses second names of the files among them.
pub fn protected_paths(pol: &FsPolicy) -> Vec<PathBuf> {
    let guarded = pol.extra_bounds.iter().filter(|b| pol.guard(b) != crate::git::guard::Guard::Open);
    let mut out: Vec<PathBuf> =
        pol.deny_write.iter().chain(guarded).filter(|p| p.symlink_metadata().is_ok()).cloned().collect();
    out.sort();
    out.dedup();
    out
}

/// An `allowWrite` (or `allowRead`) entry that reaches its target through a symlink lying
/// inside a writable tree may have been redirected by an earlier sandboxed run (`ln -sfn
/// ~/.ssh build`): refuse it rather than grant whatever the link points at now.
fn check_planted_symlinks(
    entries: &[PathEntry],
    key: &'static str,
    write: &[PathBuf],
    cx: &Context<'_>,
) -> Result<(), LaunchError> {
    for e in entries {
        let ResolvedEntry::Path(p) = resolve(e, cx.cwd, cx.home, false) else { continue };
        let mut cur = PathBuf::new();
        for c in p.components() {
            cur.push(c);
            if !cur.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
                continue;
            }
            let link_at = cur.parent().map(canonical).unwrap_or_default();
            if let Some(tree) = write.iter().find(|w| crate::fs::policy::under(&link_at, w)) {
                return Err(LaunchError::PlantedSymlink { key, entry: p.clone(), link: cur, tree: tree.clone() });
            }
        }
    }
    Ok(())
}

/// An `allowWrite` or `allowRead` entry that reaches, through a symlink, a place the settings'
/// `denyRead` covers is refused: a command of another run, whose settings let it write
/// where the link is, could have planted it to open for this run what these settings keep
/// unreadable (the entry's own tree reads back, below a `denyRead`, since write implies
/// read). Checked before any of srt's own additions, against the settings' lists.
fn check_links_into_denied(
    entries: &[PathEntry],
    key: &'static str,
    policy: &FsPolicy,
    cx: &Context<'_>,
) -> Result<(), LaunchError> {
    for e in entries {
        let ResolvedEntry::Path(p) = resolve(e, cx.cwd, cx.home, false) else { continue };
        let target = canonical(&p);
        if target == p || policy.can_read(&target) {
            continue;
        }
        let mut cur = PathBuf::new();
        for c in p.components() {
            cur.push(c);
            if cur.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
                let denied = policy
                    .deny_read
                    .iter()
                    .filter(|d| under(&target, d))
                    .max_by_key(|d| d.as_os_str().len())
                    .cloned()
                    .unwrap_or_default();
                let why = crate::error::LinkIntoDenied { key, entry: p.clone(), link: cur, target, denied };
                return Err(LaunchError::SymlinkIntoDenied(Box::new(why)));
            }
        }
    }
    Ok(())
}

/// Whether `dir` lies inside one of the settings' `allowWrite` trees (before any other
/// rule is applied): cheap, for deciding on srt's own set-up before the policy is built.
pub fn in_allow_write(s: &Settings, cwd: &Path, home: Option<&Path>, dir: &Path) -> bool {
    s.filesystem.allow_write.iter().any(|e| match resolve(e, cwd, home, false) {
        ResolvedEntry::Path(p) => dir.starts_with(canonical(&p)),
        ResolvedEntry::Glob(_) => false,
    })
}

fn expand_all(entries: &[PathEntry], cx: &Context<'_>, globs: bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in entries {
        match resolve(e, cx.cwd, cx.home, globs) {
            ResolvedEntry::Path(p) => out.push(canonical(&p)),
            ResolvedEntry::Glob(g) => {
                out.extend(expand_glob(&g).iter().map(|p| canonical(p)));
                // srt applies a glob string that also names an existing path both ways
                if Path::new(&g).symlink_metadata().is_ok() {
                    out.push(canonical(Path::new(&g)));
                }
            }
        }
    }
    out
}

//! From validated settings to a canonical [`FsPolicy`]: `~` and relative paths resolved,
//! symlinks resolved (a deny on a link protects the link and its target), globs expanded
//! against the disk, mandatory denies, git directories, the settings files and the private
//! TMPDIR added.

use std::path::{Path, PathBuf};

use settings_schema::paths::{resolve, ResolvedEntry};
use settings_schema::{PathEntry, Settings};

use crate::error::LaunchError;
use crate::fs::mandatory::mandatory_denies;
use crate::fs::policy::FsPolicy;
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
    for e in &fs.deny_write {
        if let ResolvedEntry::Path(p) = resolve(e, cx.cwd, cx.home, false) {
            push_with_link(&mut policy.deny_write, &p);
        }
    }
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
    let roots: Vec<PathBuf> = policy.write.iter().filter(|w| w.is_dir()).cloned().collect();
    let mandatory = mandatory_denies(&cwd, &roots, s.search_depth());
    policy.mediated = mandatory.mediated;
    policy.tops = mandatory.tops;

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
    if let Some(home) = cx.home.filter(|h| h.is_absolute()).map(canonical) {
        home_rules(&mut policy, &home, s, cx)?;
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

/// The home rules ([`crate::fs::protected_names`]): the researched home entries are protected
/// wherever they fall in a writable tree (in `$HOME` and where their XDG variables move
/// them), and so is what the variables of [`crate::fs::protected_names::ENV_NAMED`] name;
/// when `$HOME` itself lies in a writable tree its dot-entries are protected too, unless
/// the home allow-list or an `allowWrite` entry below `$HOME` opens them. The decision is
/// [`FsPolicy::guard`]'s; here the Landlock plan gets the paths where rights change.
fn home_rules(policy: &mut FsPolicy, home: &Path, s: &Settings, cx: &Context<'_>) -> Result<(), LaunchError> {
    use crate::fs::protected_names::{
        check_user_allow, env_entries, xdg_location, ENV_LISTS, ENV_NAMED, HOME, HOME_ALLOW,
    };
    let below = |list: &[PathBuf]| -> Vec<String> {
        list.iter()
            .filter(|p| *p != home)
            .filter_map(|p| p.strip_prefix(home).ok())
            .filter_map(|r| r.to_str().map(str::to_string))
            .collect()
    };
    let allow = below(&expand_all(&s.filesystem.allow_write, cx, false));
    for a in &allow {
        if let Err(e) = check_user_allow(a) {
            return Err(LaunchError::HomeAllow { entry: format!("~/{a}"), path: e.path, runs: e.runs, doc: e.source });
        }
    }
    let deny = below(&policy.deny_write);
    let var = |v: &str| std::env::var_os(v);
    let mut bounds: Vec<PathBuf> = Vec::new();
    // a writable home is split around each of its entries; one with more than the plan
    // may split around (or that cannot be listed) is judged whole by the supervisor, never
    // left with entries the rules do not know
    if policy.in_write_tree(home) {
        match listing_bounds(home) {
            Some(entries) => bounds.extend(entries),
            None => policy.mediated.push(home.to_path_buf()),
        }
    }
    // every place this loop names lies under the home or an XDG base; where no writable
    // tree holds one of those or lies below it, nothing it names can be written and the
    // loop, a third of the policy's work, has nothing to add
    let bases = std::iter::once(Some(home.to_path_buf())).chain(
        XDG_BASES.iter().filter_map(|(v, _)| var(v).map(PathBuf::from).filter(|b| b.is_absolute())).map(normalised),
    );
    let bases: Vec<Option<PathBuf>> = bases.collect();
    if names_may_be_written(&bases, &policy.write) {
        for e in
            HOME.iter().map(|e| e.path).chain(HOME_ALLOW.iter().map(|a| a.path)).chain(allow.iter().map(String::as_str))
        {
            for at in [home.join(e), xdg_location(e, home, var)] {
                if !e.contains('*') {
                    bounds.push(at);
                    continue;
                }
                // only where the literal part could be written: a wildcard costs a listing
                let literal: PathBuf =
                    at.components().take_while(|c| !c.as_os_str().to_string_lossy().contains('*')).collect();
                if policy.in_write_tree(&literal) || policy.write.iter().any(|w| crate::fs::policy::under(w, &literal))
                {
                    bounds.extend(expand_components(&literal, at.strip_prefix(&literal).unwrap_or(Path::new(""))));
                }
            }
        }
    }
    let bounds: Vec<PathBuf> = bounds.into_iter().filter(|b| policy.in_write_tree(b)).collect();
    policy.extra_bounds.extend(bounds);
    // what the environment names: protected whole where it may be written, except list
    // entries inside the working directory's tree (a project's own node_modules/.bin,
    // .venv/bin or src on PYTHONPATH: its build writes them, as it writes the rest of the
    // project)
    let cwd = canonical(cx.cwd);
    for (name, _) in ENV_NAMED.iter().filter(|(n, _)| !n.starts_with("XDG_")) {
        let Some(v) = std::env::var_os(name) else { continue };
        let list = ENV_LISTS.iter().any(|(n, _)| n == name);
        for p in env_entries(name, &v).into_iter().filter(|p| p.is_absolute()).map(|p| canonical(&p)) {
            // a PATH directory `<prefix>/bin` runs code from its installation prefix too
            // (conda's python loads `lib/`, gcloud's rc lines source the prefix's files):
            // the prefix is protected whole, but for a home, a writable tree's top, a
            // directory holding the project, and a home's dot-entries (`~/.local`: the home
            // rules and their allow-list decide there)
            let dot_in_home = |pre: &Path| pre.strip_prefix(home).is_ok_and(crate::fs::protected_names::is_dot_entry);
            let prefix = p
                .parent()
                .filter(|_| *name == "PATH" && p.file_name().is_some_and(|n| n == "bin" || n == "sbin"))
                .filter(|pre| *pre != home && !crate::fs::policy::under(&cwd, pre) && !dot_in_home(pre))
                .map(Path::to_path_buf);
            for p in std::iter::once(p).chain(prefix) {
                let project_own = list && crate::fs::policy::under(&p, &cwd);
                let root = policy.write.iter().any(|w| crate::fs::policy::under(w, &p));
                if policy.in_write_tree(&p) && !project_own && !root {
                    policy.deny_write.push(p);
                }
            }
        }
    }
    // XDG bases elsewhere carry the home rules of the place they stand for; one that holds
    // the working directory would take the whole project for a config directory (its
    // researched entries, above, still hold)
    let mut xdg = Vec::new();
    for (var, stands_for) in XDG_BASES {
        let Some(base) = var_abs(var).map(|b| canonical(&b)) else { continue };
        if base == home.join(stands_for) || crate::fs::policy::under(&cwd, &base) || !policy.in_write_tree(&base) {
            continue;
        }
        match listing_bounds(&base) {
            Some(entries) => policy.extra_bounds.extend(entries),
            None => policy.mediated.push(base.clone()),
        }
        xdg.push((base, *stands_for));
    }
    policy.home = Some(crate::fs::policy::HomePolicy { home: home.to_path_buf(), allow, deny, xdg });
    Ok(())
}

/// `p` with its components collected, or `None` when that changes it (a repeated or
/// trailing `/`, a `.`): [`crate::paths::under`] compares bytes of normalised paths, and
/// such a path is taken as possibly writable rather than reasoned about.
fn normalised(p: PathBuf) -> Option<PathBuf> {
    let n: PathBuf = p.components().collect();
    (n.as_os_str() == p.as_os_str()).then_some(n)
}

/// Whether a path below one of `bases` (`None`: not normalised, see [`normalised`]) can
/// be in one of the writable trees `write`: one of them holds the base or lies below it.
fn names_may_be_written(bases: &[Option<PathBuf>], write: &[PathBuf]) -> bool {
    use crate::fs::policy::under;
    bases.iter().any(|b| b.as_ref().is_none_or(|b| write.iter().any(|w| under(b, w) || under(w, b))))
}

/// The XDG base variables and the home-relative places they stand for.
const XDG_BASES: &[(&str, &str)] = &[
    ("XDG_CONFIG_HOME", ".config"),
    ("XDG_DATA_HOME", ".local/share"),
    ("XDG_STATE_HOME", ".local/state"),
    ("XDG_CACHE_HOME", ".cache"),
];

/// An absolute path from the variable `var` (the XDG specification ignores relative ones).
fn var_abs(var: &str) -> Option<PathBuf> {
    std::env::var_os(var).map(PathBuf::from).filter(|p| p.is_absolute())
}

/// The entries of `dir`, if it can be listed and has no more than the Landlock plan may
/// split around (`LISTING_MAX * 4`).
fn listing_bounds(dir: &Path) -> Option<Vec<PathBuf>> {
    let max = crate::fs::mandatory::LISTING_MAX * 4;
    let entries: Vec<PathBuf> = std::fs::read_dir(dir).ok()?.flatten().take(max + 1).map(|e| e.path()).collect();
    (entries.len() <= max).then_some(entries)
}

/// The paths below `base` that `rest` names, `*` matching within one component: one
/// listing per wildcard component, never a walk.
fn expand_components(base: &Path, rest: &Path) -> Vec<PathBuf> {
    let mut cur = vec![base.to_path_buf()];
    for c in rest.components() {
        let pat = c.as_os_str().to_string_lossy();
        let mut next = Vec::new();
        for dir in &cur {
            if !pat.contains('*') {
                next.push(dir.join(c));
                continue;
            }
            let Ok(rd) = std::fs::read_dir(dir) else { continue };
            for e in rd.flatten().take(crate::fs::mandatory::LISTING_MAX) {
                if e.file_name().to_str().is_some_and(|n| crate::fs::protected_names::covers(&pat, Path::new(n))) {
                    next.push(e.path());
                }
            }
        }
        cur = next;
    }
    cur
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_home_is_split_up_to_its_own_bound_not_the_other_trees() {
        let root = std::env::temp_dir().join(format!("srt-home-bounds-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        // more than another writable tree may hold at its top and still be split
        for i in 0..crate::fs::mandatory::SPLIT_MAX * 2 {
            std::fs::write(root.join(format!(".f{i}")), "").unwrap();
        }
        let listed = listing_bounds(&root).map(|e| e.len());
        assert_eq!(listed, Some(crate::fs::mandatory::SPLIT_MAX * 2), "a home (or the project it is) keeps its rules");
        for i in 0..crate::fs::mandatory::SPLIT_MAX * 2 {
            std::fs::write(root.join(format!("x{i}.desktop")), "").unwrap();
        }
        let found = expand_components(&root, Path::new("*.desktop"));
        assert_eq!(found.len(), crate::fs::mandatory::SPLIT_MAX * 2, "every match of a wildcard is bounded");
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// The home loop is skipped only where none of the places it would name can pass its
    /// filter: checked for every researched entry, against homes, writable trees and XDG
    /// values (unnormalised ones too) on both sides of each other.
    #[test]
    fn the_home_names_are_skipped_only_where_none_could_be_written() {
        use crate::fs::policy::under;
        use crate::fs::protected_names::{xdg_location, HOME, HOME_ALLOW};
        let homes = ["/home/a", "/root"];
        let writes: [&[&str]; 7] = [
            &["/work"],
            &["/home/a/proj"],
            &["/home"],
            &["/"],
            &["/work", "/srv/cfg/sub"],
            &["/home/a/.config/git"],
            &["/home/ab"],
        ];
        let xdgs: [Option<&str>; 6] =
            [None, Some("/srv/cfg"), Some("/srv/cfg/"), Some("/srv//cfg"), Some("/srv/./cfg"), Some("rel/cfg")];
        let mut skipped = 0;
        for home in homes.map(Path::new) {
            for write in writes {
                let write: Vec<PathBuf> = write.iter().map(PathBuf::from).collect();
                for xdg in xdgs {
                    let var = |v: &str| (v == "XDG_CONFIG_HOME").then(|| xdg.map(std::ffi::OsString::from)).flatten();
                    let bases: Vec<Option<PathBuf>> = std::iter::once(Some(home.to_path_buf()))
                        .chain(
                            XDG_BASES
                                .iter()
                                .filter_map(|(v, _)| var(v).map(PathBuf::from).filter(|b| b.is_absolute()))
                                .map(normalised),
                        )
                        .collect();
                    if names_may_be_written(&bases, &write) {
                        continue;
                    }
                    skipped += 1;
                    for e in HOME.iter().map(|e| e.path).chain(HOME_ALLOW.iter().map(|a| a.path)) {
                        for at in [home.join(e), xdg_location(e, home, var)] {
                            let literal: PathBuf = at
                                .components()
                                .take_while(|c| !c.as_os_str().to_string_lossy().contains('*'))
                                .collect();
                            assert!(
                                !write.iter().any(|w| under(&at, w) || under(&literal, w) || under(w, &literal)),
                                "{} (home {}, XDG_CONFIG_HOME {xdg:?}) is writable in {write:?} but was skipped",
                                at.display(),
                                home.display()
                            );
                        }
                    }
                }
            }
        }
        assert!(skipped >= 10, "the cases must include homes outside every writable tree ({skipped})");
        let none: [Option<PathBuf>; 1] = [Some("/root".into())];
        assert!(!names_may_be_written(&none, &[PathBuf::from("/work")]));
        assert!(names_may_be_written(&none, &[PathBuf::from("/root/proj")]), "a tree below the home");
        assert!(names_may_be_written(&none, &[PathBuf::from("/")]), "a tree holding the home");
        assert!(names_may_be_written(&[None], &[PathBuf::from("/work")]), "an unnormalised base is taken as writable");
        assert_eq!(normalised("/srv/cfg/".into()), None);
        assert_eq!(normalised("/srv/cfg".into()), Some(PathBuf::from("/srv/cfg")));
    }
}

//! The home rules: where the researched home names ([`crate::fs::protected_names`]) and
//! the places the environment names fall in a writable tree, the Landlock plan gets the
//! paths where rights change; a split from [`crate::fs::prepare`], which calls it once per
//! launch.

use std::path::{Path, PathBuf};

use crate::error::LaunchError;
use crate::fs::policy::FsPolicy;
use crate::fs::resolve::canonical;

/// The home rules ([`crate::fs::protected_names`]): the researched home entries are protected
/// wherever they fall in a writable tree (in `$HOME` and where their XDG variables move
/// them), and so is what the variables of [`crate::fs::protected_names::ENV_NAMED`] name;
/// when `$HOME` itself lies in a writable tree its dot-entries are protected too, unless
/// the home allow-list or an `allowWrite` entry below `$HOME` opens them. The decision is
/// [`FsPolicy::guard`]'s; here the Landlock plan gets the paths where rights change.
/// `allow_write`: the settings' `allowWrite`, expanded; `cwd`: the working directory.
/// Returns what the environment names that lies outside every writable tree: nothing
/// needs denying there, but a mount may show it again inside one
/// ([`crate::fs::mount_aliases`]).
pub(super) fn home_rules(
    policy: &mut FsPolicy,
    home: &Path,
    allow_write: &[PathBuf],
    cwd: &Path,
) -> Result<Vec<PathBuf>, LaunchError> {
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
    let allow = below(allow_write);
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
    if names_may_be_written(&name_bases(home, var), &policy.write) {
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
                if reaches_writable(&literal, &policy.write) {
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
    let cwd = canonical(cwd);
    let mut elsewhere = Vec::new();
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
                if project_own || root {
                    continue;
                }
                if policy.in_write_tree(&p) {
                    policy.deny_write.push(p);
                } else {
                    elsewhere.push(p);
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
        xdg.push((base, PathBuf::from(stands_for)));
    }
    policy.home = Some(crate::fs::policy::HomePolicy { home: home.to_path_buf(), allow, deny, xdg });
    // only where a writable tree lies in the home or holds it can a link there lead into one
    // the command writes (a launch elsewhere pays nothing for the look)
    if policy.write.iter().any(|w| crate::fs::policy::under(w, home) || crate::fs::policy::under(home, w)) {
        linked_dot_entries(policy, home);
    }
    Ok(elsewhere)
}

/// Entries of the home's directories looked at for links at launch, at most.
const LINK_WALK_MAX: usize = 1_024;

/// The directories below the home a link to a protected entry can stand in: each researched
/// entry's own directory and those on the way to it (`.config`, `.config/git`, `.ssh`,
/// `.local/bin`). Built once.
fn walked_dirs() -> &'static std::collections::HashSet<&'static str> {
    static DIRS: std::sync::OnceLock<std::collections::HashSet<&'static str>> = std::sync::OnceLock::new();
    DIRS.get_or_init(|| {
        use crate::fs::protected_names::{Kind, HOME};
        let mut out = std::collections::HashSet::new();
        for e in HOME.iter().filter(|e| !e.path.contains('*')) {
            for (i, _) in e.path.match_indices('/') {
                out.insert(&e.path[..i]);
            }
            if e.kind == Kind::Dir {
                out.insert(e.path);
            }
        }
        out
    })
}

/// Links at launch among the home's researched entries lead elsewhere (GNU stow's
/// `~/.zshenv -> dotfiles/zshenv`, `~/.config/nvim -> ../dotfiles/nvim`, per-file links
/// such as `~/.ssh/config -> ../dotfiles/ssh/config`): the home rules judge names below the
/// home, so where each such link leads inside a writable tree is write-denied as its name
/// is. Looked for in the home's top and in the directories that hold researched entries
/// ([`walked_dirs`]: not in caches or installations such as `~/.rustup`), up to
/// [`LINK_WALK_MAX`] entries; a link elsewhere in a protected dot-directory is not seen (a
/// limit docs/security.md states).
fn linked_dot_entries(policy: &mut FsPolicy, home: &Path) {
    let Some(h) = policy.home.clone() else { return };
    let dirs = walked_dirs();
    let mut queue: Vec<PathBuf> = vec![home.to_path_buf()];
    let mut left = LINK_WALK_MAX;
    while let Some(dir) = queue.pop() {
        let Ok(listing) = std::fs::read_dir(&dir) else { continue };
        for e in listing.flatten() {
            if left == 0 {
                tracing::debug!(home = %home.display(), "links among the home's entries: look stopped at its bound");
                return;
            }
            left -= 1;
            let Ok(t) = e.file_type() else { continue };
            if !t.is_symlink() && !t.is_dir() {
                continue;
            }
            let p = e.path();
            let Some(rel) = p.strip_prefix(home).ok().and_then(Path::to_str) else { continue };
            if t.is_dir() {
                if dirs.contains(rel) {
                    queue.push(p);
                }
                continue;
            }
            let to = canonical(&p);
            if h.protects(&p) && policy.in_write_tree(&to) {
                policy.deny_write.push(to);
            }
        }
    }
}

/// `p` with its components collected, or `None` when that changes it (a repeated or
/// trailing `/`, a `.`): [`crate::paths::under`] compares bytes of normalised paths, and
/// such a path is taken as possibly writable rather than reasoned about.
fn normalised(p: PathBuf) -> Option<PathBuf> {
    let n: PathBuf = p.components().collect();
    (n.as_os_str() == p.as_os_str()).then_some(n)
}

/// Where the researched home names can lie: the home, and each XDG base the environment
/// sets to an absolute path ([`crate::fs::protected_names::xdg_location`] moves a name there), `None` for one that is
/// not normalised.
fn name_bases(home: &Path, var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Vec<Option<PathBuf>> {
    let xdg = XDG_BASES.iter().filter_map(|(v, _)| var(v).map(PathBuf::from).filter(|b| b.is_absolute()));
    std::iter::once(Some(home.to_path_buf())).chain(xdg.map(normalised)).collect()
}

/// Whether a path below one of `bases` (`None`: not normalised, see [`normalised`]) can
/// be in one of the writable trees `write`.
fn names_may_be_written(bases: &[Option<PathBuf>], write: &[PathBuf]) -> bool {
    bases.iter().any(|b| b.as_ref().is_none_or(|b| reaches_writable(b, write)))
}

/// A path below `base` can be in one of the writable trees `write`: one of them holds
/// `base` or lies below it.
fn reaches_writable(base: &Path, write: &[PathBuf]) -> bool {
    use crate::fs::policy::under;
    write.iter().any(|w| under(base, w) || under(w, base))
}

/// The XDG base variables and the home-relative places they stand for.
const XDG_BASES: &[(&str, &str)] = &[
    ("XDG_CONFIG_HOME", ".config"),
    ("XDG_DATA_HOME", ".local/share"),
    ("XDG_STATE_HOME", ".local/state"),
    ("XDG_CACHE_HOME", ".cache"),
];

/// The XDG bases the environment moves away from their place in `home`, canonical, each
/// with the home-relative place it stands for.
pub(super) fn xdg_bases(home: &Path) -> Vec<(PathBuf, PathBuf)> {
    XDG_BASES
        .iter()
        .filter_map(|(var, stands_for)| Some((canonical(&var_abs(var)?), PathBuf::from(stands_for))))
        .filter(|(base, stands_for)| *base != home.join(stands_for))
        .collect()
}

/// An absolute path from the variable `var` (the XDG specification ignores relative ones).
fn var_abs(var: &str) -> Option<PathBuf> {
    std::env::var_os(var).map(PathBuf::from).filter(|p| p.is_absolute())
}

/// The entries of `dir`, if it can be listed and has no more than the Landlock plan may
/// split around (`LISTING_MAX * 4`).
pub(super) fn listing_bounds(dir: &Path) -> Option<Vec<PathBuf>> {
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
                    if names_may_be_written(&name_bases(home, var), &write) {
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

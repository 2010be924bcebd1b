//! The filesystem policy as plain data and pure decisions, shared by the Landlock planner
//! (which turns it into kernel rules) and the supervisor (which judges each mediated
//! syscall by it). All paths are absolute and canonical.

use std::path::{Path, PathBuf};

use crate::git::guard::{self, Guard};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FsPolicy {
    /// Never readable, unless an equally or more specific `allow_read` re-allows.
    pub deny_read: Vec<PathBuf>,
    pub allow_read: Vec<PathBuf>,
    /// Writable trees.
    pub write: Vec<PathBuf>,
    /// Never writable, whatever `write` says (deny wins, also for missing paths).
    pub deny_write: Vec<PathBuf>,
    /// Git directories whose files that can run programs are guarded ([`crate::git::guard`]),
    /// deepest first; they need not exist.
    pub git_dirs: Vec<PathBuf>,
    /// `allowGitConfig`: a git directory's existing `config` is writable.
    pub allow_git_config: bool,
    /// Trees whose directories stay listable although their files are not readable (`/dev`:
    /// device names are no secret, and a listable `/` needs them listable).
    pub listable: Vec<PathBuf>,
    /// Further paths where the Landlock plan must split rights (git directories' guarded
    /// names, existing or not), so that new entries there go to the supervisor.
    pub extra_bounds: Vec<PathBuf>,
    /// Trees the launch's search had no budget to look through ([`crate::fs::mandatory`]): no
    /// Landlock rule grants writing there, and [`FsPolicy::guard`] recognises protected
    /// names and git directories there as the supervisor meets them.
    pub mediated: Vec<PathBuf>,
    /// The tops of the trees, where the project names hold for names made later
    /// ([`crate::fs::mandatory::Mandatory::tops`]).
    pub tops: Vec<PathBuf>,
    /// The tops where new dot-entries fail closed ([`crate::fs::protected_names::PROJECT_DOT_ALLOW`]):
    /// every top but the home (whose own rules decide) and a shared scratch directory
    /// (sticky and writable by all, as `/tmp`).
    pub dot_tops: Vec<PathBuf>,
    /// Dot-files that existed at the top of one of `dot_tops` at launch and that the list
    /// does not name: they stay writable (only new ones are refused).
    pub top_dot_files: Vec<PathBuf>,
    /// `$HOME` when it lies in a writable tree: its dot-entries are protected unless the
    /// home allow-list names them ([`crate::fs::protected_names::home_rule`]).
    pub home: Option<HomePolicy>,
    /// Second names mounts make inside the writable trees ([`crate::fs::mount_aliases`]),
    /// each with the protected path it shows (or part of): for `srt explain`.
    pub second_names: Vec<(PathBuf, PathBuf)>,
    /// Writable trees a `denyRead` entry covered, readable because writable (also in
    /// `allow_read`): for `srt explain`.
    pub readable_as_writable: Vec<PathBuf>,
    /// Settings entries naming `/dev/shm` or below, set aside: it is the run's own
    /// ([`crate::fs::shm`]). For `srt explain`.
    pub shm_settings_ignored: Vec<PathBuf>,
}

/// The home rules of a run whose `$HOME` may be written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HomePolicy {
    pub home: PathBuf,
    /// `allowWrite` entries below `$HOME`, relative to it.
    pub allow: Vec<String>,
    /// `denyWrite` entries below `$HOME`, relative to it.
    pub deny: Vec<String>,
    /// XDG base directories set elsewhere than `$HOME` (`XDG_CONFIG_HOME=/w/cfg`), each with
    /// the home-relative place it stands for (`.config`): what lies below one is judged as
    /// if it were there, so a tool's config is protected wherever the variable moves it.
    /// Mounts that show the home or part of it elsewhere ([`crate::fs::mount_aliases`])
    /// are judged the same way, each standing for its place below `$HOME`.
    pub xdg: Vec<(PathBuf, PathBuf)>,
}

impl HomePolicy {
    /// Whether the home rules protect `p` (below `$HOME`).
    pub fn protects(&self, p: &Path) -> bool {
        use crate::fs::protected_names::HomeRule;
        matches!(self.rule(p), Some(HomeRule::Protected(_) | HomeRule::UserDenied | HomeRule::DotEntry))
    }

    /// The home rules' answer for `p`, `None` outside the home (and for its git directory).
    /// Where the home allow-list or the user's `allowWrite` opens `p` the home rules decide,
    /// also where the home is the top of a tree whose project names would refuse it
    /// (`~/.claude/debug` in a home that is the working directory).
    fn rule(&self, p: &Path) -> Option<crate::fs::protected_names::HomeRule> {
        use crate::fs::protected_names::{home_rule, HomeSettings};
        let rel = self.relative(p)?;
        let rel = rel.as_path();
        if rel.as_os_str().is_empty() || rel.starts_with(".git") {
            return None; // git's rules decide in a home that is a repository
        }
        let allow: Vec<&str> = self.allow.iter().map(String::as_str).collect();
        let deny: Vec<&str> = self.deny.iter().map(String::as_str).collect();
        Some(home_rule(rel, HomeSettings { allow: &allow, deny: &deny }))
    }
}

impl HomePolicy {
    /// `p` relative to the home, or to the place an XDG base holding it stands for (the
    /// deepest base holding `p` decides: one may lie inside the home, or inside another).
    fn relative(&self, p: &Path) -> Option<PathBuf> {
        let base = self.xdg.iter().filter(|(b, _)| under(p, b)).max_by_key(|(b, _)| b.as_os_str().len());
        match base {
            Some((base, stands_for)) => Some(Path::new(stands_for).join(p.strip_prefix(base).ok()?)),
            None => p.strip_prefix(&self.home).ok().map(Path::to_path_buf),
        }
    }

    /// A researched home entry lies strictly below `p` (`~/.local/state/nvim/trust` below
    /// an allowed `~/.local/state/nvim`): a directory made at `p` must not be one whose
    /// rules grant writing everything below it.
    pub fn protects_below(&self, p: &Path) -> bool {
        let Some(rel) = self.relative(p) else { return false };
        crate::fs::protected_names::HOME.iter().any(|e| crate::fs::protected_names::lies_below(e.path, &rel))
    }
}

/// Rights at one path: reading files, listing directories, writing. Listing is separate
/// because it only concerns directories, so a denied *file* need not cost its ancestors
/// their listings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rights {
    pub read: bool,
    pub list: bool,
    pub write: bool,
}

impl Rights {
    pub const NONE: Rights = Rights { read: false, list: false, write: false };
    pub fn and(self, o: Rights) -> Rights {
        Rights { read: self.read && o.read, list: self.list && o.list, write: self.write && o.write }
    }
    pub fn or(self, o: Rights) -> Rights {
        Rights { read: self.read || o.read, list: self.list || o.list, write: self.write || o.write }
    }
    pub fn minus(self, o: Rights) -> Rights {
        Rights { read: self.read && !o.read, list: self.list && !o.list, write: self.write && !o.write }
    }
    pub fn is_empty(self) -> bool {
        !self.read && !self.list && !self.write
    }
}

pub use crate::paths::under;

impl FsPolicy {
    /// Reads: the deepest matching denyRead/allowRead entry decides; allow wins a tie.
    pub fn can_read(&self, p: &Path) -> bool {
        // deeper entries are longer: comparing lengths compares depths among prefixes of `p`
        let deepest = |list: &[PathBuf]| list.iter().filter(|e| under(p, e)).map(|e| e.as_os_str().len()).max();
        match (deepest(&self.deny_read), deepest(&self.allow_read)) {
            (Some(d), Some(a)) => a >= d,
            (Some(_), None) => false,
            _ => true,
        }
    }

    /// Inside an `allowWrite` tree, whatever the guards say.
    pub fn in_write_tree(&self, p: &Path) -> bool {
        self.write.iter().any(|w| under(p, w))
    }

    /// What the deny lists and the git rules say about `p`.
    pub fn guard(&self, p: &Path) -> Guard {
        if self.deny_write.iter().any(|d| under(p, d)) {
            return Guard::Deny;
        }
        use crate::fs::protected_names::HomeRule;
        let home_rule = self.home.as_ref().and_then(|h| h.rule(p));
        if matches!(home_rule, Some(HomeRule::Protected(_) | HomeRule::UserDenied | HomeRule::DotEntry)) {
            return Guard::Deny;
        }
        let allowed = matches!(home_rule, Some(HomeRule::Allowed(_)));
        let home_allows = |t: &Path| allowed && self.home.as_ref().is_some_and(|h| h.home == t);
        if let Some(t) = self
            .tops
            .iter()
            .filter(|t| p != t.as_path() && under(p, t))
            .max_by_key(|t| t.as_os_str().len())
            .filter(|t| !home_allows(t))
        {
            let first = p.strip_prefix(t).ok().and_then(|rel| rel.components().next()).map(|c| c.as_os_str());
            let may = first.and_then(|f| f.to_str()).is_some_and(crate::fs::protected_names::starts_project_entry);
            if may && p.strip_prefix(t).is_ok_and(|rel| crate::fs::protected_names::project_entry(rel).is_some()) {
                return Guard::Deny;
            }
        }
        if self.new_dot_entry_refused(p) {
            return Guard::Deny;
        }
        if let Some(m) = self.mediated.iter().find(|m| under(p, m)) {
            let g = mediated_guard(p, m);
            if g != Guard::Open {
                return g;
            }
        }
        match self.git_dirs.iter().find(|g| under(p, g)) {
            Some(g) => match p.strip_prefix(g).map(guard::classify) {
                Ok(Guard::GitConfig) if self.allow_git_config => Guard::Open,
                Ok(guard) => guard,
                Err(_) => Guard::Deny,
            },
            None => Guard::Open,
        }
    }

    /// `p` is, or lies below, a dot-entry at the top of one of [`FsPolicy::dot_tops`] that
    /// the list does not name: refused unless it is a dot-file that existed at launch, or
    /// the user's `allowWrite` names it (or something below it).
    fn new_dot_entry_refused(&self, p: &Path) -> bool {
        // the deepest top decides: a writable tree inside another is a top of its own
        let Some(t) = self.tops.iter().filter(|t| p != t.as_path() && under(p, t)).max_by_key(|t| t.as_os_str().len())
        else {
            return false;
        };
        if !self.dot_tops.contains(t) {
            return false;
        }
        let Ok(rel) = p.strip_prefix(t) else { return false };
        let Some(first) = rel.components().next().map(|c| c.as_os_str()) else { return false };
        use std::os::unix::ffi::OsStrExt;
        let second = rel.components().nth(1).map(|c| c.as_os_str().to_str());
        let allowed = match (first.to_str(), second) {
            (Some(f), None) => crate::fs::protected_names::top_dot_allowed(f, None),
            (Some(f), Some(Some(s))) => crate::fs::protected_names::top_dot_allowed(f, Some(s)),
            _ => false,
        };
        if !first.as_bytes().starts_with(b".") || allowed {
            return false;
        }
        let entry = t.join(first);
        if p == entry && self.top_dot_files.contains(&entry) {
            return false;
        }
        !self.write.iter().any(|w| under(p, w) && under(w, &entry))
    }

    /// How many `..` steps lead from the directory holding the git `config` at `p` to the
    /// top of its repository's tree: from `W/.git/modules/a/config` three (to `W`), from
    /// `W/.git/config` one; zero in a bare repository, which has no tree of its own.
    pub fn worktree_ups(&self, p: &Path) -> usize {
        let top = self.git_dirs.iter().filter(|g| under(p, g) && g.file_name() == Some(".git".as_ref())).min();
        match top.and_then(|g| p.parent()?.strip_prefix(g).ok()) {
            Some(rel) => rel.components().count() + 1,
            None => 0,
        }
    }

    pub fn can_write(&self, p: &Path) -> bool {
        self.in_write_tree(p) && self.guard(p) == Guard::Open
    }

    /// `p` has a guarded path strictly below it (an existing one or not), so removing or
    /// renaming `p`, or putting anything but a new empty directory there, would take the
    /// protection away (`mv .git x; mkdir -p .git/hooks`, `ln -s elsewhere .claude`).
    pub fn guards_below(&self, p: &Path) -> bool {
        let project_below = |t: &PathBuf| {
            p.strip_prefix(t).is_ok_and(|rel| {
                !rel.as_os_str().is_empty()
                    && crate::fs::protected_names::PROJECT
                        .iter()
                        .any(|e| crate::fs::protected_names::lies_below(e.path, rel))
            })
        };
        self.deny_write.iter().any(|d| d != p && under(d, p))
            || self.home.as_ref().is_some_and(|h| h.protects_below(p))
            || self.tops.iter().any(project_below)
            || self
                .git_dirs
                .iter()
                .any(|g| under(g, p) || (under(p, g) && p.strip_prefix(g).is_ok_and(guard::guards_below)))
    }

    /// A `denyRead` path lies strictly below `p`: moving `p` would carry it out from under
    /// its rule.
    pub fn read_denied_below(&self, p: &Path) -> bool {
        self.deny_read.iter().any(|d| d != p && under(d, p))
    }

    /// May the name `p` be unlinked, renamed away, or replaced?
    pub fn can_replace(&self, p: &Path) -> bool {
        self.can_write(p) && !self.guards_below(p)
    }

    pub fn rights(&self, p: &Path) -> Rights {
        let read = self.can_read(p);
        let list = read || self.listable.iter().any(|l| under(p, l));
        Rights { read, list, write: self.can_write(p) }
    }

    /// What Landlock may grant at `p`: [`FsPolicy::rights`], without writing in the trees
    /// the supervisor judges whole (`mediated`).
    pub fn native_rights(&self, p: &Path) -> Rights {
        let mut r = self.rights(p);
        if r.write && self.mediated.iter().any(|m| under(p, m)) {
            r.write = false;
        }
        r
    }

    /// Every path where the rights may change.
    pub fn boundaries(&self) -> Vec<PathBuf> {
        let mut all: Vec<PathBuf> = [
            &self.deny_read,
            &self.allow_read,
            &self.listable,
            &self.write,
            &self.deny_write,
            &self.extra_bounds,
            &self.mediated,
        ]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
        all.sort();
        all.dedup();
        all
    }
}

/// The guard at `p` inside a tree the launch's search did not list (`m`): the mandatory
/// names at any depth, and the rules of the git directory `p` is in, found by looking at
/// the disk on the way up to `m`.
fn mediated_guard(p: &Path, m: &Path) -> Guard {
    // a project name at any depth: the name and the one above it, for `.claude/x` names.
    // A pattern covers a path only if its first name matches the path's first: the set
    // lookup of `starts_project_entry` rules out almost every name before the patterns are
    // tried (the supervisor asks this for every write in such a tree)
    use crate::fs::protected_names::{covers, project_entry, starts_project_entry, PROJECT};
    let starts = |n: Option<&std::ffi::OsStr>| n.and_then(|n| n.to_str()).is_some_and(starts_project_entry);
    let named = |q: &Path| {
        let name = q.file_name();
        let above = q.parent().and_then(Path::file_name);
        (starts(name) && project_entry(Path::new(name.unwrap_or_default())).is_some())
            || (starts(above) && {
                let two: PathBuf = q.iter().rev().take(2).collect::<Vec<_>>().into_iter().rev().collect();
                PROJECT.iter().any(|e| e.path.contains('/') && covers(e.path, &two))
            })
    };
    if p.ancestors().take_while(|a| under(a, m)).any(named) {
        return Guard::Deny;
    }
    let git = p.ancestors().skip(1).take_while(|a| under(a, m)).find(|a| crate::git::shape::is_git_dir(a));
    match git {
        Some(g) => p.strip_prefix(g).map_or(Guard::Deny, guard::classify),
        // one `HEAD` (or a `commondir`) would make its directory a repository
        None if matches!(p.file_name().and_then(|n| n.to_str()), Some("HEAD" | "commondir")) => Guard::Deny,
        None => Guard::Open,
    }
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;

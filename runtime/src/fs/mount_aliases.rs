//! Second names that mounts give protected paths. A bind mount of the home, of
//! `/tmp` (srt's state directory) or of any `denyWrite` directory inside a writable tree
//! shows the same files under a name the rules do not know: Landlock's grant on the tree
//! covers that name, and the supervisor and the home rules judge names. At launch each
//! mount that shows a protected path, or part of one, under another name in (or above) a
//! writable tree gets that path's protection there too: denied whole for a denied path
//! (and for what the environment names, `PATH` directories), judged by the home rules for
//! the home and the XDG bases, by the same rules for a git directory, a project top or a
//! tree the supervisor judges whole (a part of one: denied whole).
//!
//! Mounts are compared by filesystem (`major:minor`) and by the path inside it that each
//! one shows (its root, `/proc/self/mountinfo`), so a bind of a bind, or a btrfs
//! subvolume mounted twice, is recognised by what it shows, not by how it was made. An
//! overlay is also taken as showing its upper directory, where its writes land. A FUSE
//! mirror (bindfs) names nothing the table shows, and is not recognised.

use std::path::{Path, PathBuf};

use crate::fs::policy::{under, FsPolicy};

/// One line of `/proc/self/mountinfo`: the filesystem, the path inside it the mount
/// shows, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub dev: String,
    pub root: PathBuf,
    pub point: PathBuf,
    /// An overlay's upper directory, where every write through it lands.
    pub upper: Option<PathBuf>,
    /// Not a line of the table: an overlay taken as showing its upper directory
    /// ([`with_overlay_uppers`]). Never the mount a path is reached through.
    pub via_overlay: bool,
}

/// Another name for a protected path, or for part of it: `at` shows what lies at
/// `stands_for` below the protected path (empty: the path itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alias {
    pub at: PathBuf,
    pub stands_for: PathBuf,
}

/// The mount table, or `None` when it cannot be read (then no second names are known:
/// the protection is the names' alone, as it was before this check existed; said under
/// `-d`).
pub fn read() -> Option<Vec<Mount>> {
    match std::fs::read_to_string("/proc/self/mountinfo") {
        Ok(text) => Some(with_overlay_uppers(parse(&text), |p| p.is_dir())),
        Err(e) => {
            tracing::debug!("/proc/self/mountinfo: {e}; second names made by mounts are not looked for");
            None
        }
    }
}

/// `id parent major:minor root point options [optional fields] - fstype source super-options`,
/// the paths with `\ooo` escapes.
pub fn parse(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split(' ');
            let (_, _, dev, root, point) = (f.next()?, f.next()?, f.next()?, f.next()?, f.next()?);
            let mut after = f.skip_while(|x| *x != "-").skip(1);
            let (fstype, _source, options) = (after.next(), after.next(), after.next());
            let upper = (fstype == Some("overlay")).then(|| options.and_then(upperdir)).flatten();
            Some(Mount {
                dev: dev.to_string(),
                root: unescape(root),
                point: unescape(point),
                upper,
                via_overlay: false,
            })
        })
        .collect()
}

/// `upperdir=` among an overlay's options (the kernel writes a comma, space, tab,
/// newline or backslash in a path as `\ooo`, so a plain comma always ends an option).
fn upperdir(options: &str) -> Option<PathBuf> {
    options.split(',').find_map(|o| o.strip_prefix("upperdir=")).map(unescape)
}

/// An overlay writes into its upper directory: each overlay with one is also taken as a
/// mount showing that directory at its mount point, so that an overlay whose upper
/// directory is a protected path is recognised as the second name it is. The path in the
/// options is the mounter's, which need not be ours (a container's root overlay names a
/// host path): only an upper directory that exists here (`is_dir`) is taken, and never an
/// overlay at `/`, which would make everything a second name of it.
fn with_overlay_uppers(mut mounts: Vec<Mount>, is_dir: impl Fn(&Path) -> bool) -> Vec<Mount> {
    let shown: Vec<Mount> = mounts
        .iter()
        .filter(|m| m.point != Path::new("/"))
        .filter_map(|m| {
            let upper = m.upper.as_deref().filter(|u| is_dir(u))?;
            let (dev, inner) = shows(&mounts, upper)?;
            Some(Mount { dev: dev.to_string(), root: inner, point: m.point.clone(), upper: None, via_overlay: true })
        })
        .collect();
    mounts.extend(shown);
    mounts
}

fn unescape(s: &str) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = |j: usize| b.get(j).filter(|c| (b'0'..=b'7').contains(c)).map(|c| c - b'0');
        match (b[i], octal(i + 1), octal(i + 2), octal(i + 3)) {
            (b'\\', Some(x), Some(y), Some(z)) => {
                out.push(x.wrapping_mul(64).wrapping_add(y * 8).wrapping_add(z));
                i += 4;
            }
            (c, ..) => {
                out.push(c);
                i += 1;
            }
        }
    }
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

/// The other names `mounts` give `target` (an absolute, canonical path) or part of it.
pub fn aliases(mounts: &[Mount], target: &Path) -> Vec<Alias> {
    let Some((dev, inner)) = shows(mounts, target) else { return Vec::new() };
    let mut out = Vec::new();
    for m in mounts.iter().filter(|m| m.dev == dev) {
        let alias = if let Ok(below) = inner.strip_prefix(&m.root) {
            // the mount shows the target itself (or something above it)
            Alias { at: join(&m.point, below), stands_for: PathBuf::new() }
        } else if let Ok(part) = m.root.strip_prefix(&inner) {
            // the mount shows something below the target
            Alias { at: m.point.clone(), stands_for: part.to_path_buf() }
        } else {
            continue;
        };
        if alias.at != target && !out.contains(&alias) {
            out.push(alias);
        }
    }
    out
}

/// What `p` is: its filesystem and the path inside it, through the mount `p` is reached
/// through (the deepest mount point above it, the last one mounted there).
fn shows<'a>(mounts: &'a [Mount], p: &Path) -> Option<(&'a str, PathBuf)> {
    let host = mounts
        .iter()
        .enumerate()
        .filter(|(_, m)| !m.via_overlay && under(p, &m.point))
        .max_by_key(|(i, m)| (m.point.as_os_str().len(), *i))
        .map(|(_, m)| m)?;
    let rest = p.strip_prefix(&host.point).ok()?;
    Some((host.dev.as_str(), join(&host.root, rest)))
}

/// `a` with `b` below it; `a` itself for an empty `b` (`join` would add a `/`, and the
/// policy compares paths byte for byte).
fn join(a: &Path, b: &Path) -> PathBuf {
    if b.as_os_str().is_empty() {
        a.to_path_buf()
    } else {
        a.join(b)
    }
}

/// Gives the second names that lie in (or above) a writable tree the protection of what
/// they show: each `denyWrite` path's (srt's own state directories and the settings files
/// among them) denied whole, the home's judged by the home rules as if they were under
/// `$HOME`. Each protected path is compared with every mount: one read of the mount table
/// and a few hundred path comparisons per launch.
/// `elsewhere`: paths protected like `denyWrite` ones where they may be written (what the
/// environment names, `PATH` directories) that lie outside every writable tree.
pub(super) fn protect_second_names(policy: &mut FsPolicy, mounts: &[Mount], elsewhere: &[PathBuf]) {
    if !mounts.iter().any(|m| reaches_write_tree(policy, &m.point)) {
        return;
    }
    let in_tree = |a: &Alias, p: &FsPolicy| reaches_write_tree(p, &a.at);
    let mut denied = Vec::new();
    for d in policy.deny_write.iter().chain(elsewhere) {
        denied.extend(aliases(mounts, d).into_iter().filter(|a| in_tree(a, policy)).map(|a| (a.at, d.clone())));
    }
    // The names judged by rules of their own (a repository's git directory, a writable
    // tree's project entries, a tree the supervisor judges whole): a second name for the
    // whole is judged by the same rules; one for a part of it is denied whole, since the
    // rules would not know which part it is.
    let judged = [(Judged::Git, &policy.git_dirs), (Judged::Top, &policy.tops), (Judged::Mediated, &policy.mediated)];
    let mut same_rules = Vec::new();
    for (kind, list) in judged {
        for t in list {
            for a in aliases(mounts, t).into_iter().filter(|a| in_tree(a, policy)) {
                if a.stands_for.as_os_str().is_empty() {
                    same_rules.push((kind, a.at, t.clone()));
                } else {
                    denied.push((a.at, join(t, &a.stands_for)));
                }
            }
        }
    }
    for (kind, at, shown) in same_rules {
        policy.second_names.push((at.clone(), shown));
        match kind {
            Judged::Git => policy.git_dirs.push(at),
            Judged::Top => policy.tops.push(at),
            Judged::Mediated => policy.mediated.push(at),
        }
    }
    // deepest first, as `fs_policy` keeps them: a path is judged by its nearest repository
    policy.git_dirs.sort_by_key(|g| std::cmp::Reverse(g.as_os_str().len()));
    policy.git_dirs.dedup();
    policy.deny_write.extend(denied.iter().map(|(at, _)| at.clone()));
    policy.second_names.extend(denied);
    // the home, and each XDG base the environment moves elsewhere: the home rules judge
    // what lies below a base as the place it stands for, and a second name of it must be
    // judged so too, even where the base itself lies outside every writable tree
    let home = policy.home.as_ref().map(|h| h.home.clone());
    let places: Vec<(PathBuf, PathBuf)> = home
        .iter()
        .flat_map(|h| std::iter::once((h.clone(), PathBuf::new())).chain(super::home_rules::xdg_bases(h)))
        .collect();
    let mut shown = Vec::new();
    for (base, stands) in &places {
        let found: Vec<Alias> = aliases(mounts, base).into_iter().filter(|a| in_tree(a, policy)).collect();
        for a in found {
            let first = join(base, &a.stands_for);
            policy.second_names.push((a.at.clone(), first.clone()));
            shown.push((first, Alias { stands_for: join(stands, &a.stands_for), at: a.at }));
        }
    }
    for (first, a) in shown {
        match super::home_rules::listing_bounds(&a.at) {
            Some(entries) => policy.extra_bounds.extend(entries),
            None => policy.mediated.push(a.at.clone()),
        }
        // a writable tree reached through the second name is an `allowWrite` entry below
        // the home, as it would be under its first name (a project in `~/.config/foo`);
        // one the home rules refuse by name (`~/.ssh`) stays protected. Only where the
        // tree shows the home's files: another filesystem mounted over the second name
        // shows something else, and opens nothing in the home.
        let allowed: Vec<String> = policy
            .write
            .iter()
            .filter_map(|w| Some((w, w.strip_prefix(&a.at).ok()?)))
            .filter(|(w, rel)| shows(mounts, w).is_some_and(|s| Some(s) == shows(mounts, &join(&first, rel))))
            .map(|(_, rel)| join(&a.stands_for, rel))
            .filter_map(|rel| rel.to_str().map(str::to_string))
            .filter(|rel| !rel.is_empty() && crate::fs::protected_names::check_user_allow(rel).is_ok())
            .collect();
        if let Some(h) = policy.home.as_mut() {
            h.allow.extend(allowed);
            h.xdg.push((a.at, a.stands_for));
        }
    }
    policy.second_names.sort();
    policy.second_names.dedup();
}

#[derive(Clone, Copy)]
enum Judged {
    Git,
    Top,
    Mediated,
}

/// `p` lies in a writable tree, or a writable tree lies below it: a second name there
/// reaches files a writable tree holds (a working directory inside a bind of a denied
/// directory is inside that directory, whatever its own name).
fn reaches_write_tree(policy: &FsPolicy, p: &Path) -> bool {
    policy.write.iter().any(|w| under(p, w) || under(w, p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(dev: &str, root: &str, point: &str) -> Mount {
        Mount { dev: dev.into(), root: root.into(), point: point.into(), upper: None, via_overlay: false }
    }

    fn at(list: &[Alias]) -> Vec<(&str, &str)> {
        list.iter().map(|a| (a.at.to_str().unwrap(), a.stands_for.to_str().unwrap())).collect()
    }

    #[test]
    fn mountinfo_lines_are_read_with_their_escapes() {
        let text = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n\
                    40 22 8:1 /home/u /w/my\\040home rw - ext4 /dev/sda1 rw\n\
                    short line\n";
        assert_eq!(parse(text), vec![m("8:1", "/", "/"), m("8:1", "/home/u", "/w/my home")]);
    }

    /// An overlay's writes land in its upper directory: that directory, resolved through
    /// the mounts, is shown at the overlay's mount point.
    #[test]
    fn an_overlay_shows_its_upper_directory() {
        let text = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n\
                    41 22 0:50 / /w/ov rw shared:9 - overlay overlay rw,lowerdir=/o/lower,upperdir=/home/u/.ssh,workdir=/o/work\n\
                    42 22 0:51 / /w/ov2 rw - overlay overlay rw,lowerdir=/l,upperdir=/o/a\\054b,workdir=/o/w\n\
                    43 22 0:52 / /w/ro rw - overlay overlay ro,lowerdir=/l1:/l2\n";
        let mounts = with_overlay_uppers(parse(text), |_| true);
        assert_eq!(mounts[1].upper.as_deref(), Some(Path::new("/home/u/.ssh")));
        assert_eq!(mounts[2].upper.as_deref(), Some(Path::new("/o/a,b")), "an escaped comma");
        assert_eq!(mounts[3].upper, None, "no upper directory: read-only");
        assert_eq!(at(&aliases(&mounts, Path::new("/home/u"))), [("/w/ov", ".ssh")]);
    }

    /// In a container the root itself is an overlay, whose upper directory is a host path:
    /// taking it as what `/` shows must not change how any path is reached, or a bind of
    /// the home would go unrecognised.
    #[test]
    fn an_overlay_root_leaves_binds_recognised() {
        let text = "30 1 0:40 / / rw - overlay overlay rw,lowerdir=/l,upperdir=/var/lib/c/diff,workdir=/var/lib/c/work\n\
                    31 30 0:40 /home/u /w/h rw - overlay overlay rw,lowerdir=/l,upperdir=/var/lib/c/diff,workdir=/var/lib/c/work\n";
        let mounts = with_overlay_uppers(parse(text), |_| true);
        assert_eq!(at(&aliases(&mounts, Path::new("/home/u"))), [("/w/h", "")]);
        // an upper directory that is not there in this namespace (the host's) is no name
        let elsewhere = "30 1 0:40 / / rw - ext4 /dev/vda rw\n\
                         41 30 0:50 / /w/vol rw - overlay overlay rw,lowerdir=/l,upperdir=/home/u/.local/x,workdir=/v/w\n";
        let mounts = with_overlay_uppers(parse(elsewhere), |p| p != Path::new("/home/u/.local/x"));
        assert!(aliases(&mounts, Path::new("/home/u")).is_empty());
        // an overlay at / whose upper directory lies below the home shows nothing
        let root = "30 1 0:40 / / rw - overlay overlay rw,lowerdir=/l,upperdir=/home/u/up,workdir=/home/u/wk\n";
        assert!(aliases(&with_overlay_uppers(parse(root), |_| true), Path::new("/home/u")).is_empty());
    }

    #[test]
    fn a_bind_mount_is_a_second_name_for_what_it_shows() {
        let mounts = [
            m("8:1", "/", "/"),
            m("0:30", "/", "/tmp"),
            // the home bound into the project, /tmp bound into it, part of the home elsewhere
            m("8:1", "/home/u", "/w/h"),
            m("0:30", "/", "/w/t"),
            m("8:1", "/home/u/.ssh", "/w/keys"),
            m("0:31", "/", "/w/other"),
        ];
        assert_eq!(
            at(&aliases(&mounts, Path::new("/home/u"))),
            [("/w/h", ""), ("/w/keys", ".ssh")],
            "the root's own name is the path itself, not a second one"
        );
        assert_eq!(at(&aliases(&mounts, Path::new("/tmp/srt-state-1"))), [("/w/t/srt-state-1", "")]);
        assert_eq!(at(&aliases(&mounts, Path::new("/home/u/.bashrc"))), [("/w/h/.bashrc", "")]);
        // through a bind of a bind: what it shows decides, not how it was made
        let nested = [m("8:1", "/", "/"), m("8:1", "/home/u", "/w/h"), m("8:1", "/home/u/.config", "/w/h/c")];
        assert_eq!(
            at(&aliases(&nested, Path::new("/w/h/.config/git"))),
            [("/home/u/.config/git", ""), ("/w/h/c/git", "")]
        );
        assert!(aliases(&[m("8:1", "/", "/")], Path::new("/home/u")).is_empty());
    }

    #[test]
    fn second_names_in_a_writable_tree_get_the_protection() {
        let mounts = [m("8:1", "/", "/"), m("8:1", "/srv/locked", "/w/l"), m("8:1", "/srv/locked", "/elsewhere")];
        let mut pol = FsPolicy {
            write: vec![PathBuf::from("/w")],
            deny_write: vec![PathBuf::from("/srv/locked")],
            ..FsPolicy::default()
        };
        protect_second_names(&mut pol, &mounts, &[]);
        assert!(pol.deny_write.contains(&PathBuf::from("/w/l")));
        assert!(!pol.deny_write.contains(&PathBuf::from("/elsewhere")), "outside the writable trees: nothing to add");
        assert_eq!(pol.second_names, [(PathBuf::from("/w/l"), PathBuf::from("/srv/locked"))]);
        assert!(!pol.can_write(Path::new("/w/l/f")));
        assert!(pol.can_write(Path::new("/w/f")));
    }

    #[test]
    fn second_names_of_judged_trees_and_trees_below_a_second_name() {
        let mounts = [
            m("8:1", "/", "/"),
            m("8:1", "/w/.git", "/w/g"),
            m("8:1", "/w/.git/config", "/w/cfg"),
            m("8:1", "/srv/locked", "/v"),
        ];
        let mut pol = FsPolicy {
            write: vec![PathBuf::from("/w"), PathBuf::from("/v/sub")],
            deny_write: vec![PathBuf::from("/srv/locked")],
            git_dirs: vec![PathBuf::from("/w/.git")],
            ..FsPolicy::default()
        };
        protect_second_names(&mut pol, &mounts, &[]);
        assert!(pol.git_dirs.contains(&PathBuf::from("/w/g")), "the whole git directory: its rules");
        assert!(!pol.can_write(Path::new("/w/g/config")));
        assert!(!pol.can_write(Path::new("/w/cfg")), "a part of it: denied whole");
        assert!(!pol.can_write(Path::new("/v/sub/f")), "a tree below a second name of a denied directory");
        assert!(pol.can_write(Path::new("/w/f")));
    }
}

//! The journal's header ([`crate::check::journal`]): what the check after the run needs
//! to know about it, decided at launch, written before the command starts.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::git::audit::Stamp;

/// What the check needs to know about the run, decided at launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The writable trees (absolute, canonical).
    pub roots: Vec<PathBuf>,
    /// The run's start on the ctime clock.
    pub since: Stamp,
    /// Guarded git directories that already were repositories at launch.
    pub trusted: Vec<PathBuf>,
    /// Every git directory the rules guarded (whether or not it existed at launch).
    pub guarded: Vec<PathBuf>,
    /// The run's directory pools ([`crate::fs::pool`]), removed by the check.
    pub pools: Vec<PathBuf>,
    /// `allowGitConfig`.
    pub allow_git_config: bool,
    /// The run's private TMPDIR (removed after the run; skipped by the check).
    pub tmpdir: PathBuf,
    /// What [`Header::link_policy`] judges links made during the run by, as the supervisor
    /// judged them: the write-denied paths inside the writable trees, the tops with their
    /// rules for names made later, the trees judged whole, and the home rules.
    pub denied: Vec<PathBuf>,
    pub tops: Vec<PathBuf>,
    pub dot_tops: Vec<PathBuf>,
    pub top_dot_files: Vec<PathBuf>,
    pub mediated: Vec<PathBuf>,
    pub home: Option<crate::fs::policy::HomePolicy>,
}

impl Header {
    /// The part of the run's policy the check judges links by
    /// ([`crate::fs::name_rules::symlink_to`]): everything the supervisor's write rules
    /// consult but the read rules (a link is judged as a write).
    pub fn link_policy(&self) -> crate::fs::policy::FsPolicy {
        crate::fs::policy::FsPolicy {
            write: self.roots.clone(),
            deny_write: self.denied.clone(),
            git_dirs: self.guarded.clone(),
            allow_git_config: self.allow_git_config,
            tops: self.tops.clone(),
            dot_tops: self.dot_tops.clone(),
            top_dot_files: self.top_dot_files.clone(),
            mediated: self.mediated.clone(),
            home: self.home.clone(),
            ..Default::default()
        }
    }
}

const TAG_ROOT: u8 = b'R';
pub(super) const TAG_SINCE: u8 = b'S';
const TAG_TRUSTED: u8 = b'T';
const TAG_GUARDED: u8 = b'U';
const TAG_POOL: u8 = b'P';
const TAG_ALLOW_GIT_CONFIG: u8 = b'G';
const TAG_TMPDIR: u8 = b'M';
const TAG_DENIED: u8 = b'X';
const TAG_TOP: u8 = b'O';
const TAG_DOT_TOP: u8 = b'Q';
const TAG_TOP_DOT_FILE: u8 = b'F';
const TAG_MEDIATED: u8 = b'K';
const TAG_HOME: u8 = b'E';
const TAG_HOME_ALLOW: u8 = b'A';
const TAG_HOME_DENY: u8 = b'N';
/// An XDG base moved elsewhere, then (next record) the home-relative place it stands for.
const TAG_HOME_XDG: u8 = b'Y';
const TAG_HOME_XDG_FOR: u8 = b'Z';

/// Every header tag but [`TAG_SINCE`], which the reader checks is there.
pub(super) const TAGS: &[u8] = &[
    TAG_ROOT,
    TAG_TRUSTED,
    TAG_GUARDED,
    TAG_POOL,
    TAG_ALLOW_GIT_CONFIG,
    TAG_TMPDIR,
    TAG_DENIED,
    TAG_TOP,
    TAG_DOT_TOP,
    TAG_TOP_DOT_FILE,
    TAG_MEDIATED,
    TAG_HOME,
    TAG_HOME_ALLOW,
    TAG_HOME_DENY,
    TAG_HOME_XDG,
    TAG_HOME_XDG_FOR,
];

impl Header {
    pub(super) fn empty() -> Header {
        Header {
            roots: Vec::new(),
            since: Stamp { sec: 0, nsec: 0 },
            trusted: Vec::new(),
            guarded: Vec::new(),
            pools: Vec::new(),
            allow_git_config: false,
            tmpdir: PathBuf::new(),
            denied: Vec::new(),
            tops: Vec::new(),
            dot_tops: Vec::new(),
            top_dot_files: Vec::new(),
            mediated: Vec::new(),
            home: None,
        }
    }
}

/// The start stamp, `sec.nsec`.
pub(super) fn stamp(payload: &[u8]) -> Option<Stamp> {
    let (sec, nsec) = std::str::from_utf8(payload).ok()?.split_once('.')?;
    Some(Stamp { sec: sec.parse().ok()?, nsec: nsec.parse().ok()? })
}

/// One header record (a tag of [`TAGS`]) into `h`.
pub(super) fn record_into(h: &mut Header, tag: u8, payload: &[u8]) -> Result<(), &'static str> {
    let p = || PathBuf::from(OsStr::from_bytes(payload));
    match tag {
        TAG_ROOT => h.roots.push(p()),
        TAG_TRUSTED => h.trusted.push(p()),
        TAG_GUARDED => h.guarded.push(p()),
        TAG_POOL => h.pools.push(p()),
        TAG_TMPDIR => h.tmpdir = p(),
        TAG_DENIED => h.denied.push(p()),
        TAG_TOP => h.tops.push(p()),
        TAG_DOT_TOP => h.dot_tops.push(p()),
        TAG_TOP_DOT_FILE => h.top_dot_files.push(p()),
        TAG_MEDIATED => h.mediated.push(p()),
        TAG_HOME => h.home = Some(crate::fs::policy::HomePolicy { home: p(), ..Default::default() }),
        TAG_HOME_ALLOW | TAG_HOME_DENY | TAG_HOME_XDG | TAG_HOME_XDG_FOR => {
            // records of the home come after the home itself
            let Some(home) = h.home.as_mut() else { return Err("a home rule before the home") };
            let text = || String::from_utf8_lossy(payload).into_owned();
            match tag {
                TAG_HOME_ALLOW => home.allow.push(text()),
                TAG_HOME_DENY => home.deny.push(text()),
                TAG_HOME_XDG => home.xdg.push((p(), PathBuf::new())),
                _ => match home.xdg.last_mut() {
                    Some(last) => last.1 = p(),
                    None => return Err("an XDG place without its base"),
                },
            }
        }
        TAG_ALLOW_GIT_CONFIG => h.allow_git_config = payload == b"1",
        _ => {}
    }
    Ok(())
}

pub(super) fn record(tag: u8, payload: &[u8]) -> Vec<u8> {
    let mut r = Vec::with_capacity(payload.len() + 2);
    r.push(tag);
    r.extend_from_slice(payload);
    r.push(0);
    r
}

pub(super) fn encode_header(h: &Header) -> Vec<u8> {
    let mut out = Vec::new();
    for r in &h.roots {
        out.extend(record(TAG_ROOT, r.as_os_str().as_bytes()));
    }
    out.extend(record(TAG_SINCE, format!("{}.{}", h.since.sec, h.since.nsec).as_bytes()));
    for t in &h.trusted {
        out.extend(record(TAG_TRUSTED, t.as_os_str().as_bytes()));
    }
    for g in &h.guarded {
        out.extend(record(TAG_GUARDED, g.as_os_str().as_bytes()));
    }
    for p in &h.pools {
        out.extend(record(TAG_POOL, p.as_os_str().as_bytes()));
    }
    out.extend(record(TAG_ALLOW_GIT_CONFIG, if h.allow_git_config { b"1" } else { b"0" }));
    out.extend(record(TAG_TMPDIR, h.tmpdir.as_os_str().as_bytes()));
    let lists = [
        (TAG_DENIED, &h.denied),
        (TAG_TOP, &h.tops),
        (TAG_DOT_TOP, &h.dot_tops),
        (TAG_TOP_DOT_FILE, &h.top_dot_files),
        (TAG_MEDIATED, &h.mediated),
    ];
    for (tag, list) in lists {
        for p in list {
            out.extend(record(tag, p.as_os_str().as_bytes()));
        }
    }
    if let Some(home) = &h.home {
        out.extend(record(TAG_HOME, home.home.as_os_str().as_bytes()));
        for a in &home.allow {
            out.extend(record(TAG_HOME_ALLOW, a.as_bytes()));
        }
        for d in &home.deny {
            out.extend(record(TAG_HOME_DENY, d.as_bytes()));
        }
        for (base, stands_for) in &home.xdg {
            out.extend(record(TAG_HOME_XDG, base.as_os_str().as_bytes()));
            out.extend(record(TAG_HOME_XDG_FOR, stands_for.as_os_str().as_bytes()));
        }
    }
    out
}

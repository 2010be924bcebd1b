//! The keys a sandboxed command may set in a git `config` it writes, each with the kind of
//! value git takes there ([`crate::git::config`] parses the file; this decides each entry).

/// Why an entry is refused, as the message says it.
pub(super) const RUNS_PROGRAM: &str = "can make git run a program, so a sandboxed command may not set it";
pub(super) const INCLUDES: &str = "makes git read another file as config, so a sandboxed command may not set it";
pub(super) const NOT_LISTED: &str = "not on srt's list of git config keys a sandboxed command may set";

/// A config section header as git reads it.
pub(super) struct Section {
    /// Lowercased: git compares section names case-insensitively.
    pub(super) name: String,
    /// As written: git compares subsection names case-sensitively.
    pub(super) sub: Option<String>,
    /// The section as written, for messages (`CORE`, `remote.origin`).
    pub(super) shown: String,
}

/// How a value is judged. Each variant is the narrowest shape git writes for the key.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    Bool,
    /// A boolean or one of these words.
    BoolOr(&'static [&'static str]),
    OneOf(&'static [&'static str]),
    Int,
    IntOr(&'static [&'static str]),
    /// Free text shown to people or matched as a pathspec, never executed.
    Text,
    /// Like `Text` but may hold newlines (`git branch --edit-description` writes `\n`).
    Multiline,
    /// A branch, ref or remote-HEAD mode: one word, no leading `-`.
    Name,
    Refspec,
    /// A URL or local path git will fetch from or push to; also a remote name, since git
    /// takes an unknown remote name as a URL.
    Url,
    FilterSpec,
    SubmodulePath,
    WorktreePath,
    SharedRepository,
}

use Kind::*;

pub(super) const REBASE: &[&str] = &["merges", "m", "interactive", "i"];

/// (section, has subsection, key, kind); `*` matches any key. Everything here only
/// changes how git lays out or names data, or where it fetches from / pushes to.
#[rustfmt::skip]
pub(super) const ALLOWED: &[(&str, bool, &str, Kind)] = &[
    ("core", false, "repositoryformatversion", OneOf(&["0", "1"])),
    ("core", false, "filemode", Bool), ("core", false, "bare", Bool), ("core", false, "symlinks", Bool),
    ("core", false, "logallrefupdates", BoolOr(&["always"])),
    // Written by `git init` on case-insensitive or macOS filesystems.
    ("core", false, "ignorecase", Bool), ("core", false, "precomposeunicode", Bool),
    // Written into a submodule's git dir; see the module comment for what is not checked.
    ("core", false, "worktree", WorktreePath),
    ("core", false, "sharedrepository", SharedRepository),
    ("core", false, "checkstat", OneOf(&["default", "minimal"])), ("core", false, "trustctime", Bool),
    ("core", false, "autocrlf", BoolOr(&["input"])), ("core", false, "eol", OneOf(&["lf", "crlf", "native"])),
    ("core", false, "safecrlf", BoolOr(&["warn"])), ("core", false, "quotepath", Bool),
    ("core", false, "compression", Int), ("core", false, "loosecompression", Int),
    ("core", false, "bigfilethreshold", Int), ("core", false, "abbrev", IntOr(&["auto", "no"])),
    ("core", false, "untrackedcache", BoolOr(&["keep"])), ("core", false, "splitindex", Bool),
    ("core", false, "commitgraph", Bool), ("core", false, "multipackindex", Bool),
    ("core", false, "sparsecheckout", Bool), ("core", false, "sparsecheckoutcone", Bool),
    ("extensions", false, "objectformat", OneOf(&["sha1", "sha256"])),
    ("extensions", false, "refstorage", OneOf(&["files", "reftable"])),
    ("extensions", false, "worktreeconfig", Bool), ("extensions", false, "preciousobjects", Bool),
    ("extensions", false, "partialclone", Url), ("extensions", false, "noop", Text),
    ("remote", true, "url", Url), ("remote", true, "pushurl", Url),
    ("remote", true, "fetch", Refspec), ("remote", true, "push", Refspec),
    ("remote", true, "tagopt", OneOf(&["--tags", "--no-tags"])),
    ("remote", true, "prune", Bool), ("remote", true, "prunetags", Bool), ("remote", true, "mirror", Bool),
    ("remote", true, "promisor", Bool), ("remote", true, "partialclonefilter", FilterSpec),
    ("remote", true, "skipdefaultupdate", Bool), ("remote", true, "skipfetchall", Bool),
    // git >= 2.48 may write it; it only decides whether fetch updates refs/remotes/<r>/HEAD.
    ("remote", true, "followremotehead", Name),
    ("branch", true, "remote", Url), ("branch", true, "pushremote", Url), ("branch", true, "merge", Name),
    ("branch", true, "rebase", BoolOr(REBASE)), ("branch", true, "description", Multiline),
    ("user", false, "name", Text), ("user", false, "email", Text), ("init", false, "defaultbranch", Name),
    ("pull", false, "rebase", BoolOr(REBASE)), ("pull", false, "ff", BoolOr(&["only"])),
    ("fetch", false, "prune", Bool), ("fetch", false, "prunetags", Bool),
    ("fetch", false, "recursesubmodules", BoolOr(&["on-demand"])),
    ("gc", false, "auto", Int), ("gc", false, "autodetach", Bool),
    ("index", false, "version", OneOf(&["2", "3", "4"])), ("feature", false, "manyfiles", Bool),
    ("advice", false, "*", Bool),
    // Written by `git init --shared`; it only refuses non-fast-forward pushes into this repo.
    ("receive", false, "denynonfastforwards", Bool),
    // Written by `git clone --recurse-submodules` (`active = .`): a pathspec, not a command.
    ("submodule", false, "active", Text),
    ("submodule", true, "url", Url), ("submodule", true, "path", SubmodulePath),
    ("submodule", true, "branch", Name), ("submodule", true, "active", Bool), ("submodule", true, "shallow", Bool),
    ("submodule", true, "fetchrecursesubmodules", BoolOr(&["on-demand"])),
    ("submodule", true, "ignore", OneOf(&["none", "untracked", "dirty", "all"])),
    // Not `!command`, which git runs through the shell.
    ("submodule", true, "update", OneOf(&["checkout", "rebase", "merge", "none"])),
];

/// Sections or keys refused with a sharper reason than "not listed", so a user reading
/// the refusal knows it is deliberate.
#[rustfmt::skip]
pub(super) const PROGRAM_SECTIONS: &[&str] = &[
    "alias", "filter", "diff", "difftool", "merge", "mergetool", "credential", "gpg", "sequence",
    "pager", "url", "uploadpack", "protocol", "browser", "man", "sendemail", "lfs",
];
#[rustfmt::skip]
pub(super) const PROGRAM_KEYS: &[(&str, &str)] = &[
    ("core", "fsmonitor"), ("core", "hookspath"), ("core", "pager"), ("core", "editor"),
    ("core", "askpass"), ("core", "sshcommand"), ("core", "gitproxy"),
    ("core", "alternaterefscommand"), ("remote", "uploadpack"), ("remote", "receivepack"),
    ("remote", "vcs"), ("submodule", "update"), ("diff", "external"),
];

pub(super) fn check_entry(sec: &Section, key: &str, value: Option<&str>, ups: usize) -> Result<(), &'static str> {
    let kind = ALLOWED
        .iter()
        .find(|(s, has_sub, k, _)| *s == sec.name && *has_sub == sec.sub.is_some() && (*k == key || *k == "*"))
        .map(|e| e.3)
        .ok_or_else(|| why_not(&sec.name, key))?;
    if let Some(sub) = &sec.sub {
        // Remote, branch and submodule names end up in refnames and on command lines.
        if sub.is_empty() || sub.starts_with('-') {
            return Err("empty subsection name or one starting with '-'");
        }
    }
    if let Some(v) = value {
        // `!` makes git run the rest as a shell command in aliases, submodule.*.update
        // and several tools; no accepted key needs it, so refuse it everywhere.
        if v.trim_start_matches([' ', '\t']).starts_with('!') {
            return Err("value starts with '!', which git can run as a command");
        }
        if v.chars().any(|c| c.is_control() && c != '\t' && !(c == '\n' && kind == Multiline)) {
            return Err("control character in value (from an escape sequence)");
        }
    }
    check_value(kind, value, ups)
}

pub(super) fn why_not(section: &str, key: &str) -> &'static str {
    if section == "include" || section == "includeif" {
        INCLUDES
    } else if PROGRAM_SECTIONS.contains(&section) || PROGRAM_KEYS.contains(&(section, key)) {
        RUNS_PROGRAM
    } else {
        NOT_LISTED
    }
}

pub(super) fn is_bool(v: &str) -> bool {
    ["true", "false", "yes", "no", "on", "off", "1", "0", ""].iter().any(|b| v.eq_ignore_ascii_case(b))
}

pub(super) fn is_int(v: &str) -> bool {
    let digits = v.strip_prefix(['-', '+']).unwrap_or(v);
    let digits = digits.strip_suffix(['k', 'K', 'm', 'M', 'g', 'G']).unwrap_or(digits);
    (1..=18).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit())
}

pub(super) fn one_of(v: &str, words: &[&str]) -> bool {
    words.iter().any(|w| v.eq_ignore_ascii_case(w))
}

pub(super) fn check_value(kind: Kind, value: Option<&str>, ups: usize) -> Result<(), &'static str> {
    let Some(v) = value else {
        return match kind {
            Bool | BoolOr(_) => Ok(()),
            _ => Err("needs a value (key = value)"),
        };
    };
    let word = |v: &str| !v.is_empty() && !v.starts_with('-') && !v.contains(char::is_whitespace);
    let ok = match kind {
        Bool => is_bool(v),
        BoolOr(words) => is_bool(v) || one_of(v, words),
        OneOf(words) => one_of(v, words),
        Int => is_int(v),
        IntOr(words) => is_int(v) || one_of(v, words),
        Text | Multiline => true,
        Name => word(v),
        Refspec => word(v) && v.chars().all(|c| c.is_ascii_graphic()),
        FilterSpec => word(v) && v.chars().all(|c| c.is_ascii_alphanumeric() || ":=+%._-".contains(c)),
        Url => return check_url(v),
        SubmodulePath => return check_submodule_path(v),
        WorktreePath => return check_worktree(v, ups),
        SharedRepository => return check_shared(v),
    };
    if ok {
        Ok(())
    } else {
        Err("value is not one srt accepts for this key")
    }
}

/// URL shapes git fetches from without running anything but ssh or its own helpers.
pub(super) fn check_url(v: &str) -> Result<(), &'static str> {
    const DASH: &str = "URL part starting with '-' could be taken as an option by git or ssh";
    if v.is_empty() {
        return Err("empty URL");
    }
    if v.starts_with('-') {
        return Err(DASH);
    }
    // Only quoting can produce these; no tool writes them, and they would hide a '-'.
    if v.trim() != v {
        return Err("URL with leading or trailing blanks");
    }
    // `<transport>::<address>` runs git-remote-<transport>; `ext::` runs any command.
    if v.contains("::") {
        return Err("'::' in a URL makes git run a remote helper (ext:: runs any command)");
    }
    if let Some((scheme, rest)) = v.split_once("://") {
        // git runs git-remote-<scheme> for schemes it does not build in, and matches
        // schemes case-sensitively, so only these exact spellings are known to be safe.
        if !["https", "http", "ssh", "git", "file"].contains(&scheme) {
            return Err("URL scheme other than https, http, ssh, git or file makes git run a remote helper");
        }
        let authority = rest.split('/').next().unwrap_or("");
        // '%' because a decoded `%2d` would be a '-' that the checks below cannot see.
        if authority.contains(|c: char| c.is_whitespace() || c == '%') {
            return Err("blank or '%' in a URL's host part");
        }
        if authority.split(['@', ':']).any(|part| part.starts_with('-')) {
            return Err(DASH);
        }
        return Ok(());
    }
    // git reads `[user@]host:path` as ssh when a ':' comes before any '/'; otherwise the
    // value is a local path (absolute, ./, ../ or relative), which runs nothing.
    match v.find(':') {
        Some(colon) if !v[..colon].contains('/') => {
            let (host, path) = (&v[..colon], &v[colon + 1..]);
            if host.is_empty() || host.contains(char::is_whitespace) {
                return Err("malformed host in a host:path URL");
            }
            if host.split('@').chain([path]).any(|part| part.starts_with('-')) {
                return Err(DASH);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// A path below the superproject's work tree, as `git submodule add` writes it; git also
/// refuses `..` and `.git` components itself, this just refuses earlier.
pub(super) fn check_submodule_path(v: &str) -> Result<(), &'static str> {
    let bad = |c: &str| c.is_empty() || c == "." || c == ".." || c.eq_ignore_ascii_case(".git");
    if v.starts_with(['/', '-']) || v.split('/').any(bad) {
        return Err("submodule path must be relative, inside the work tree, without '.git' parts");
    }
    Ok(())
}

/// The shape git writes for a submodule's git dir: `../../sub`, i.e. some `..` then plain
/// names. An absolute path could aim later git commands (checkout, clean) at any directory.
pub(super) fn check_worktree(v: &str, max_ups: usize) -> Result<(), &'static str> {
    const SHAPE: &str = "core.worktree must be relative: '../' steps, then plain directory names";
    let mut parts = v.split('/').peekable();
    let mut ups = 0;
    while parts.next_if_eq(&"..").is_some() {
        ups += 1;
    }
    let rest: Vec<&str> = parts.collect();
    let plain = |c: &&str| !c.is_empty() && *c != "." && *c != ".." && !c.eq_ignore_ascii_case(".git");
    if ups == 0 || rest.is_empty() || !rest.iter().all(plain) || v.starts_with('-') {
        return Err(SHAPE);
    }
    if ups > max_ups {
        return Err("core.worktree leads out of the repository's tree, where a later git checkout would write");
    }
    Ok(())
}

/// `git init --shared=...` values; octal modes only when others cannot write, since a
/// world-writable git dir lets any local user plant hooks or config.
pub(super) fn check_shared(v: &str) -> Result<(), &'static str> {
    const WORDS: &[&str] = &["false", "umask", "no", "off", "0", "true", "group", "yes", "on", "1"];
    if one_of(v, WORDS) || one_of(v, &["all", "world", "everybody", "2"]) {
        return Ok(());
    }
    let octal = (3..=4).contains(&v.len()) && v.bytes().all(|b| (b'0'..=b'7').contains(&b));
    match u32::from_str_radix(v, 8) {
        Ok(mode) if octal && mode & 0o002 == 0 => Ok(()),
        _ => Err("core.sharedrepository must be a git sharing word or an octal mode others cannot write"),
    }
}

#[cfg(test)]
#[path = "config_keys_tests.rs"]
mod tests;

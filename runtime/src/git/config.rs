//! Decides whether a git `config` file written by a sandboxed command may be installed
//! into a git directory the command created. The user later runs git there unsandboxed,
//! and many keys make git run a program (`core.fsmonitor`, `alias.*`, `filter.*`, ...),
//! so this is an allow-list: a refusal costs the user a re-run of `git config`, an
//! acceptance of something not understood could be a sandbox escape.
//!
//! The parser is a port of git's own (`config.c`: `git_parse_source`, `get_base_var`,
//! `get_value`, `parse_value`) restricted to the subset git itself writes, so the keys
//! and values checked here are the ones git will see. Anything outside that subset
//! (continuations, old-style `[a.b]` headers, odd escapes) is refused rather than modelled.
//!
//! Not covered here, and left to the caller: with `extensions.worktreeConfig` git also
//! reads `config.worktree` (in the git dir and in `worktrees/<name>/`), which must pass
//! this same check. `core.worktree` must be relative (`..` steps, then plain names) with
//! at most as many `..` steps as the caller says keep it inside the repository's tree
//! ([`check_at`]), because only the caller knows where the config file lives.

/// Larger files are refused outright: git writes a few hundred bytes even for repositories
/// with many remotes and submodules, and a cap bounds the work done per rename.
pub const MAX_LEN: usize = 64 * 1024;

/// Why a config was refused: 1-based line, the key as written (or the offending text),
/// and a reason a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {what}: {reason}")]
pub struct Refusal {
    pub line: usize,
    pub what: String,
    pub reason: &'static str,
}

const SYNTAX: &str = "config syntax outside what git writes, so srt does not accept it";
const RUNS_PROGRAM: &str = "can make git run a program, so a sandboxed command may not set it";
const INCLUDES: &str = "makes git read another file as config, so a sandboxed command may not set it";
const NOT_LISTED: &str = "not on srt's list of git config keys a sandboxed command may set";

/// [`check_at`] for the `config` of a top-level `.git`: a `core.worktree` may only name a
/// directory below the one holding `.git`.
pub fn check(text: &[u8]) -> Result<(), Refusal> {
    check_at(text, 1)
}

/// Ok when every line of `text` is a comment, blank, a section header of an allowed
/// section, or an allowed key with a safe value. `worktree_ups` is how many `..` steps
/// lead from the git directory to the top of the repository's tree (1 for `.git`, 4 for
/// `.git/modules/a/b`, 0 for a bare repository, which then may not name a work tree):
/// git writes `core.worktree` only for submodules, pointing back into the superproject,
/// and a work tree elsewhere would let a later host `git checkout` write there.
pub fn check_at(text: &[u8], worktree_ups: usize) -> Result<(), Refusal> {
    let line_at = |pos: usize| 1 + text[..pos.min(text.len())].iter().filter(|&&b| b == b'\n').count();
    if text.len() > MAX_LEN {
        let what = format!("{} bytes", text.len());
        return Err(refuse(line_at(MAX_LEN), what, "larger than the 64 KiB srt accepts for a git config"));
    }
    let text = std::str::from_utf8(text)
        .map_err(|e| refuse(line_at(e.valid_up_to()), "invalid UTF-8".into(), "git config must be UTF-8"))?;
    // git skips a UTF-8 BOM at the very start (Notepad writes one); older gits reject the
    // file instead, which is harmless. Anywhere else a BOM is just a stray character.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut section = None;
    for (i, raw) in text.split('\n').enumerate() {
        let line = i + 1;
        // git turns CRLF into LF but treats a lone CR as whitespace; only the former is
        // something editors produce, so a lone CR falls to the control-character check.
        let l = raw.strip_suffix('\r').unwrap_or(raw);
        if let Some(c) = l.chars().find(|&c| (c.is_control() && c != '\t') || c == '\u{feff}') {
            return Err(refuse(line, format!("{c:?}"), "control character (only tab is accepted)"));
        }
        parse_line(l, line, &mut section, worktree_ups)?;
    }
    Ok(())
}

/// The value of `core.<key>` (lowercase) in a config the user wrote, read leniently (the
/// allow-list's parser refuses much that git accepts): the last one wins, as in git.
/// `None` when it is not set.
pub fn core_value(text: &[u8], key: &str) -> Option<String> {
    entries(text).into_iter().filter(|(s, _, k, _)| s == "core" && k == key).map(|(_, _, _, v)| v).next_back()
}

/// Every `section`, subsection, `key` (both lowercased; the subsection as written) and
/// value of a config the user wrote, read leniently, in order.
pub fn entries(text: &[u8]) -> Vec<(String, Option<String>, String, String)> {
    let text = String::from_utf8_lossy(text);
    let mut out = Vec::new();
    let mut section: Option<(String, Option<String>)> = None;
    for l in text.lines() {
        let mut rest = l.trim_start_matches([' ', '\t']);
        if let Some(h) = rest.strip_prefix('[') {
            let Some((head, after)) = h.split_once(']') else { continue };
            let (name, sub) = match head.split_once([' ', '\t']) {
                Some((n, q)) => (n, Some(q.trim().trim_matches('"').replace("\\\"", "\"").replace("\\\\", "\\"))),
                None => (head, None),
            };
            section = Some((name.to_ascii_lowercase(), sub));
            rest = after.trim_start_matches([' ', '\t']);
        }
        let Some((sec, sub)) = &section else { continue };
        let Some((k, v)) = rest.split_once('=') else { continue };
        if let Ok(v) = parse_value(v) {
            out.push((sec.clone(), sub.clone(), k.trim().to_ascii_lowercase(), v));
        }
    }
    out
}

fn refuse(line: usize, what: String, reason: &'static str) -> Refusal {
    Refusal { line, what, reason }
}

/// The offending text for syntax refusals, short enough for one terminal line.
fn snippet(s: &str) -> String {
    s.chars().take(60).collect()
}

struct Section {
    /// Lowercased: git compares section names case-insensitively.
    name: String,
    /// As written: git compares subsection names case-sensitively.
    sub: Option<String>,
    /// The section as written, for messages (`CORE`, `remote.origin`).
    shown: String,
}

/// One physical line, following git's top-level loop: whitespace and comments are
/// skipped, a header may be followed on the same line by another header or an entry
/// (git accepts `[core] bare = true`), and an entry runs to the end of the line (since
/// continuations are refused, a value can never reach the next line).
fn parse_line(l: &str, line: usize, section: &mut Option<Section>, ups: usize) -> Result<(), Refusal> {
    let mut rest = l;
    loop {
        rest = rest.trim_start_matches([' ', '\t']);
        match rest.chars().next() {
            None | Some('#' | ';') => return Ok(()),
            Some('[') => {
                let (sec, after) = parse_header(&rest[1..]).map_err(|r| refuse(line, snippet(rest), r))?;
                *section = Some(sec);
                rest = after;
            }
            Some(c) if c.is_ascii_alphabetic() => return parse_entry(rest, line, section.as_ref(), ups),
            Some(_) => return Err(refuse(line, snippet(rest), SYNTAX)),
        }
    }
}

/// After the `[`: `name]` or `name "sub"]`, returning the rest of the line.
fn parse_header(s: &str) -> Result<(Section, &str), &'static str> {
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).ok_or("unterminated section header")?;
    let name = &s[..end];
    if name.is_empty() {
        return Err(SYNTAX);
    }
    let section = |sub: Option<String>| {
        let shown = sub.as_ref().map_or_else(|| name.to_string(), |sub| format!("{name}.{sub}"));
        Section { name: name.to_ascii_lowercase(), sub, shown }
    };
    let tail = &s[end..];
    if let Some(after) = tail.strip_prefix(']') {
        return Ok((section(None), after));
    }
    if tail.starts_with('.') {
        // git reads `[a.b]` as section a, subsection b lowercased: a second syntax for the
        // same keys that git never writes, so one fewer thing to get right.
        return Err("old-style [section.subsection] header; write [section \"subsection\"]");
    }
    let quoted = tail.trim_start_matches([' ', '\t']);
    if quoted.len() == tail.len() || !quoted.starts_with('"') {
        return Err(SYNTAX);
    }
    let mut sub = String::new();
    let mut chars = quoted[1..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => {
                let after = quoted[1 + i + 1..].strip_prefix(']').ok_or(SYNTAX)?;
                return Ok((section(Some(sub)), after));
            }
            // git takes `\x` as `x` for any x; only the two escapes it writes are accepted.
            '\\' => match chars.next() {
                Some((_, e @ ('"' | '\\'))) => sub.push(e),
                _ => return Err("escape in a subsection name other than \\\" or \\\\"),
            },
            c => sub.push(c),
        }
    }
    Err("unterminated section header")
}

/// `key`, `key = value`: git's `get_value`. A key must start with a letter (checked by the
/// caller) and continue with letters, digits or `-`; only blanks may separate it from `=`.
fn parse_entry(s: &str, line: usize, section: Option<&Section>, ups: usize) -> Result<(), Refusal> {
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).unwrap_or(s.len());
    let key = &s[..end];
    let after = s[end..].trim_start_matches([' ', '\t']);
    let Some(sec) = section else {
        return Err(refuse(line, key.to_string(), "key before any [section] header"));
    };
    let what = || format!("{}.{key}", sec.shown);
    let value = if after.is_empty() {
        // git's "no value", which booleans read as true and everything else rejects.
        None
    } else if let Some(v) = after.strip_prefix('=') {
        Some(parse_value(v).map_err(|r| refuse(line, what(), r))?)
    } else {
        return Err(refuse(line, snippet(s), SYNTAX));
    };
    check_entry(sec, &key.to_ascii_lowercase(), value.as_deref(), ups).map_err(|r| refuse(line, what(), r))
}

/// git's `parse_value`, for the text after `=` on one line: unquoted blanks are trimmed at
/// both ends but kept inside, `#`/`;` outside quotes start a comment, quotes toggle and
/// vanish, and only the escapes git knows are accepted (git rejects the others too).
fn parse_value(s: &str) -> Result<String, &'static str> {
    let (mut value, mut quote, mut trim_len) = (String::new(), false, 0);
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if (c == ' ' || c == '\t') && !quote {
            // Mirrors git exactly: remember where trailing blanks start, drop leading ones.
            if trim_len == 0 {
                trim_len = value.len();
            }
            if !value.is_empty() {
                value.push(c);
            }
            continue;
        }
        if !quote && (c == '#' || c == ';') {
            break;
        }
        trim_len = 0;
        match c {
            '"' => quote = !quote,
            '\\' => value.push(match chars.next() {
                // A backslash at the end of the line joins the next line onto this value:
                // refused, so that each line can be judged on its own.
                None => return Err("line continuation (value ends in a backslash)"),
                Some('t') => '\t',
                Some('b') => '\u{8}',
                Some('n') => '\n',
                Some(e @ ('\\' | '"')) => e,
                Some(_) => return Err("unknown escape sequence in value (git rejects it too)"),
            }),
            c => value.push(c),
        }
    }
    if quote {
        return Err("unbalanced quote in value");
    }
    if trim_len > 0 {
        value.truncate(trim_len);
    }
    Ok(value)
}

/// How a value is judged. Each variant is the narrowest shape git writes for the key.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
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

const REBASE: &[&str] = &["merges", "m", "interactive", "i"];

/// (section, has subsection, key, kind); `*` matches any key. Everything here only
/// changes how git lays out or names data, or where it fetches from / pushes to.
#[rustfmt::skip]
const ALLOWED: &[(&str, bool, &str, Kind)] = &[
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
const PROGRAM_SECTIONS: &[&str] = &[
    "alias", "filter", "diff", "difftool", "merge", "mergetool", "credential", "gpg", "sequence",
    "pager", "url", "uploadpack", "protocol", "browser", "man", "sendemail", "lfs",
];
#[rustfmt::skip]
const PROGRAM_KEYS: &[(&str, &str)] = &[
    ("core", "fsmonitor"), ("core", "hookspath"), ("core", "pager"), ("core", "editor"),
    ("core", "askpass"), ("core", "sshcommand"), ("core", "gitproxy"),
    ("core", "alternaterefscommand"), ("remote", "uploadpack"), ("remote", "receivepack"),
    ("remote", "vcs"), ("submodule", "update"), ("diff", "external"),
];

fn check_entry(sec: &Section, key: &str, value: Option<&str>, ups: usize) -> Result<(), &'static str> {
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

fn why_not(section: &str, key: &str) -> &'static str {
    if section == "include" || section == "includeif" {
        INCLUDES
    } else if PROGRAM_SECTIONS.contains(&section) || PROGRAM_KEYS.contains(&(section, key)) {
        RUNS_PROGRAM
    } else {
        NOT_LISTED
    }
}

fn is_bool(v: &str) -> bool {
    ["true", "false", "yes", "no", "on", "off", "1", "0", ""].iter().any(|b| v.eq_ignore_ascii_case(b))
}

fn is_int(v: &str) -> bool {
    let digits = v.strip_prefix(['-', '+']).unwrap_or(v);
    let digits = digits.strip_suffix(['k', 'K', 'm', 'M', 'g', 'G']).unwrap_or(digits);
    (1..=18).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit())
}

fn one_of(v: &str, words: &[&str]) -> bool {
    words.iter().any(|w| v.eq_ignore_ascii_case(w))
}

fn check_value(kind: Kind, value: Option<&str>, ups: usize) -> Result<(), &'static str> {
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
fn check_url(v: &str) -> Result<(), &'static str> {
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
fn check_submodule_path(v: &str) -> Result<(), &'static str> {
    let bad = |c: &str| c.is_empty() || c == "." || c == ".." || c.eq_ignore_ascii_case(".git");
    if v.starts_with(['/', '-']) || v.split('/').any(bad) {
        return Err("submodule path must be relative, inside the work tree, without '.git' parts");
    }
    Ok(())
}

/// The shape git writes for a submodule's git dir: `../../sub`, i.e. some `..` then plain
/// names. An absolute path could aim later git commands (checkout, clean) at any directory.
fn check_worktree(v: &str, max_ups: usize) -> Result<(), &'static str> {
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
fn check_shared(v: &str) -> Result<(), &'static str> {
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
mod core_value_tests {
    use super::core_value;

    #[test]
    fn reads_hooks_path_as_git_does() {
        let c =
            b"[core]\n\tbare = false\n[remote \"o\"]\n\thooksPath = no\n[CORE]\n\thooksPath = \".husky/_\"  # husky\n";
        assert_eq!(core_value(c, "hookspath").as_deref(), Some(".husky/_"));
        assert_eq!(core_value(b"[core] hooksPath = a\n[core]\nhookspath=b\n", "hookspath").as_deref(), Some("b"));
        assert_eq!(core_value(b"[user]\nname = x\n", "hookspath"), None);
        let e = super::entries(b"[includeIf \"gitdir:~/w/\"]\n\tpath = ~/.w.inc\n[init]\ntemplateDir=/t\n");
        assert_eq!(e[0], ("includeif".into(), Some("gitdir:~/w/".into()), "path".into(), "~/.w.inc".into()));
        assert_eq!(e[1].3, "/t");
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;

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

use super::config_keys::{check_entry, Section};

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

//! srt's own options end where the command starts: at the first word that is not an
//! option, after `--`, or with `-c STRING`. Everything after belongs to the command
//! (srt 0.0.83's rule). clap, told to keep the command's hyphenated words, would take a
//! misspelt option for the start of the command and hand it to bash; this check finds
//! such a word first and names the option that was probably meant.

use std::ffi::OsString;

/// srt's options: long name, short letter, and whether a value follows.
const OPTIONS: &[(&str, Option<char>, bool)] = &[
    ("settings", Some('s'), true),
    ("debug", Some('d'), false),
    ("explain", None, false),
    ("allow-weaker", None, false),
    ("network-mode", None, true),
    ("resolve", None, true),
    ("control-fd", None, true),
    ("no-network-hints", None, false),
    ("no-preload", None, false),
    ("help", Some('h'), false),
    ("version", Some('V'), false),
];

/// An unknown option before the command: the message srt prints (exit status 2).
pub fn check(args: &[OsString]) -> Result<(), String> {
    let mut i = 1;
    while i < args.len() {
        let Some(a) = args[i].to_str() else { return Ok(()) }; // not an option: the command
        if a == "--" || !a.starts_with('-') || a == "-" {
            return Ok(());
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            match OPTIONS.iter().find(|o| o.0 == name) {
                Some(&(_, _, takes)) => i += if takes && !inline { 2 } else { 1 },
                None => return Err(unknown(&format!("--{name}"))),
            }
            continue;
        }
        // short options, possibly bundled: -dc 'cmd', -sFILE
        let letters: Vec<char> = a[1..].chars().collect();
        let mut j = 0;
        let mut skip_next = false;
        while j < letters.len() {
            let c = letters[j];
            if c == 'c' {
                // `-c STRING`: the command; nothing after it is srt's
                return Ok(());
            }
            match OPTIONS.iter().find(|o| o.1 == Some(c)) {
                Some(&(_, _, true)) => {
                    skip_next = j + 1 == letters.len();
                    break;
                }
                Some(_) => j += 1,
                None => return Err(unknown(&format!("-{c}"))),
            }
        }
        i += if skip_next { 2 } else { 1 };
    }
    Ok(())
}

fn unknown(opt: &str) -> String {
    match suggest(opt) {
        Some(s) => format!("srt: unknown option {opt} (did you mean {s}?)\nTry 'srt --help' for more information."),
        None => format!("srt: unknown option {opt}\nTry 'srt --help' for more information."),
    }
}

/// The closest option by edit distance, if it is close enough to be a typo.
fn suggest(opt: &str) -> Option<String> {
    let word = opt.trim_start_matches('-');
    let mut best: Option<(usize, String)> = None;
    for (long, _, _) in OPTIONS {
        let d = distance(word, long);
        if d <= 2.max(long.len() / 4) && best.as_ref().is_none_or(|b| d < b.0) {
            best = Some((d, format!("--{long}")));
        }
    }
    best.map(|b| b.1)
}

fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<OsString> {
        std::iter::once("srt").chain(a.iter().copied()).map(OsString::from).collect()
    }

    #[test]
    fn misspelt_options_are_named_with_a_suggestion() {
        let e = check(&args(&["--setings", "s.json", "-c", "true"])).unwrap_err();
        assert!(e.starts_with("srt: unknown option --setings (did you mean --settings?)"), "{e}");
        let e = check(&args(&["--network-mod", "landlock", "-c", "x"])).unwrap_err();
        assert!(e.contains("did you mean --network-mode?"), "{e}");
        let e = check(&args(&["--frobnicate", "-c", "x"])).unwrap_err();
        assert!(e.starts_with("srt: unknown option --frobnicate\n"), "no suggestion for a word far from all: {e}");
        assert!(check(&args(&["-x", "-c", "true"])).is_err());
        assert!(check(&args(&["-dx"])).is_err());
    }

    #[test]
    fn everything_after_the_command_starts_is_the_commands() {
        assert!(check(&args(&["-s", "s.json", "-c", "ls --setings"])).is_ok());
        assert!(check(&args(&["-c", "true", "--bogus"])).is_ok(), "after -c STRING");
        assert!(check(&args(&["-dc", "true"])).is_ok());
        assert!(check(&args(&["--", "ls", "--bogus"])).is_ok());
        assert!(check(&args(&["ls", "--bogus"])).is_ok());
        assert!(check(&args(&["--settings=s.json", "grep", "-r", "x"])).is_ok());
        assert!(check(&args(&["-s", "--weird-file-name", "ls"])).is_ok(), "a value is never an option");
        assert!(check(&args(&["-ss.json", "ls"])).is_ok());
        assert!(check(&args(&["--network-mode", "landlock", "--resolve", "a:1:b", "--control-fd", "3", "ls"])).is_ok());
    }
}

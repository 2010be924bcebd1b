//! "Did you mean" for unknown keys.

/// The known key closest to `key` by edit distance (case-insensitive), if it is close
/// enough to be a plausible typo.
pub fn nearest<'a>(key: &str, known: &[&'a str]) -> Option<&'a str> {
    let k = key.to_ascii_lowercase();
    known
        .iter()
        .map(|c| (levenshtein(&k, &c.to_ascii_lowercase()), *c))
        .filter(|(d, c)| *d <= (c.len() / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_their_key() {
        let known = ["allowedDomains", "deniedDomains", "allowUnixSockets"];
        assert_eq!(nearest("deniedDomain", &known), Some("deniedDomains"));
        assert_eq!(nearest("alowedDomains", &known), Some("allowedDomains"));
        assert_eq!(nearest("AllowedDomains", &known), Some("allowedDomains"));
        assert_eq!(nearest("credentials", &known), None);
    }
}

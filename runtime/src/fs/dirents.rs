//! The records `getdents64` fills a buffer with, read one way for every listing srt makes
//! itself (the launch's search, the pool, TMPDIR's removal): a record the kernel could not
//! have written (a length too short or past the bytes read) ends the listing as an error
//! rather than a panic or an endless loop.

/// `struct linux_dirent64`: u64 ino, i64 off, u16 reclen, u8 type, then the name.
const NAME_AT: usize = 19;

/// The entries in `buf` (the bytes one `getdents64` call returned) but `.` and `..`, as
/// (name, `d_type`); `Err(())` at a malformed record.
pub(crate) fn records(buf: &[u8]) -> impl Iterator<Item = Result<(&[u8], u8), ()>> {
    let mut off = 0usize;
    std::iter::from_fn(move || loop {
        if off + NAME_AT >= buf.len() {
            return None;
        }
        let reclen = usize::from(u16::from_ne_bytes([buf[off + 16], buf[off + 17]]));
        if reclen <= NAME_AT || off + reclen > buf.len() {
            off = buf.len();
            return Some(Err(()));
        }
        let kind = buf[off + 18];
        let name = &buf[off + NAME_AT..off + reclen];
        // the kernel ends each name at its first NUL
        let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
        off += reclen;
        if name != b"." && name != b".." {
            return Some(Ok((name, kind)));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::records;

    fn record(name: &[u8], kind: u8) -> Vec<u8> {
        let len = (super::NAME_AT + name.len() + 1).next_multiple_of(8);
        let mut r = vec![0u8; len];
        r[16..18].copy_from_slice(&(len as u16).to_ne_bytes());
        r[18] = kind;
        r[super::NAME_AT..super::NAME_AT + name.len()].copy_from_slice(name);
        r
    }

    #[test]
    fn names_but_dot_entries_and_malformed_records_end_as_errors() {
        let mut buf = [record(b".", 4), record(b"..", 4), record(b"a", 8), record(b"dir", 4)].concat();
        let got: Vec<_> = records(&buf).collect();
        assert_eq!(got, vec![Ok((&b"a"[..], 8)), Ok((&b"dir"[..], 4))]);
        // a zero length (the loop would never move on) and one past the end
        let at = buf.len();
        buf.extend(record(b"x", 8));
        buf[at + 16..at + 18].copy_from_slice(&0u16.to_ne_bytes());
        assert_eq!(records(&buf).last(), Some(Err(())));
        buf[at + 16..at + 18].copy_from_slice(&4096u16.to_ne_bytes());
        assert_eq!(records(&buf).last(), Some(Err(())));
    }
}

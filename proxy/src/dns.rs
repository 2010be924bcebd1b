//! The DNS messages of transparent mode's stub resolver: one question in, one answer out,
//! built from the policy alone. The stub never asks another server, so a query can carry
//! nothing out of the sandbox. Pure functions over bytes.

use std::net::Ipv4Addr;

/// What the stub says about one question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// An allowed name asked for its IPv4 address.
    A(Ipv4Addr),
    /// An allowed name asked for another type (AAAA, HTTPS, MX, ...): no records, so the
    /// client uses the A answer.
    NoData,
    /// Not allowed: the name does not exist for the command.
    NxDomain,
    /// The stub cannot answer (the synthetic pool is spent).
    ServFail,
}

/// The question of a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// Lowercase, dot-separated, no trailing dot.
    pub name: String,
    pub qtype: u16,
}

pub const TYPE_A: u16 = 1;
const CLASS_IN: u16 = 1;
const RCODE_FORMERR: u8 = 1;
const RCODE_SERVFAIL: u8 = 2;
const RCODE_NXDOMAIN: u8 = 3;
const RCODE_NOTIMP: u8 = 4;
/// Seconds a client may cache an answer. Addresses never change meaning within a run;
/// short anyway, so a policy reload is seen soon by clients that cache.
const TTL: u32 = 5;

/// Why a query gets no [`Answer`] from the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bad {
    /// Too short for a header: dropped without a reply.
    Drop,
    /// Answered with this rcode and no records.
    Rcode(u8),
}

/// Reads the one question of a standard query.
pub fn question(msg: &[u8]) -> Result<Question, Bad> {
    if msg.len() < 12 {
        return Err(Bad::Drop);
    }
    if msg[2] & 0x80 != 0 {
        return Err(Bad::Drop); // a response, not a query
    }
    let opcode = (msg[2] >> 3) & 0x0f;
    if opcode != 0 {
        return Err(Bad::Rcode(RCODE_NOTIMP));
    }
    if u16::from_be_bytes([msg[4], msg[5]]) != 1 {
        return Err(Bad::Rcode(RCODE_FORMERR));
    }
    let (name, end) = read_name(msg, 12).ok_or(Bad::Rcode(RCODE_FORMERR))?;
    let fixed = msg.get(end..end + 4).ok_or(Bad::Rcode(RCODE_FORMERR))?;
    let qtype = u16::from_be_bytes([fixed[0], fixed[1]]);
    let qclass = u16::from_be_bytes([fixed[2], fixed[3]]);
    if qclass != CLASS_IN {
        return Err(Bad::Rcode(RCODE_NOTIMP));
    }
    Ok(Question { name, qtype })
}

/// An uncompressed name of host-name characters (queries carry no compression).
fn read_name(msg: &[u8], mut at: usize) -> Option<(String, usize)> {
    let mut name = String::new();
    loop {
        let len = usize::from(*msg.get(at)?);
        at += 1;
        if len == 0 {
            break;
        }
        if len > 63 {
            return None; // a compression pointer or a reserved label type
        }
        let label = msg.get(at..at + len)?;
        if !label.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_')) {
            return None;
        }
        if !name.is_empty() {
            name.push('.');
        }
        name.push_str(&String::from_utf8_lossy(label).to_ascii_lowercase());
        at += len;
        if name.len() > 253 {
            return None;
        }
    }
    Some((name, at))
}

/// The reply to `query`: `answer` for its question, or the rcode of what was wrong with
/// it; `None` when it is not worth a reply.
pub fn reply(query: &[u8], answer: impl FnOnce(&Question) -> Answer) -> Option<Vec<u8>> {
    let (rcode, record, qend) = match question(query) {
        Ok(q) => {
            let qend = 12 + encoded_len(&q.name) + 4;
            match answer(&q) {
                Answer::A(a) if q.qtype == TYPE_A => (0, Some(a), qend),
                Answer::A(_) | Answer::NoData => (0, None, qend),
                Answer::NxDomain => (RCODE_NXDOMAIN, None, qend),
                Answer::ServFail => (RCODE_SERVFAIL, None, qend),
            }
        }
        Err(Bad::Drop) => return None,
        Err(Bad::Rcode(r)) => (r, None, 12),
    };
    let mut out = Vec::with_capacity(qend + 16);
    out.extend_from_slice(&query[..2]); // id
                                        // QR, the query's opcode and RD, AA (we are the authority here), RA
    out.push(0x80 | (query[2] & 0x79) | 0x04);
    out.push(0x80 | rcode);
    let qd: u16 = if qend > 12 { 1 } else { 0 };
    out.extend(qd.to_be_bytes());
    out.extend(u16::from(record.is_some()).to_be_bytes());
    out.extend([0, 0, 0, 0]); // no authority, no additional records
    out.extend_from_slice(&query[12..qend]);
    if let Some(a) = record {
        out.extend([0xc0, 12]); // the question's name
        out.extend(TYPE_A.to_be_bytes());
        out.extend(CLASS_IN.to_be_bytes());
        out.extend(TTL.to_be_bytes());
        out.extend(4u16.to_be_bytes());
        out.extend(a.octets());
    }
    Some(out)
}

/// Bytes of `name` in wire form (labels plus the root's zero).
fn encoded_len(name: &str) -> usize {
    if name.is_empty() {
        1
    } else {
        name.len() + 2
    }
}

#[cfg(test)]
#[path = "dns_tests.rs"]
mod tests;

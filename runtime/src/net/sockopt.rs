//! Which socket options srt carries over to a socket it makes in place of the command's
//! (in pods, where it cannot take the command's own, and for a local connect). srt sets
//! them with the bytes the command passed, in its own address space and with its own
//! descriptor table: only options whose value is plain data (integers, `struct linger`,
//! `struct timeval`) qualify. One that holds a pointer (`SO_ATTACH_FILTER`'s program), a
//! descriptor number (`SO_ATTACH_BPF`) or anything srt does not know is left out: the
//! replacement then lacks it, rather than srt acting on its own memory or descriptors.

/// Whether `(level, name)` is an option srt may set again from the command's bytes.
pub fn replayable(level: i32, name: i32) -> bool {
    use libc::*;
    match level {
        SOL_SOCKET => matches!(
            name,
            SO_KEEPALIVE
                | SO_LINGER
                | SO_RCVBUF
                | SO_SNDBUF
                | SO_RCVTIMEO
                | SO_SNDTIMEO
                | SO_REUSEADDR
                | SO_OOBINLINE
                | SO_PRIORITY
                | SO_RCVLOWAT
                | SO_SNDLOWAT
                | SO_TIMESTAMP
                | SO_TIMESTAMPNS
                | SO_BROADCAST
                | SO_DONTROUTE
                | SO_PASSCRED
                | SO_BUSY_POLL
                | SO_INCOMING_CPU
        ),
        IPPROTO_TCP => matches!(
            name,
            TCP_NODELAY
                | TCP_KEEPIDLE
                | TCP_KEEPINTVL
                | TCP_KEEPCNT
                | TCP_USER_TIMEOUT
                | TCP_QUICKACK
                | TCP_CORK
                | TCP_MAXSEG
                | TCP_SYNCNT
                | TCP_LINGER2
                | TCP_WINDOW_CLAMP
                | TCP_NOTSENT_LOWAT
        ),
        IPPROTO_IP => matches!(name, IP_TOS | IP_TTL | IP_RECVERR),
        IPPROTO_IPV6 => matches!(name, IPV6_V6ONLY | IPV6_TCLASS | IPV6_UNICAST_HOPS | IPV6_RECVERR),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_values_are_carried_over() {
        assert!(replayable(libc::IPPROTO_TCP, libc::TCP_NODELAY));
        assert!(replayable(libc::SOL_SOCKET, libc::SO_KEEPALIVE));
        assert!(replayable(libc::SOL_SOCKET, libc::SO_LINGER));
        assert!(replayable(libc::SOL_SOCKET, libc::SO_RCVTIMEO));
        assert!(replayable(libc::IPPROTO_IPV6, libc::IPV6_V6ONLY));
    }

    #[test]
    fn pointers_descriptors_and_the_unknown_are_not() {
        assert!(!replayable(libc::SOL_SOCKET, libc::SO_ATTACH_FILTER), "a pointer to a program");
        assert!(!replayable(libc::SOL_SOCKET, libc::SO_ATTACH_BPF), "a descriptor number");
        assert!(!replayable(libc::SOL_SOCKET, libc::SO_ATTACH_REUSEPORT_CBPF));
        assert!(!replayable(libc::SOL_SOCKET, libc::SO_BINDTODEVICE));
        assert!(!replayable(libc::IPPROTO_TCP, libc::TCP_MD5SIG));
        assert!(!replayable(libc::IPPROTO_TCP, libc::TCP_FASTOPEN_CONNECT));
        assert!(!replayable(libc::IPPROTO_IP, libc::IP_OPTIONS));
        assert!(!replayable(libc::SOL_SOCKET, 9999));
        assert!(!replayable(12345, libc::TCP_NODELAY), "an unknown level");
    }
}

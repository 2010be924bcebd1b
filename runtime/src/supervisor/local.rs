//! Landlock mode's connects to loopback: they reach a listener the command made, and
//! nothing else (not the host's, not another run's). The supervisor asks the kernel which
//! listener each candidate address would reach ([`crate::net::sock_diag`]: the lookup an
//! incoming SYN gets), connects only to one srt made listen for this run, and asks again
//! once the handshake is done: if the port changed hands in between (the command closed
//! its listener and a host process took the port), the connection is undone and refused
//! before the command can send a byte on it. The socket connected is always one of srt's
//! own, installed at the command's descriptor number only once checked, and only once the
//! kernel says its handshake is done: a connect that returned early (TCP Fast Open's
//! deferred connect, carried over from the command's options) would send its SYN at the
//! command's first write, to whoever has the port by then.

use std::net::SocketAddr;
use std::os::fd::AsFd;

use super::sockets;
use super::state::Known;
use super::{Call, Outcome};
use crate::net::local_addr;
use crate::net::shown_addr::{self, Asked};
use crate::net::sock_diag::{self, Listener};
use crate::net::Route;

/// How long srt waits for a handshake with the command's own listener.
const CONNECT_LIMIT_MS: i32 = 10_000;

impl Call<'_> {
    pub(super) fn connect_local(&self, route: &Route, sockfd: i32, v6: bool, dest: SocketAddr) -> Outcome {
        let (target, listener) = match self.own_listener(route, dest) {
            Ok(found) => found,
            Err(e) => return Outcome::Fail(e),
        };
        let Some(to) = local_addr::in_family(target, v6) else { return Outcome::Fail(libc::ENETUNREACH) };
        // Always a socket of ours, put in the command's place only once checked: while the
        // command's own socket connected, another of its threads could already write on it.
        let family = if v6 { libc::AF_INET6 } else { libc::AF_INET };
        let placed = self.replace_socket_keeping(sockfd, family, libc::SOCK_STREAM, |sock| {
            // TCP Fast Open's deferred connect (carried over from the command's socket)
            // would send the SYN at the command's first write, to whoever has the port then
            sockets::no_deferred_connect(sock.as_fd());
            // from 127.0.0.1, as on a shared loopback, so that the command's server sees
            // the peer it would see without srt (the port is picked by connect); should
            // this fail, the kernel picks the source, the run's address
            sockets::set_int_option(sock.as_fd(), libc::IPPROTO_IP, libc::IP_BIND_ADDRESS_NO_PORT, 1);
            sockets::bind_to(sock.as_fd(), &shown_addr::client_source(v6));
            // bounded: a listener whose backlog is full drops SYNs for as long as it likes
            super::sys::set_nonblocking(sock.as_fd(), true);
            let r = sockets::connect_settled(sock.as_fd(), &to, CONNECT_LIMIT_MS);
            super::sys::set_nonblocking(sock.as_fd(), false);
            match r {
                // only a handshake done with the listener checked before and after counts:
                // whatever else let connect() return (a deferred SYN) is refused
                0 if sockets::handshake_done(sock.as_fd()) && still_listening(target, listener) => 0,
                0 => {
                    // dropping our socket would do too; say so to the listener at once
                    sockets::disconnect(sock.as_fd());
                    libc::EACCES
                }
                e => e,
            }
        });
        match placed {
            Ok(sock) => {
                if let Ok(st) = super::sys::fstat(sock.as_fd()) {
                    let (own, peer) = (sockets::local_name(sock.as_fd()), sockets::peer_name(sock.as_fd()));
                    self.remember(st.st_ino, Known { asked: Asked::Dialed(dest), own, peer });
                }
                Outcome::Value(0)
            }
            Err(o) => o,
        }
    }

    /// The first candidate address whose listener srt made for this run. Refused with
    /// `ECONNREFUSED` where nothing listens (what a client polling for its server expects),
    /// `EACCES` where someone else's listener is.
    fn own_listener(&self, route: &Route, dest: SocketAddr) -> Result<(SocketAddr, Listener), i32> {
        let mut someone_elses = false;
        for c in local_addr::candidates(&route.local, dest) {
            match sock_diag::tcp_listener(c) {
                Ok(Some(l)) if self.sup.listeners.lock().is_ok_and(|o| o.is_own(l.cookie)) => return Ok((c, l)),
                Ok(Some(_)) => someone_elses = true,
                Ok(None) => {}
                Err(e) => {
                    // without the kernel's answer nothing can be let through
                    tracing::debug!(%c, "sock_diag lookup failed: {e}");
                    return Err(libc::EACCES);
                }
            }
        }
        Err(if someone_elses { libc::EACCES } else { libc::ECONNREFUSED })
    }
}

/// Whether `target` still leads to the same listener (after our handshake with it).
fn still_listening(target: SocketAddr, listener: Listener) -> bool {
    matches!(sock_diag::tcp_listener(target), Ok(Some(l)) if l.cookie == listener.cookie)
}

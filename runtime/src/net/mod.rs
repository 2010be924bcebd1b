//! Landlock-mode networking: the command's only way out is the embedded proxy. srt binds
//! the proxy on a fresh loopback port with a fresh token before starting the command,
//! the seccomp filter allows only TCP stream sockets and sends every `connect()` to the
//! supervisor, and the supervisor connects the command's own socket (taken with
//! `pidfd_getfd`) to the proxy's address, never to an address read from the command's
//! memory. Every other destination is refused.
//!
//! [`proxy`] starts the embedded proxy and names it to the command ([`external`] relays to
//! an existing one in namespace mode); [`route`] decides where each `connect()` may go;
//! [`socket`] connects the command's own socket there;
//! [`local_addr`] gives the run a loopback address of its own for the command's local
//! servers and for its connections to a shared proxy, and [`shown_addr`] shows the command
//! the addresses it asked for; [`sock_diag`] asks the kernel about sockets.

pub mod external;
pub mod inside;
pub mod local_addr;
pub mod proxy;
pub mod route;
pub mod shown_addr;
pub mod sock_diag;
pub mod socket;
pub mod sockopt;

pub use proxy::{hints, transparent_wanted, Net, NO_GETFD_HINT, RESOLV_CONF};
pub use route::{inet_addr, judge, kernel_holds_any_address, leave_for_proxy, Leave, Route, UnixRule, Verdict};
pub use socket::{
    bind_source, connect_to, connect_to_proxy, connect_transparent, hold, sockaddr, socket_option, take_socket,
};

//! The proxy's ports inside namespace mode's network namespace.

pub const HTTP_PORT: u16 = 3128;
pub const SOCKS_PORT: u16 = 1080;
/// Transparent mode's DNS, UDP and TCP, on 127.0.0.1 inside.
pub const DNS_PORT: u16 = 53;

//! Why an agent is not accepted: the condition reasons and the [`Rejection`] every check
//! (acceptance, the security floor, mounts, credentials, stored objects) returns. The
//! checks import it from here, so none of them needs another.

/// Why an agent is not accepted: a condition reason and a message for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub reason: &'static str,
    pub message: String,
}

pub const REASON_INVALID_DOMAINS: &str = "InvalidAllowedDomains";
pub const REASON_UNSUPPORTED_PLATFORM: &str = "UnsupportedPlatform";
pub const REASON_INVALID_SPEC: &str = "InvalidSpec";
pub const REASON_UNSAFE_SECURITY_CONTEXT: &str = "UnsafeSecurityContext";
pub const REASON_NOT_OWNED: &str = "NotOwned";

/// A rejection with `reason`; the message names the field and what to change.
pub fn reject(reason: &'static str, message: impl Into<String>) -> Rejection {
    Rejection { reason, message: message.into() }
}

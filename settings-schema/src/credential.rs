//! What counts as a credential in an environment variable, by its name or its value. The
//! runtime drops such variables from the commands srt runs (unless the settings name them
//! exactly); the controller excludes the ones it can see in an agent's pod by name. One
//! rule for both, so what the README promises holds in either place.
//!
//! Every launch judges every variable, so nothing here allocates: names and values are
//! read in place, byte by byte.

mod name;
mod value;

pub use name::credential_name;
pub use value::value_holds_credential;

/// Why a variable counts as a credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// Its name (see [`credential_name`]).
    Name,
    /// Its value: a URL, DSN or connection string carrying a password, a credential field
    /// (`Authorization=...`, `"password": ...`, `sig=`), an Oracle login, a webhook URL, or
    /// a token in a provider's known format.
    Value,
}

/// Why `name=value` looks like a credential, if it does.
pub fn credential(name: &[u8], value: &[u8]) -> Option<Why> {
    if credential_name(name) {
        Some(Why::Name)
    } else if value_holds_credential(value) {
        Some(Why::Value)
    } else {
        None
    }
}

#[cfg(test)]
#[path = "credential_review_tests.rs"]
mod review_tests;
#[cfg(test)]
#[path = "credential_tests.rs"]
mod tests;

//! The contract every part of the sandbox shares: the srt 0.0.83 `srt-settings.json`
//! model, its strict validation, the domain-pattern grammar and path entries.

pub mod cidr;
pub mod credential;
pub mod domain;
pub mod environment;
pub mod load;
pub mod model;
pub mod paths;
mod suggest;

pub use domain::{CanonicalHost, DomainPattern, HostPattern, ListKind, PatternError};
pub use environment::{Environment, Inherit};
pub use load::{load_file, parse_str, validate, Issue, SettingsError};
pub use model::{Filesystem, GitSettings, LiteralPath, Network, PathEntry, Settings};

/// The JSON Schema of the settings file, generated from the types.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Settings);
    // Serialising a schemars schema cannot fail: it is a tree of strings, maps and numbers.
    serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n"
}

//! `srt-controller`: turns kagent `SandboxAgent`s into srt settings and agent-sandbox
//! `Sandbox`es whose pods run unprivileged. See ../shared/DESIGN.md §6.

pub mod crd;
pub mod accept;
pub mod settings;

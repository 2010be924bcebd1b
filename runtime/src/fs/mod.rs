//! The filesystem policy: what the command may read and write, and how the kernel is told.
//!
//! Data flows one way: the settings become a canonical [`policy::FsPolicy`] in [`prepare`]
//! (paths resolved, globs expanded, srt's mandatory denies from [`mandatory`] and the
//! researched home and project files of [`protected_names`] added); [`landlock_plan`] turns
//! it into Landlock rules and [`landlock`] into the ruleset the child enforces; in namespace
//! mode [`mounts`] builds the read-only mount view. Where Landlock alone cannot express the
//! policy, the supervisor judges each mediated call by [`name_rules`]. [`pool`] makes the
//! directories that let new directories be written at the kernel's speed, [`preload`] the
//! library that lets the command's programs make files there without the supervisor, and
//! [`tmpdir`] the run's private TMPDIR; [`shm`] keeps each run's `/dev/shm` its own.
//!
//! "Why was my write refused?" starts here: `srt explain` prints what this room decided.

mod dirents;
mod home_rules;
pub mod landlock;
pub mod landlock_plan;
pub mod link_target;
pub mod mandatory;
pub mod mount_aliases;
pub mod mounts;
pub mod name_rules;
pub mod policy;
pub mod pool;
pub mod pool_dirs;
pub mod preload;
pub mod prepare;
pub mod protected_names;
pub mod resolve;
pub mod shm;
pub mod state_dir;
pub mod tmpdir;
pub mod tmpdir_shelf;
pub mod tree_removal;

//! Errors that stop a launch. Each says what failed and what to change.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error(transparent)]
    Settings(#[from] settings_schema::SettingsError),
    #[error("No command specified. Use -c <command> or provide command arguments.")]
    NoCommand,
    #[error("give the command either with -c or as arguments, not both")]
    CommandTwice,
    #[error(
        "this kernel's Landlock ABI is {found}, but {needed} is needed for {feature}. \
         Use Linux >= {kernel} with Landlock enabled (`lsm=...,landlock`), or run with \
         --allow-weaker to accept weaker enforcement"
    )]
    LandlockTooOld { found: i32, needed: i32, feature: &'static str, kernel: &'static str },
    #[error(
        "{key} entry {} goes through the symlink {}, which lies inside the writable tree {}: \
         a sandboxed command could have planted or redirected it. Write the real path of the \
         target instead",
        entry.display(), link.display(), tree.display()
    )]
    PlantedSymlink { key: &'static str, entry: PathBuf, link: PathBuf, tree: PathBuf },
    #[error("{0}")]
    SymlinkIntoDenied(Box<LinkIntoDenied>),
    #[error(
        "the Landlock rule for {} changed while srt was setting it up (it is no longer the \
         directory or file srt planned for); something is renaming entries in this directory. \
         srt refuses to run rather than grant rights to whatever is there now",
        path.display()
    )]
    RuleTargetChanged { path: PathBuf },
    #[error(
        "allowWrite entry {entry} would let commands write ~/{path} ({runs}; {doc}); srt never \
         lets a command write there. Remove the entry, or name a path below it that is not protected"
    )]
    HomeAllow { entry: String, path: &'static str, runs: &'static str, doc: &'static str },
    #[error(
        "your home directory {} (from the password database) lies in a writable tree, but $HOME is {}: \
         srt protects the files in $HOME that later programs run, and would leave those in {} open. \
         Set HOME={} for this run, or keep that directory out of allowWrite and the working directory",
        passwd.display(), home.display(), passwd.display(), passwd.display()
    )]
    OtherHome { passwd: PathBuf, home: PathBuf },
    #[error("could not build the Landlock ruleset: {0}")]
    Landlock(String),
    #[error("could not build the seccomp filter: {0}")]
    Seccomp(String),
    #[error("the working directory is not usable: {0}")]
    Cwd(std::io::Error),
    #[error("could not create the private TMPDIR {path}: {source}")]
    TmpDir { path: PathBuf, source: std::io::Error },
    #[error(
        "could not write the run's journal ({source}); srt keeps one in its state directory ({path}) \
         so that the check after the command is done even if srt dies. Make $XDG_STATE_HOME, \
         ~/.local/state or $TMPDIR writable"
    )]
    Journal { path: PathBuf, source: std::io::Error },
    #[error("no shell to run the command: neither bash nor sh is on PATH")]
    NoShell,
    #[error("sandbox setup failed in the child at {stage}: {errno}")]
    Child { stage: &'static str, errno: nix::errno::Errno },
    #[error(
        "could not create the sandbox namespaces ({0}); this host may not allow unprivileged user \
         namespaces: use --network-mode landlock"
    )]
    Namespaces(std::io::Error),
    #[error("the network proxy: {0}")]
    Proxy(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Sys(#[from] nix::errno::Errno),
}

/// An `allowWrite`/`allowRead` entry that reaches a `denyRead` path through a symlink.
#[derive(Debug, thiserror::Error)]
#[error(
    "{key} entry {} goes through the symlink {} to {}, which denyRead {} covers: a command of \
     another run could have planted it to open what the settings keep unreadable. Write the \
     real path of the target instead, or remove the link",
    entry.display(), link.display(), target.display(), denied.display()
)]
pub struct LinkIntoDenied {
    pub key: &'static str,
    pub entry: PathBuf,
    pub link: PathBuf,
    pub target: PathBuf,
    pub denied: PathBuf,
}

//! `srt-controller run`: placeholder replaced below.
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub options: crate::options::Options,
}

pub fn main(_args: RunArgs) -> ExitCode {
    ExitCode::FAILURE
}

//! The end of a run, once every process of the command is gone: the check after the run
//! ([`crate::check::after_run`]) over what the journal names.

/// With every process of the command gone: moves aside what it planted in git
/// repositories the rules could not follow ([`crate::git::audit`]), then drops the journal.
/// `all_gone`: srt saw every process of the command end (else, a run whose srt and auditor
/// were both killed, its pool is not put back on a shelf: see [`crate::fs::pool::finish`]).
pub(crate) fn check_run(j: &crate::check::journal::Journal, all_gone: bool) {
    let t = std::time::Instant::now();
    let report = match crate::check::journal::read(j.path()) {
        Ok((header, entries)) => crate::check::after_run::check(&header, &entries, all_gone),
        Err(e) => {
            eprintln!(
                "srt: error: could not read this run's journal {} ({e}); the check for planted git configuration was not done",
                j.path().display()
            );
            return;
        }
    };
    tracing::debug!(entries = report.entries, elapsed_us = t.elapsed().as_micros() as u64, "git check");
    crate::git::audit::tell(&report);
    if let Err(e) = j.finish() {
        crate::warn!("could not remove this run's journal: {e}");
    }
}

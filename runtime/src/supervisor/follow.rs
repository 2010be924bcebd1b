//! Keeps each receiver thread of the supervisor on the CPU of the command thread it
//! serves: a notification answered across CPUs costs a wake-up each way on a VM.

/// Keeps a receiver on the CPU of the thread it serves. The kernel hands a notification to
/// the receiver on the trapping thread's CPU, but an idle CPU nearby pulls the receiver away
/// before it runs, and an fd answer (ADDFD) wakes the command on its own CPU, so every
/// round trip would cost two cross-CPU wake-ups (tens of µs each on a VM). Pinning the
/// receiver to the CPU the command last ran on, re-checked now and then, avoids that; a
/// command spread over several CPUs only gets what it had without this.
#[derive(Default)]
pub(super) struct Follow {
    pid: u32,
    calls: u32,
    cpu: Option<usize>,
}

impl Follow {
    const RECHECK: u32 = 128;

    pub(super) fn note(&mut self, pid: u32) {
        self.calls = self.calls.wrapping_add(1);
        if pid == self.pid && !self.calls.is_multiple_of(Self::RECHECK) {
            return;
        }
        self.pid = pid;
        let Some(cpu) = last_cpu(pid) else { return };
        if self.cpu == Some(cpu) {
            return;
        }
        // SAFETY: an all-zero cpu_set_t is valid; CPU_SET writes within it.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0 {
                self.cpu = Some(cpu);
            }
        }
    }
}

/// Field 39 of /proc/<pid>/stat: the CPU the thread last ran on.
fn last_cpu(pid: u32) -> Option<usize> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // the command name (field 2) may hold spaces and parentheses: count after its last ')'
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(36)?.parse().ok()
}

//! Listeners a scenario's setup leaves on the host, asked afterwards whether the sandboxed
//! command reached them.

/// Something a scenario's setup leaves listening, asked afterwards whether anything
/// reached it. Kept per test thread, dropped when the next scenario starts.
pub trait Probe {
    /// `Err` when the sandboxed command got through to it.
    fn quiet(&self) -> Result<(), String>;
}

thread_local! {
    static PROBES: std::cell::RefCell<Vec<Box<dyn Probe>>> = const { std::cell::RefCell::new(Vec::new()) };
}

pub fn register(p: Box<dyn Probe>) {
    PROBES.with(|v| v.borrow_mut().push(p));
}

pub fn probes_quiet() -> Result<(), String> {
    PROBES.with(|v| v.borrow().iter().try_for_each(|p| p.quiet()))
}

pub fn clear_probes() {
    PROBES.with(|v| v.borrow_mut().clear());
}

/// A TCP listener on the host that must never see a connection.
pub struct TcpProbe(pub std::net::TcpListener);
impl Probe for TcpProbe {
    fn quiet(&self) -> Result<(), String> {
        match self.0.accept() {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(()),
            other => Err(format!("a TCP connection reached the host listener: {other:?}")),
        }
    }
}

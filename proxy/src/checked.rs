//! Every tunnel (CONNECT, SOCKS5, transparent) relays through the first-flight gate: the
//! client's TLS server name or HTTP Host must name the host the tunnel was allowed for.

use crate::first_flight;
use crate::shared::Shared;
use crate::splice::SpliceStream;
use crate::target::Target;
use crate::tunnel::{self, Flight, Gated, Moved};

/// Relays `client` <-> `upstream` for a tunnel allowed for `target`; `first` holds bytes
/// the client already sent; `pending` is the client's count of undecided tunnels. The
/// policy is read when the first bytes arrive, so a reload in between counts.
pub async fn relay<A: SpliceStream, B: SpliceStream>(
    shared: &Shared,
    target: &Target,
    client: &A,
    upstream: &B,
    first: Vec<u8>,
    pending: Option<crate::clients::Held>,
) -> Result<Moved, Gated> {
    let limits = &shared.limits;
    let first_flight = shared.policy.load().first_flight.unwrap_or(limits.first_flight_timeout);
    tunnel::relay_gated(
        client,
        upstream,
        limits.idle_timeout,
        first_flight,
        first,
        pending,
        |buf, last_chance, flight| {
            let gate = match flight {
                Flight::First => first_flight::gate(target, &shared.policy.load(), buf, last_chance),
                Flight::Retry => first_flight::gate_retry(target, &shared.policy.load(), buf, last_chance),
            };
            // noted before the relay answers the client: a client that reads the refusal
            // and exits must find it in the run's list (srt prints it at exit), not race it
            if let tunnel::Gate::Refuse { reason, .. } = &gate {
                shared.note_refused(&target.host.to_string(), target.port, reason);
            }
            gate
        },
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::UnixStream;

    /// A client that reads the proxy's refusal and exits must find that refusal in the run's
    /// list (srt prints it at exit): it is noted before the reply goes out. The relay's
    /// callers noted it only after the relay returned, and a fast client raced them (a
    /// flaky "srt: network: refused ..." missing from the transparent test in CI).
    #[tokio::test(flavor = "current_thread")]
    async fn a_refusal_is_noted_before_the_client_hears_it() {
        let s: settings_schema::Settings = serde_json::from_value(serde_json::json!({
            "network": {"allowedDomains": ["allowed.test"], "deniedDomains": []},
            "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}
        }))
        .unwrap();
        let policy = crate::Policy::from_settings(&s).unwrap();
        let resolver = crate::resolve::Resolver::new(std::time::Duration::from_secs(1));
        let shared = Shared::build(policy, None, resolver, crate::Limits::default(), crate::log::Log::off());
        let target = crate::target::parse_authority("allowed.test:80", None).unwrap();
        let (mut app, proxy_side) = UnixStream::pair().unwrap();
        let (upstream, _server) = UnixStream::pair().unwrap();
        let relay = relay(&shared, &target, &proxy_side, &upstream, Vec::new(), None);
        let client = async {
            app.write_all(b"GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n").await.unwrap();
            let mut first = [0u8; 1];
            let n = app.read(&mut first).await.unwrap();
            // the refusal's first byte (or its close) has arrived: the list must hold it now
            (n, shared.refused())
        };
        let (_, (_, refused)) = tokio::join!(relay, client);
        assert!(
            refused.iter().any(|r| r.host == "allowed.test" && r.reason == "sni-mismatch"),
            "refused when the client heard back: {refused:?}"
        );
    }
}

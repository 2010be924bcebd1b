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
        |buf, last_chance, flight| match flight {
            Flight::First => first_flight::gate(target, &shared.policy.load(), buf, last_chance),
            Flight::Retry => first_flight::gate_retry(target, &shared.policy.load(), buf, last_chance),
        },
    )
    .await
}

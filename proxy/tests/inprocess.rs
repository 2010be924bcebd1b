//! The proxy library served in-process over real sockets, with an injected resolver and a
//! recording dialer: DNS rebinding is refused, and nothing outside the policy is ever dialed.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use proptest::prelude::*;
use srt_proxy::resolve::{Lookup, Resolver};
use srt_proxy::{log::Log, Limits, Listener, Policy, Shared};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn policy(allow: &[String], deny: &[String]) -> Policy {
    let s: settings_schema::Settings = serde_json::from_value(serde_json::json!({
        "network": {"allowedDomains": allow, "deniedDomains": deny},
        "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}
    }))
    .unwrap();
    Policy::from_settings(&s).unwrap()
}

type Dials = Arc<Mutex<Vec<SocketAddr>>>;

/// Starts a proxy whose lookups come from `answers` and whose dials are recorded (and
/// refused, so nothing leaves the test).
async fn start(p: Policy, answers: Lookup) -> (SocketAddr, Dials) {
    let mut r = Resolver::new(Duration::from_secs(1));
    r.lookup = Some(answers);
    let mut shared = Shared::build(p, None, r, Limits::default(), Log::off());
    let dials: Dials = Arc::default();
    let d2 = dials.clone();
    shared.dialer = Arc::new(move |sa| {
        d2.lock().unwrap().push(sa);
        Box::pin(async { Err(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)) })
    });
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(srt_proxy::serve(Listener::Tcp(l), Arc::new(shared)));
    (addr, dials)
}

async fn connect(proxy: SocketAddr, target: &str) -> String {
    let mut s = tokio::net::TcpStream::connect(proxy).await.unwrap();
    s.write_all(format!("CONNECT {target} HTTP/1.1\r\n\r\n").as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 1024];
    let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await.unwrap().unwrap_or(0);
    String::from_utf8_lossy(&buf[..n]).to_string()
}

#[tokio::test(flavor = "current_thread")]
async fn rebinding_to_private_addresses_is_refused_and_nothing_dialed() {
    let answers: Lookup = Arc::new(|name: &str| match name {
        "loop.example.test" => vec!["127.0.0.1".parse().unwrap()],
        "meta.example.test" => vec!["169.254.169.254".parse().unwrap()],
        "mapped.example.test" => vec!["::ffff:127.0.0.1".parse().unwrap()],
        "mixed.example.test" => vec!["127.0.0.1".parse().unwrap(), "93.184.216.34".parse().unwrap()],
        _ => vec![],
    });
    let (proxy, dials) = start(policy(&["*.example.test".into()], &[]), answers).await;
    for host in ["loop.example.test", "meta.example.test", "mapped.example.test"] {
        let r = connect(proxy, &format!("{host}:443")).await;
        assert!(r.starts_with("HTTP/1.1 403"), "{host}: {r}");
        assert!(r.to_ascii_lowercase().contains("x-proxy-error: blocked-by-resolved-address"), "{r}");
    }
    assert!(dials.lock().unwrap().is_empty(), "a refused address was dialed: {:?}", dials.lock().unwrap());
    // with one good address among bad ones, only the good one is dialed (refused here: 502)
    let r = connect(proxy, "mixed.example.test:443").await;
    assert!(r.starts_with("HTTP/1.1 502"), "{r}");
    assert_eq!(*dials.lock().unwrap(), vec!["93.184.216.34:443".parse::<SocketAddr>().unwrap()]);
    let r = connect(proxy, "unknown.example.test:443").await;
    assert!(r.starts_with("HTTP/1.1 502"), "DNS failure is a 502: {r}");
}

fn label() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["a", "b", "api", "x1", "evil", "example", "test", "co"]).prop_map(str::to_string)
}

fn host() -> impl Strategy<Value = String> {
    prop::collection::vec(label(), 1..4).prop_map(|v| v.join("."))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Whatever the policy and the request, a dial only ever goes to a host the allow list
    /// matches and the deny list does not, at a public address the resolver returned.
    #[test]
    fn nothing_outside_the_allowlist_is_ever_dialed(
        allow in prop::collection::vec(host(), 0..4),
        deny in prop::collection::vec(host(), 0..2),
        wild in any::<bool>(),
        requests in prop::collection::vec((host(), 1u16..3), 1..6),
    ) {
        let allow: Vec<String> = allow.into_iter().filter(|h| h.contains('.')).map(|h| if wild { format!("*.{h}") } else { h })
            .filter(|h| settings_schema::DomainPattern::parse(h, settings_schema::ListKind::Allowed).is_ok()).collect();
        let deny: Vec<String> = deny.into_iter().filter(|h| h.contains('.')).collect();
        let p = policy(&allow, &deny);
        let check = policy(&allow, &deny);
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let dialed = rt.block_on(async {
            // every name resolves to one public and one loopback address
            let answers: Lookup =
                Arc::new(|_: &str| vec!["93.184.216.34".parse().unwrap(), "127.0.0.1".parse().unwrap()]);
            let (proxy, dials) = start(p, answers).await;
            let mut asked = Vec::new();
            for (h, port) in &requests {
                let _ = connect(proxy, &format!("{h}:{port}")).await;
                asked.push((h.clone(), *port));
            }
            let d = dials.lock().unwrap().clone();
            (d, asked)
        });
        let (dials, asked) = dialed;
        for sa in &dials {
            prop_assert_eq!(sa.ip(), "93.184.216.34".parse::<IpAddr>().unwrap(), "a loopback answer was dialed");
        }
        let permitted = asked.iter().filter(|(h, port)| {
            let t = srt_proxy::target::parse_authority(&format!("{h}:{port}"), None).unwrap();
            matches!(check.decide(&t), srt_proxy::Verdict::Allow { .. })
        }).count();
        // each permitted request dials its one public address once; nothing else is dialed
        prop_assert_eq!(dials.len(), permitted);
    }
}

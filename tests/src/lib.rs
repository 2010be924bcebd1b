//! Test fixtures shared by the workspace's integration tests: a TLS origin on loopback
//! with a fresh CA. Test-only code: a panic is the failure report.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A TLS origin for `names` answering `tls-origin-ok`, signed by a fresh CA whose
/// certificate is written to `<dir>/ca.pem`.
pub struct TlsOrigin {
    pub port: u16,
    pub ca: PathBuf,
}

impl TlsOrigin {
    pub fn start(dir: &Path, names: &[&str]) -> TlsOrigin {
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params.distinguished_name.push(rcgen::DnType::CommonName, "srt test CA");
        let ca_cert = ca_params.self_signed(&ca_key).unwrap();
        let leaf_key = rcgen::KeyPair::generate().unwrap();
        let leaf_params =
            rcgen::CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
        let issuer = rcgen::Issuer::from_params(&ca_params, &ca_key);
        let leaf = leaf_params.signed_by(&leaf_key, &issuer).unwrap();
        let ca = dir.join("ca.pem");
        std::fs::write(&ca, ca_cert.pem()).unwrap();
        let certs = vec![leaf.der().clone()];
        let key = rustls::pki_types::PrivateKeyDer::try_from(leaf_key.serialize_der()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        l.set_nonblocking(true).unwrap();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async move {
                let l = tokio::net::TcpListener::from_std(l).unwrap();
                loop {
                    let Ok((s, _)) = l.accept().await else { continue };
                    let acceptor = acceptor.clone();
                    tokio::spawn(async move {
                        use tokio::io::{AsyncReadExt, AsyncWriteExt};
                        let Ok(mut tls) = acceptor.accept(s).await else { return };
                        let mut buf = vec![0u8; 8192];
                        let _ = tls.read(&mut buf).await;
                        let body = b"tls-origin-ok\n";
                        let head =
                            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
                        let _ = tls.write_all(head.as_bytes()).await;
                        let _ = tls.write_all(body).await;
                        let _ = tls.shutdown().await;
                    });
                }
            });
        });
        TlsOrigin { port, ca }
    }
}

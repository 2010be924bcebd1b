//! Origins that serve several virtual hosts and record which one each request reached, as
//! the most lenient servers read requests: a rustls TLS server (which, like Go's, skips a
//! warning alert before the ClientHello) choosing by SNI, and a plain HTTP server that
//! skips empty lines before a request (nginx, Node) and reads request lines of up to 1 MiB
//! (Go's net/http), choosing by Host. A fronting attempt that gets through shows up as a
//! request served for the wrong name.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A CA and a leaf certificate for `names`, as PEM files in a directory and as DER.
pub struct Certs {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
    pub ca_der: rustls::pki_types::CertificateDer<'static>,
    pub leaf_der: rustls::pki_types::CertificateDer<'static>,
    pub key_der: Vec<u8>,
}

impl Certs {
    pub fn new(dir: &Path, names: &[&str]) -> Certs {
        let (ca_cert, leaf, leaf_key) = crate::ca_and_leaf(names, "srt vhost test CA");
        let (ca, cert, key) = (dir.join("vhost-ca.pem"), dir.join("vhost-cert.pem"), dir.join("vhost-key.pem"));
        std::fs::write(&ca, ca_cert.pem()).unwrap();
        std::fs::write(&cert, leaf.pem()).unwrap();
        std::fs::write(&key, leaf_key.serialize_pem()).unwrap();
        for f in [&ca, &cert, &key] {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        Certs {
            ca,
            cert,
            key,
            ca_der: ca_cert.der().clone(),
            leaf_der: leaf.der().clone(),
            key_der: leaf_key.serialize_der(),
        }
    }
}

/// The names requests were served for, in order.
pub type Served = Arc<Mutex<Vec<String>>>;

/// A TLS origin answering `vhost=<SNI>` to one request per connection.
pub struct VhostTls {
    pub port: u16,
    pub served: Served,
}

impl VhostTls {
    pub fn start(certs: &Certs) -> VhostTls {
        let key = rustls::pki_types::PrivateKeyDer::try_from(certs.key_der.clone()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![certs.leaf_der.clone()], key)
            .unwrap();
        let config = Arc::new(config);
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let served: Served = Arc::default();
        let s2 = served.clone();
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                let (config, served) = (config.clone(), s2.clone());
                std::thread::spawn(move || {
                    let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(10)));
                    let conn = rustls::ServerConnection::new(config).unwrap();
                    let mut tls = rustls::StreamOwned::new(conn, s);
                    let mut buf = [0u8; 4096];
                    if tls.read(&mut buf).unwrap_or(0) == 0 {
                        return;
                    }
                    let name = tls.conn.server_name().unwrap_or("-").to_string();
                    served.lock().unwrap().push(name.clone());
                    let body = format!("vhost={name}\n");
                    let reply =
                        format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
                    let _ = tls.write_all(reply.as_bytes());
                    tls.conn.send_close_notify();
                    let _ = tls.flush();
                    // end with a FIN after reading what the client still sends: closing with
                    // unread bytes would be a reset, which can discard the answer in flight
                    let _ = tls.sock.shutdown(std::net::Shutdown::Write);
                    let _ = tls.sock.set_read_timeout(Some(std::time::Duration::from_secs(2)));
                    let _ = std::io::copy(&mut tls.sock, &mut std::io::sink());
                });
            }
        });
        VhostTls { port, served }
    }
}

/// A plain HTTP origin answering `vhost=<Host>` to every request of a kept-alive
/// connection, read as leniently as the servers in the module comment.
pub struct LenientHttp {
    pub port: u16,
    pub served: Served,
}

impl LenientHttp {
    pub fn start() -> LenientHttp {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let served: Served = Arc::default();
        let s2 = served.clone();
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                let served = s2.clone();
                std::thread::spawn(move || serve_lenient(s, served));
            }
        });
        LenientHttp { port, served }
    }
}

fn serve_lenient(s: TcpStream, served: Served) {
    let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(10)));
    let mut w = s.try_clone().unwrap();
    let mut r = BufReader::with_capacity(1 << 20, s);
    loop {
        let mut host = String::from("-");
        let mut close = false;
        let mut first = true;
        loop {
            let mut line = Vec::new();
            if r.read_until(b'\n', &mut line).unwrap_or(0) == 0 || line.len() > 1 << 20 {
                return;
            }
            let text = String::from_utf8_lossy(&line).trim_end().to_string();
            if first && text.is_empty() {
                continue; // empty lines before a request are skipped (RFC 9112 2.2)
            }
            if !first && text.is_empty() {
                break;
            }
            first = false;
            if let Some((k, v)) = text.split_once(':') {
                if k.eq_ignore_ascii_case("host") {
                    host = v.trim().split(':').next().unwrap_or("-").to_string();
                }
                if k.eq_ignore_ascii_case("connection") && v.to_ascii_lowercase().contains("close") {
                    close = true;
                }
            }
        }
        served.lock().unwrap().push(host.clone());
        let body = format!("vhost={host}\n");
        if write!(w, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}", body.len()).is_err() || close {
            let _ = w.shutdown(std::net::Shutdown::Both);
            return;
        }
    }
}

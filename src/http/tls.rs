//! TLS for an HTTP endpoint that other machines reach: rustls with the
//! certificate chain and key the configuration names (PEM files), and a
//! listener that hands axum only connections whose handshake finished.
//! Handshakes run in tasks of their own, bounded in time, so a client
//! that connects and never speaks holds up no one else.

use anyhow::{Context as _, Result};
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::server::TlsStream;

/// How long a client may take to finish its handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Finished handshakes waiting for axum to take them.
const READY_CONNECTIONS: usize = 64;

/// The server's TLS configuration from its PEM certificate chain and key.
pub fn acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor> {
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certificates| certificates.collect::<Result<Vec<_>, _>>())
        .with_context(|| format!("reading the certificate chain in {}", cert.display()))?;
    anyhow::ensure!(!chain.is_empty(), "{} holds no certificate", cert.display());
    let key = PrivateKeyDer::from_pem_file(key)
        .with_context(|| format!("reading the private key in {}", key.display()))?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("choosing TLS versions")?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .context("the certificate and key do not make a TLS configuration")?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// TCP connections in, TLS streams out.
pub struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    address: SocketAddr,
}

impl TlsListener {
    pub fn new(listener: TcpListener, acceptor: TlsAcceptor) -> Result<Self> {
        let address = listener.local_addr()?;
        let (handshaken, ready) = mpsc::channel(READY_CONNECTIONS);
        tokio::spawn(accept(listener, acceptor, handshaken));
        Ok(Self { ready, address })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(connection) => connection,
            // The accepting task ended: nothing will connect again.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.address)
    }
}

async fn accept(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    handshaken: mpsc::Sender<(TlsStream<TcpStream>, SocketAddr)>,
) {
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of descriptors, most likely: wait rather than spin.
                tracing::warn!("accepting an HTTPS connection failed: {error}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY not set on a connection: {error}");
        }
        let (acceptor, handshaken) = (acceptor.clone(), handshaken.clone());
        tokio::spawn(async move {
            match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                Ok(Ok(tls)) => {
                    let _closed = handshaken.send((tls, peer)).await;
                }
                Ok(Err(error)) => tracing::debug!(%peer, "TLS handshake failed: {error}"),
                Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
            }
        });
    }
}

//! mockls: a language server whose every behaviour and fault is a flag.
//!
//! Windlass's tests and benchmarks point Windlass at it to produce, on
//! demand, what real servers do on a bad day: hang, crash, answer late,
//! answer garbage, publish diagnostics late or twice. Its diagnostics follow
//! the text: one error per line containing `ERROR`.
//!
//! The protocol is tower-lsp-server's (`server.rs` is a plain
//! `LanguageServer`); the faults are produced on the wire around it
//! (`wire/`), so mockls shares no protocol code with Windlass, which it tests.

mod assist;
mod features;
mod flags;
mod hierarchy;
mod position;
mod server;
mod text;
mod tsserver;
mod wire;

use std::sync::Arc;
use tower_lsp_server::{LspService, Server};

/// Requests the service works on at once; hung ones must not stop the rest.
const CONCURRENCY: usize = 1024;

fn main() {
    let flags = match flags::Flags::parse(std::env::args().skip(1)) {
        Ok(flags) => Arc::new(flags),
        Err(error) => {
            eprintln!("mockls: {error}");
            std::process::exit(2);
        }
    };
    let record = match wire::Record::open(flags.record.as_deref()) {
        Ok(record) => Arc::new(record),
        Err(error) => {
            eprintln!("mockls: cannot open the record file: {error}");
            std::process::exit(2);
        }
    };
    // Written to, so that every page is resident: a server's weight as the
    // memory budget sees it.
    let _held = std::hint::black_box(vec![1u8; flags.hold_memory_mib << 20]);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("mockls: cannot start a runtime: {error}");
            std::process::exit(2);
        }
    };
    let writer = runtime.block_on(serve(flags, record));
    // Everything the service said goes out before the process ends; the
    // read of stdin still pending would otherwise hold it open.
    let _ = writer.join();
    std::process::exit(0);
}

/// Serves until the client says `exit` or its input ends; returns the
/// writer thread, still writing what is left.
async fn serve(flags: Arc<flags::Flags>, record: Arc<wire::Record>) -> std::thread::JoinHandle<()> {
    let methods = wire::Methods::default();
    let (to_service, from_client) = tokio::io::duplex(64 * 1024);
    let (output, writer) = wire::Outgoing::start(flags.clone(), record.clone(), methods.clone());
    let incoming = wire::Incoming::new(flags.clone(), record, methods);
    tokio::spawn(incoming.run(to_service));
    let (service, socket) = LspService::build(|client| server::Mock::new(client, flags))
        .custom_method("tsserver/response", server::Mock::tsserver_response)
        .finish();
    Server::new(from_client, output, socket)
        .concurrency_level(CONCURRENCY)
        .serve(service)
        .await;
    writer
}

//! mockls: a language server whose every behaviour and fault is a flag.
//!
//! Windlass's tests and benchmarks point the bridge at it to produce, on
//! demand, what real servers do on a bad day: hang, crash, answer late,
//! answer garbage, publish diagnostics late or twice. Its diagnostics follow
//! the text: one error per line containing `ERROR`.

mod assist;
mod features;
mod flags;
mod hierarchy;
mod output;
mod server;
mod text;

use std::io::Read;
use std::sync::Arc;
use windlass_actors::lsp::framing::FrameDecoder;

fn main() {
    let flags = match flags::Flags::parse(std::env::args().skip(1)) {
        Ok(flags) => flags,
        Err(error) => {
            eprintln!("mockls: {error}");
            std::process::exit(2);
        }
    };
    let output = match output::Output::new(flags.slow_write, flags.record.as_deref()) {
        Ok(output) => Arc::new(output),
        Err(error) => {
            eprintln!("mockls: cannot open the record file: {error}");
            std::process::exit(2);
        }
    };
    // Written to, so that every page is resident: a server's weight as the
    // memory budget sees it.
    let _held = std::hint::black_box(vec![1u8; flags.hold_memory_mib << 20]);
    let mut server = server::Server::new(flags, output);
    let mut decoder = FrameDecoder::new();
    let mut stdin = std::io::stdin().lock();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = match stdin.read(&mut buffer) {
            Ok(0) | Err(_) => std::process::exit(0),
            Ok(read) => read,
        };
        decoder.push(&buffer[..read]);
        loop {
            match decoder.next_body() {
                Ok(Some(body)) => server.receive(&body),
                Ok(None) => break,
                Err(error) => eprintln!("mockls: bad frame: {error}"),
            }
        }
    }
}

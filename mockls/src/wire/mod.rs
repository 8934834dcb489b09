//! mockls's wire: the bytes between the client and the tower-lsp-server
//! service. Incoming messages are read, recorded and passed on, or
//! withheld to play a server that hangs, crashes or ignores shutdown
//! (`incoming.rs`); outgoing messages are recorded and written as they
//! are, or corrupted, truncated, slowed, doubled or preceded by messages
//! of their own, as the flags ask (`outgoing.rs`). The framing is
//! mockls's own: it shares no code with Windlass, so a mistake in
//! either shows up in the tests.

mod incoming;
mod outgoing;

pub use incoming::Incoming;
pub use outgoing::Outgoing;

use serde_json::{Value, json};
use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

/// Ids of the requests the wire itself sends; their answers stop here.
const OWN_IDS: &str = "mockls-";

/// The method of each request in flight, by its id's JSON text, so that
/// faults chosen by method find its response.
pub type Methods = Arc<Mutex<HashMap<String, String>>>;

/// The `--record` log: every message either way, timestamped, as JSON
/// lines.
pub struct Record(Option<Mutex<File>>);

impl Record {
    pub fn open(path: Option<&str>) -> std::io::Result<Self> {
        let file = match path {
            Some(path) => Some(Mutex::new(
                File::options().create(true).append(true).open(path)?,
            )),
            None => None,
        };
        Ok(Self(file))
    }

    fn write(&self, direction: &str, message: &Value) {
        let Some(file) = &self.0 else { return };
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64() * 1000.0)
            .unwrap_or(0.0);
        let line = json!({"t": millis, "dir": direction, "message": message});
        if let Ok(mut file) = file.lock() {
            let _ = writeln!(file, "{line}");
        }
    }
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// The Content-Length a header block gives, if it gives one.
fn content_length(header: &str) -> Option<usize> {
    header.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        match name.trim().eq_ignore_ascii_case("content-length") {
            true => value.trim().parse().ok(),
            false => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_content_length_of_a_header() {
        assert_eq!(content_length("Content-Length: 12\r\n"), Some(12));
        assert_eq!(
            content_length("content-type: x\r\ncontent-length:7\r\n"),
            Some(7)
        );
        assert_eq!(content_length("Content-Type: x\r\n"), None);
    }
}

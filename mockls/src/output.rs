//! Everything mockls writes: framed messages on stdout, optionally one byte
//! at a time or deliberately broken, and the `--record` log of every message
//! in either direction.

use serde_json::{Value, json};
use std::fs::File;
use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use windlass_actors::lsp::framing;

pub struct Output {
    stdout: Mutex<std::io::Stdout>,
    slow: bool,
    record: Option<Mutex<File>>,
}

impl Output {
    pub fn new(slow: bool, record: Option<&str>) -> std::io::Result<Self> {
        let record = match record {
            Some(path) => Some(Mutex::new(
                File::options().create(true).append(true).open(path)?,
            )),
            None => None,
        };
        Ok(Self {
            stdout: Mutex::new(std::io::stdout()),
            slow,
            record,
        })
    }

    /// Appends one message to the record with a millisecond timestamp.
    pub fn record(&self, direction: &str, message: &Value) {
        let Some(record) = &self.record else { return };
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64() * 1000.0)
            .unwrap_or(0.0);
        let line = json!({"t": millis, "dir": direction, "message": message});
        if let Ok(mut file) = record.lock() {
            let _ = writeln!(file, "{line}");
        }
    }

    pub fn send(&self, message: &Value) {
        self.record("out", message);
        self.write(&framing::encode(message.to_string().as_bytes()));
    }

    /// Writes bytes exactly as given, for faults a well-formed writer
    /// could not produce.
    pub fn send_raw(&self, bytes: &[u8]) {
        self.write(bytes);
    }

    fn write(&self, bytes: &[u8]) {
        let Ok(mut stdout) = self.stdout.lock() else {
            return;
        };
        if !self.slow {
            let _ = stdout.write_all(bytes);
            let _ = stdout.flush();
            return;
        }
        for (index, byte) in bytes.iter().enumerate() {
            let _ = stdout.write_all(std::slice::from_ref(byte));
            let _ = stdout.flush();
            if index % 16 == 15 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}

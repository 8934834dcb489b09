//! Edits right after a branch switch, with a plain MCP client; run by
//! hand:
//!
//! ```sh
//! cargo bench --bench switch            # SWITCH_EDITS=40 edits after it
//! ```
//!
//! `SWITCH_TREE=1` removes the folders too before writing them back.
//!
//! Windlass serves a copy of requests (pyright and ruff) with the
//! importer `sessions.py` and the edited `hooks.py` open. Ten edits warm
//! it up; then every Python file of the tree is deleted and written again
//! with other text, as `git checkout` or `git stash` does, and the edits
//! go on at once, alternating a type error and its fix. For each edit it
//! measures, from the write: pyright's publication of the edit's
//! diagnostics (read from the event store) and `diagnostics`' answer,
//! checked for the edit's outcome. The overhead is the answer less the
//! publication: what Windlass adds to the server's own time.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

mod checkout;
#[path = "../tests/common/mod.rs"]
mod common;
mod percentiles;
mod store_events;

use common::projects::real_project;
use common::*;
use percentiles::{Percentiles, report};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};
use store_events::{diagnostics_events, epoch_millis, last_publication};

const IMPORTER: &str = "src/requests/sessions.py";
const EDITED: &str = "src/requests/hooks.py";
const WARM_UP_EDITS: usize = 10;

/// One edit's times, from its write.
struct Timed {
    written: SystemTime,
    answer: Duration,
    right: bool,
}

fn main() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let edits: usize = std::env::var("SWITCH_EDITS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(40);
    let Some(dir) = real_project("requests-2.34.2") else {
        return skip("target/real-projects/requests-2.34.2 is missing (.ci/run unpacks it)");
    };
    let root = dir.path().canonicalize().unwrap();
    let state = tempfile::tempdir().unwrap();
    let store = state.path().join("state/windlass/windlass.db");
    let session = Session::start_with_state(state, &root_arg(&root));
    let edited = root.join(EDITED);
    let original = std::fs::read_to_string(&edited).unwrap();
    let opened = session.ok("diagnostics", json!({"files": [IMPORTER, EDITED]}));
    println!("opened: {}", opened.lines().count());

    let warm: Vec<Timed> = (0..WARM_UP_EDITS)
        .map(|n| edit(&session, &edited, &original, n))
        .collect();
    let started = Instant::now();
    let files = checkout::switch_branch(&root, std::env::var("SWITCH_TREE").is_ok());
    println!(
        "switched: {files} Python files deleted and written again in {:.0} ms",
        started.elapsed().as_secs_f64() * 1000.0
    );
    let switched_text = std::fs::read_to_string(&edited).unwrap();
    let after: Vec<Timed> = (0..edits)
        .map(|n| edit(&session, &edited, &switched_text, n))
        .collect();

    let uri = format!("file://{}", edited.display());
    // The store's writer commits within 100 ms of an event.
    std::thread::sleep(Duration::from_millis(500));
    let published = diagnostics_events(&store, &uri);
    println!();
    summarize("before the switch", &warm, &published);
    summarize("after the switch", &after, &published);
    for (n, timed) in after.iter().enumerate() {
        let publish = publication(timed, n, &published);
        println!(
            "  edit {n:>2}: answer {:>6.0} ms  publish {}  right: {}",
            timed.answer.as_secs_f64() * 1000.0,
            publish.map_or("   none".into(), |publish| format!(
                "{:>6.0} ms",
                publish.as_secs_f64() * 1000.0
            )),
            timed.right
        );
    }
}

/// Edit `n` of the edited file: even ones add a type error, odd ones
/// take it out again; the answer is checked for it.
fn edit(session: &Session, file: &Path, text: &str, n: usize) -> Timed {
    let broken = n.is_multiple_of(2);
    let new_text = match broken {
        true => format!("{text}\nbroken: int = \"edit {n}\"\n"),
        false => text.to_owned(),
    };
    std::fs::write(file, new_text).unwrap();
    let written = std::fs::metadata(file).unwrap().modified().unwrap();
    let asked = Instant::now();
    let answer = session.ok("diagnostics", json!({"file": EDITED}));
    let took = asked.elapsed();
    let has_error = answer.contains("reportAssignmentType");
    Timed {
        written,
        answer: took,
        right: has_error == broken,
    }
}

/// From the edit's write to pyright's last publication of its outcome
/// before the answer came.
fn publication(timed: &Timed, n: usize, published: &[(i64, i64)]) -> Option<Duration> {
    let written = epoch_millis(timed.written);
    let answered = written + timed.answer.as_millis() as i64 + 5;
    let at = last_publication(published, written, answered, n.is_multiple_of(2))?;
    Some(Duration::from_millis((at - written).max(0) as u64))
}

fn summarize(label: &str, edits: &[Timed], published: &[(i64, i64)]) {
    let answers: Vec<Duration> = edits.iter().map(|timed| timed.answer).collect();
    let mut publishes = Vec::new();
    let mut overheads = Vec::new();
    for (n, timed) in edits.iter().enumerate() {
        if let Some(publish) = publication(timed, n, published) {
            publishes.push(publish);
            overheads.push(timed.answer.saturating_sub(publish));
        }
    }
    let wrong = edits.iter().filter(|timed| !timed.right).count();
    report(&format!("{label}: write -> answer"), &answers);
    report(&format!("{label}: write -> pyright publishes"), &publishes);
    report(&format!("{label}: answer - publish"), &overheads);
    let worst = Percentiles::new(&overheads).ms(1.0);
    println!(
        "{label}: worst overhead {worst:.0} ms; {wrong} wrong answers of {}",
        edits.len()
    );
}

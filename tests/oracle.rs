//! The oracle's bounded sample, run on every push: a few seeded edits per
//! server on each of its published projects, each answer judged by the
//! language's own checker (`common/oracle.rs`). It fails on any answer
//! that is wrong without a warning, printing each with the command that
//! asks it again; the full sample is `benches/oracle.rs`.
//!
//! `ORACLE_SERVER`, `ORACLE_PROJECT`, `ORACLE_SEED` and `ORACLE_ONLY`
//! narrow a run to one server, one project, a seed and one edit.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::oracle::{JUDGES, Verdict, run, without_last_parameter};
use common::*;

/// The seed CI runs with; a run by hand may give another.
const SEED: u64 = 57;
/// Edits per project in the bounded sample.
const EDITS: usize = 3;

fn sample(server: &str) {
    sample_of(server, EDITS);
}

fn sample_of(server: &str, edits: usize) {
    let Some(judge) = JUDGES.iter().find(|judge| judge.server == server) else {
        panic!("no judge for {server}");
    };
    if std::env::var("ORACLE_SERVER").is_ok_and(|only| only != server) {
        return;
    }
    let seed = std::env::var("ORACLE_SEED")
        .ok()
        .and_then(|seed| seed.parse().ok())
        .unwrap_or(SEED);
    let only = std::env::var("ORACLE_ONLY")
        .ok()
        .and_then(|index| index.parse().ok());
    let project = std::env::var("ORACLE_PROJECT").ok();
    let tally = match run(judge, seed, edits, only, project.as_deref()) {
        Ok(tally) => tally,
        Err(reason) => return skip(&reason),
    };
    for judged in &tally.judged {
        eprintln!("{:?}: {}", judged.verdict, judged.question);
        if judged.verdict != Verdict::Right {
            eprintln!("  {}", judged.why.replace('\n', "\n  "));
        }
    }
    eprintln!("{tally}");
    let unwarned: Vec<String> = tally
        .unwarned()
        .map(|judged| {
            format!(
                "{}\n{}\nreplay: {}",
                judged.question, judged.why, judged.replay
            )
        })
        .collect();
    assert!(
        unwarned.is_empty(),
        "{} answers wrong without a warning:\n\n{}",
        unwarned.len(),
        unwarned.join("\n\n")
    );
}

#[test]
fn oracle_pyright() {
    sample("pyright");
}

#[test]
fn oracle_typescript() {
    sample("typescript");
}

#[test]
fn oracle_gopls() {
    sample("gopls");
}

#[test]
fn oracle_clangd() {
    sample("clangd");
}

#[test]
fn oracle_basedpyright() {
    sample("basedpyright");
}

#[test]
fn oracle_ty() {
    sample("ty");
}

#[test]
fn oracle_tsgo() {
    sample("tsgo");
}

/// One edit a crate: each is two `cargo check` runs of the checker's
/// and rust-analyzer's own check on save, half a minute or more.
#[test]
fn oracle_rust_analyzer() {
    sample_of("rust-analyzer", 1);
}

#[test]
fn the_last_parameter_callers_give_is_dropped() {
    assert_eq!(
        without_last_parameter("self, a, b", Some("self")).as_deref(),
        Some("self, a")
    );
    assert_eq!(without_last_parameter("self", Some("self")), None);
    assert_eq!(without_last_parameter("a, *args", None), None);
    assert_eq!(
        without_last_parameter("w int, h int", None).as_deref(),
        Some("w int")
    );
}

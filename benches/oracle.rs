//! The oracle's full sample, run by hand:
//!
//! ```sh
//! cargo build --workspace && cargo bench --bench oracle
//! ```
//!
//! Every server of `tests/common/oracle/` on each of its projects,
//! `ORACLE_EDITS` seeded edits a project (default 12) from `ORACLE_SEED`
//! (default 57), the questions about each edited definition, the edit's
//! `check_edit` and diagnostics judged by the language's own checker.
//! Prints the table of docs/languages.md and every answer wrong without
//! a warning, with the command that asks it again, then how long each
//! server's `check_edit` took (the table of docs/benchmarks.md);
//! `ORACLE_WRITE=1` writes the first table into docs/languages.md.
//! `ORACLE_SERVER` runs one server.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "../tests/common/mod.rs"]
mod common;

use common::oracle::{JUDGES, TABLE_HEADING, Tally, Verdict, run};
use std::path::Path;

fn main() {
    let number = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|value| value.parse().ok())
            .unwrap_or(default)
    };
    let seed = number("ORACLE_SEED", 57);
    let edits = number("ORACLE_EDITS", 12) as usize;
    let only = std::env::var("ORACLE_SERVER").ok();
    let mut tallies = Vec::new();
    for judge in JUDGES {
        if only.as_deref().is_some_and(|only| only != judge.server) {
            continue;
        }
        match run(judge, seed, edits, None, None) {
            Ok(tally) => {
                println!("{tally}");
                for judged in tally.unwarned() {
                    println!(
                        "  wrong without a warning: {}\n  {}\n  replay: {}",
                        judged.question, judged.why, judged.replay
                    );
                }
                tallies.push(tally);
            }
            Err(reason) => println!("{}: not run: {reason}", judge.server),
        }
    }
    let table = section(&tallies, edits, seed);
    println!("{table}");
    println!("| server | projects | checks | median | p90 | slowest |\n|---|---|---|---|---|---|");
    for tally in &tallies {
        if let Some((median, p90, slowest)) = tally.check_times() {
            println!(
                "| {} | {} | {} | {median:.1} s | {p90:.1} s | {slowest:.1} s |",
                tally.server,
                tally.projects.join(", "),
                tally.checks.len()
            );
        }
    }
    if std::env::var_os("ORACLE_WRITE").is_some() {
        let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/languages.md");
        let kept = std::fs::read_to_string(&page).unwrap();
        let above = kept.find(TABLE_HEADING).map_or(&*kept, |at| &kept[..at]);
        std::fs::write(&page, format!("{above}{table}")).unwrap();
    }
}

/// The page's section: what was judged and how, then a row per server.
fn section(tallies: &[Tally], edits: usize, seed: u64) -> String {
    let mut text = format!(
        "{TABLE_HEADING}\n\
         Each server below is judged by its language's own checker on\n\
         published projects (`ORACLE_EDITS={edits} cargo bench --bench oracle`,\n\
         {edits} edits a project, seed {seed}; `tests/oracle.rs` runs a bounded\n\
         sample on every push). An edit, in a copy of the project, renames a\n\
         definition (a function or method, a type, a constant, a field), drops a\n\
         function's last parameter, changes its return type (where the language\n\
         writes one on the definition's line), deletes a file, or, for a linter, puts\n\
         a statement it flags first in a function's body (`debugger;` for Biome,\n\
         `var flagged = 1;` for ESLint) or above a method (`$flagged = ;`, which\n\
         `php -l` judges for intelephense); a linter's findings alone are\n\
         compared with its own command line's. The definition is asked about\n\
         first: `find_references` must list every use the checker finds a\n\
         rename breaking, and every occurrence of the name in code (comments\n\
         and strings left out) from which `definition` leads to it alone (and\n\
         name the definition on every line it lists),\n\
         `definition` from one of those uses must lead back to it, and\n\
         `definition` and `source` by name, `hover` and `search` (and, for a\n\
         method, `search` of `Type.method`) must find it. Then `check_edit` is asked (of every edit but a deletion, which it\n\
         cannot be given), the edit is written and the checker run, and every\n\
         file whose errors grew must be in the answer with new errors or named\n\
         as not checked. Of up to four of those files `diagnostics` is asked as\n\
         on disk, with the edit written (its errors must grow) and with it\n\
         undone (the first answer again). An answer is right, partial and said,\n\
         wrong and said, or wrong without a warning.\n\n\
         | server | projects | answers checked | wrong without a warning | partial and said | wrong and said | seed |\n\
         |---|---|---|---|---|---|---|\n"
    );
    for tally in tallies {
        text.push_str(&format!("{tally}\n"));
    }
    let right: usize = tallies
        .iter()
        .map(|tally| tally.count(Verdict::Right))
        .sum();
    let all: usize = tallies.iter().map(|tally| tally.judged.len()).sum();
    text.push_str(&format!("\n{right} of {all} answers right.\n"));
    text
}

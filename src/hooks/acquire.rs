//! `windlass acquire`: before an agent reads or edits a file (Claude Code
//! PreToolUse, Gemini BeforeTool), takes the owner's advisory lease on it
//! in `file_locks`, waiting up to `--timeout` while another owner holds
//! it, and denies the tool naming the holder when the wait runs out. When
//! the agent is about to edit a file that changed on disk since it last
//! read or wrote it, it is told so.

use super::{Format, Run, mtime_ns};
use crate::list::shown_time;
use anyhow::Result;
use clap::Args;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use windlass_actors::recorder::kind;
use windlass_actors::store::locks::{self, Holder, Lease};
use windlass_actors::store::{self, hooks, sessions};

/// How often a waiting hook asks again.
const POLL: Duration = Duration::from_millis(50);

#[derive(Args, Clone, Debug)]
pub struct AcquireArgs {
    /// The host's JSON to answer in.
    #[arg(long, value_enum)]
    pub format: Format,
    /// Seconds to wait for another owner's lease; kept below the hook's
    /// own timeout, since a PreToolUse hook that times out does not block.
    #[arg(long, default_value_t = 20)]
    pub timeout: u64,
    /// Seconds a lease lasts unless renewed or let go.
    #[arg(long, default_value_t = 120)]
    pub lease: u64,
}

/// The tools that only read.
fn reads(tool: &str) -> bool {
    matches!(tool, "Read" | "read_file")
}

pub fn run(args: &AcquireArgs) -> Result<()> {
    super::run("acquire", |run| acquire(run, args))
}

fn acquire(run: &mut Run, args: &AcquireArgs) -> Result<Option<Value>> {
    let Some(file) = run.input.file() else {
        return Ok(None);
    };
    let shown = file.display().to_string();
    let owner = run.input.owner();
    let session = run.session.as_ref().map(|session| session.id.clone());
    let ttl = i64::try_from(args.lease.saturating_mul(1000)).unwrap_or(i64::MAX);
    let deadline = Instant::now() + Duration::from_secs(args.timeout);
    let mut waited_on = None;
    loop {
        let lease = locks::try_acquire(
            &mut run.store,
            &shown,
            &owner,
            session.as_deref(),
            store::now_ms(),
            ttl,
            |connection, holder| {
                sessions::gone(connection, holder, crate::process::alive).unwrap_or(false)
            },
        )?;
        match lease {
            Lease::Granted => break,
            Lease::Held(holder) if Instant::now() >= deadline => {
                return Ok(Some(deny(run, args.format, &shown, &holder)));
            }
            Lease::Held(holder) => {
                waited_on.get_or_insert(holder);
                std::thread::sleep(POLL);
            }
        }
    }
    run.record(
        kind::LOCK_ACQUIRED,
        json!({"file": shown, "owner": owner, "waited_on": waited_on.map(|holder| holder.owner)}),
    );
    let tool = run.input.tool_name.clone().unwrap_or_default();
    let now_mtime = mtime_ns(&file);
    let known = hooks::file_state(&run.store, &owner, &shown)?;
    if reads(&tool) {
        // What the agent reads now is what it knows from now on.
        hooks::set_mtime(&run.store, &owner, &shown, now_mtime, store::now_ms())?;
        return Ok(None);
    }
    let changed =
        known.is_some_and(|known| known.mtime_ns.is_some() && known.mtime_ns != now_mtime);
    Ok(changed.then(|| {
        run.context(
            args.format,
            &format!(
                "{shown} changed on disk since this agent last read or wrote it; its content may differ from what it remembers"
            ),
        )
    }))
}

/// The host's refusal of the tool, naming who holds the file.
fn deny(run: &mut Run, format: Format, file: &str, holder: &Holder) -> Value {
    run.record(
        kind::LOCK_DENIED,
        json!({"file": file, "owner": run.input.owner(), "holder": holder.owner, "since": holder.since}),
    );
    let reason = format!(
        "{file} is being edited by another agent ({}) since {}; windlass keeps one agent at a time on a file. Work on something else and try again later.",
        holder.owner,
        shown_time(holder.since)
    );
    match format {
        Format::Claude => json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }),
        Format::Gemini => json!({"decision": "deny", "reason": reason}),
    }
}

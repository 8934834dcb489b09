//! `windlass acquire`: before an agent reads or edits a file (Claude Code
//! PreToolUse, Gemini BeforeTool).
//!
//! An edit takes the owner's advisory lease on the file in `file_locks`,
//! waiting up to `--timeout` while another owner edits it, and is denied
//! naming the editor when the wait runs out; the agent is told when the
//! file changed on disk since it last read or wrote it. A read takes
//! nothing and never waits: it is told who is editing the file, if anyone.
//! Either way the owner has moved on from the files it edited before (its
//! leases on them renewed more than [`BATCH`] ago are let go), which frees
//! the lease of an edit its host rejected before any hook ran.

use super::{Format, Run, Touched, mtime_ns};
use crate::clock::shown_time;
use crate::control::client;
use crate::control::protocol::{Answer, Request};
use anyhow::Result;
use clap::Args;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use windlass_actors::store::locks::{self, Claimant, Holder, Lease};
use windlass_actors::store::{self, hooks, sessions};
use windlass_actors::vocabulary::events::EventKind;

/// How often a waiting hook asks again.
const POLL: Duration = Duration::from_millis(50);
/// How long the session may take to keep a file as it is before an edit:
/// it waits a little for the server's outline of it.
const PREPARE_LIMIT: Duration = Duration::from_secs(4);
/// Leases renewed this recently are of the tool batch in progress (a host
/// runs the hooks of parallel tool calls at once), not files moved on from.
const BATCH: Duration = Duration::from_secs(2);

#[derive(Args, Clone, Debug)]
pub struct AcquireArgs {
    /// The host's JSON to answer in.
    #[arg(long, value_enum)]
    pub format: Format,
    /// Seconds an edit waits for another owner's lease; kept below the
    /// hook's own timeout, since a PreToolUse hook that times out does not
    /// block.
    #[arg(long, default_value_t = 20)]
    pub timeout: u64,
    /// Seconds an edit's lease lasts unless renewed or let go: the bound
    /// on a lease whose edit never reached its PostToolUse.
    #[arg(long, default_value_t = 60)]
    pub lease: u64,
}

pub fn run(args: &AcquireArgs) -> Result<()> {
    super::run("acquire", |run| acquire(run, args))
}

/// A read is answered for its one file; an edit takes the lease on every
/// file it will write (a patch names several), in the order named, and is
/// refused when one stays held by another owner.
fn acquire(run: &mut Run, args: &AcquireArgs) -> Result<Option<Value>> {
    let format = args.format.running();
    let touched = run.input.touched(format.host());
    let Some(first) = touched.first() else {
        return Ok(None);
    };
    move_on(run, &touched)?;
    if first.read {
        let shown = first.path.display().to_string();
        return read(run, format, &first.path, &shown);
    }
    let mut changed = Vec::new();
    for file in &touched {
        let shown = file.path.display().to_string();
        if let Some(denied) = lease(run, args, format, &shown)? {
            return Ok(Some(denied));
        }
        keep_as_before(run, file);
        let known = hooks::file_state(&run.store, &run.input.owner(), &shown)?;
        if known
            .is_some_and(|known| known.mtime_ns.is_some() && known.mtime_ns != mtime_ns(&file.path))
        {
            changed.push(shown);
        }
    }
    Ok((!changed.is_empty()).then(|| {
        run.context(
            format,
            &format!(
                "{} changed on disk since this agent last read or wrote it; its content may differ from what it remembers",
                changed.join(", ")
            ),
        )
    }))
}

/// A read: what the agent reads now is what it knows from now on, and it
/// hears who is editing the file meanwhile.
fn read(
    run: &mut Run,
    format: Format,
    file: &std::path::Path,
    shown: &str,
) -> Result<Option<Value>> {
    let owner = run.input.owner();
    let now = store::now_ms();
    hooks::set_mtime(&run.store, &owner, shown, mtime_ns(file), now)?;
    let editor = locks::editor(&run.store, shown, &owner, now, |connection, session| {
        sessions::gone(connection, session, crate::process::alive).unwrap_or(false)
    })?;
    Ok(editor.map(|editor| {
        run.context(
            format,
            &format!(
                "{shown} is being edited by another agent ({}) for {}; what this read shows may change",
                named(&editor),
                held_for(&editor, now)
            ),
        )
    }))
}

/// Has the session keep `file` as it is before the edit, so that
/// `release` can tell what the edit did to the files that use it. A file
/// the session cannot keep (outside its roots, not there yet) is only
/// logged: its edit is told of as any other, without its effect.
fn keep_as_before(run: &Run, file: &Touched) {
    let Some(session) = &run.session else {
        return;
    };
    if file.removed || !file.path.is_file() {
        return;
    }
    let request = Request::PrepareEdit {
        file: file.path.clone(),
        session: Some(session.id),
    };
    let kept = client::expect(&session.socket, &request, PREPARE_LIMIT, |answer| {
        matches!(answer, Answer::Prepared).then_some(())
    });
    if let Err(error) = kept {
        super::log_failure("acquire", &format!("{}: {error:#}", file.path.display()));
    }
}

/// Takes the edit lease, waiting while another owner edits; the host's
/// refusal when the wait runs out.
fn lease(run: &mut Run, args: &AcquireArgs, format: Format, shown: &str) -> Result<Option<Value>> {
    let owner = run.input.owner();
    let session = run.session.as_ref().map(|session| session.id);
    let ttl = i64::try_from(args.lease.saturating_mul(1000)).unwrap_or(i64::MAX);
    let deadline = Instant::now() + Duration::from_secs(args.timeout);
    let mut waited_on = None;
    loop {
        let claimant = Claimant {
            owner: &owner,
            session,
            host: Some(format.host().name),
        };
        let lease = locks::try_acquire(
            &mut run.store,
            shown,
            claimant,
            store::now_ms(),
            ttl,
            |connection, holder| {
                sessions::gone(connection, holder, crate::process::alive).unwrap_or(false)
            },
        )?;
        match lease {
            Lease::Granted => break,
            Lease::Held(holder) if Instant::now() >= deadline => {
                return Ok(Some(deny(run, format, shown, &holder)));
            }
            Lease::Held(holder) => {
                waited_on.get_or_insert(holder);
                std::thread::sleep(POLL);
            }
        }
    }
    run.record(
        EventKind::LockAcquired,
        json!({"file": shown, "owner": owner, "waited_on": waited_on.map(|holder| holder.owner)}),
    );
    Ok(None)
}

/// Lets go of the owner's leases on other files than `touched`, which it
/// is done with.
fn move_on(run: &mut Run, touched: &[Touched]) -> Result<()> {
    let owner = run.input.owner();
    let batch_ms = i64::try_from(BATCH.as_millis()).unwrap_or(i64::MAX);
    let keep: Vec<String> = touched
        .iter()
        .map(|file| file.path.display().to_string())
        .collect();
    let released = locks::release_others(
        &mut run.store,
        &owner,
        &keep,
        store::now_ms().saturating_sub(batch_ms),
    )?;
    for file in released {
        run.record(
            EventKind::LockReleased,
            json!({"file": file, "owner": owner, "moved_on_to": keep.first()}),
        );
    }
    Ok(())
}

/// The host's refusal of the tool, naming who is editing the file.
fn deny(run: &mut Run, format: Format, file: &str, holder: &Holder) -> Value {
    let now = store::now_ms();
    run.record(
        EventKind::LockDenied,
        json!({"file": file, "owner": run.input.owner(), "holder": holder.owner, "since": holder.since}),
    );
    let reason = format!(
        "{file} is being edited by another agent ({}) for {} (since {}); windlass keeps one agent at a time editing a file. Work on something else and try again later.",
        named(holder),
        held_for(holder, now),
        shown_time(holder.since)
    );
    format.host().refusal(&reason)
}

/// The holder as another agent is told of it: its owner, and its host.
fn named(holder: &Holder) -> String {
    match &holder.host {
        Some(host) => format!("{} in {host}", holder.owner),
        None => holder.owner.clone(),
    }
}

/// How long the holder has held the lease, in whole seconds.
fn held_for(holder: &Holder, now: i64) -> String {
    let seconds = now.saturating_sub(holder.since).max(0) / 1000;
    format!("{seconds} s")
}

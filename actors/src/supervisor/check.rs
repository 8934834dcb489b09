//! Running a server's binary once (`--version`) before trusting it: a
//! command found on PATH may be only a shim, such as a rustup proxy whose
//! component is not installed, and would otherwise crash on every start.

use crate::lsp::transport::reason_of;
use std::process::Stdio;
use std::time::Duration;
use tokio::process::Command;

/// A check that has not exited by then counts as failed.
const CHECK_TIMEOUT: Duration = Duration::from_secs(15);

/// Runs `command args` and says why it is unusable, if it is.
pub async fn run(command: &str, args: &[String]) -> Result<(), String> {
    let shown = format!("{command} {}", args.join(" "));
    let child = Command::new(command)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|error| format!("`{shown}` could not run: {error}"))?;
    let output = match tokio::time::timeout(CHECK_TIMEOUT, child.wait_with_output()).await {
        Ok(Ok(output)) => output,
        Ok(Err(error)) => return Err(format!("`{shown}` failed: {error}")),
        Err(_) => {
            return Err(format!(
                "`{shown}` did not finish within {} s",
                CHECK_TIMEOUT.as_secs()
            ));
        }
    };
    if output.status.success() {
        return Ok(());
    }
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&output.stdout)
    );
    let reason = reason_of(&text);
    Err(match reason.is_empty() {
        true => format!("`{shown}` exited with {}", output.status),
        false => format!("`{shown}` failed: {reason}"),
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_binary_that_fails_is_reported_with_its_reason() {
        let script = [
            "-c".to_owned(),
            "echo 'error: Unknown binary' >&2; echo '  0: frame' >&2; exit 1".to_owned(),
        ];
        let error = run("sh", &script).await.unwrap_err();
        assert!(error.ends_with("failed: error: Unknown binary"), "{error}");
        assert_eq!(run("true", &[]).await, Ok(()));
        let missing = run("windlass-no-such-binary", &[]).await.unwrap_err();
        assert!(missing.contains("could not run"), "{missing}");
    }
}

//! Where the daemon's socket goes, found from HOME alone (never from
//! `XDG_RUNTIME_DIR`, which some hosts strip): under the home directory
//! while the socket's path fits the 104 bytes macOS allows (Windlass
//! keeps it to 100), else in `/tmp/windlass-UID-HASH`. Either way two
//! sessions of the same user find the same daemon.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `/.local/state/windlass/run/windlass-VERSION-x.sock`: the longest
/// socket name a home directory must leave room for.
fn longest_socket_suffix() -> usize {
    format!(
        "/.local/state/windlass/run/windlass-{}-x.sock",
        env!("CARGO_PKG_VERSION")
    )
    .len()
}

/// A home directory in `world` whose path is `length` bytes long.
fn home_of_length(world: &Daemon, length: usize) -> PathBuf {
    let base = world.dir.path().display().to_string();
    let filler = "h".repeat(length - base.len() - 1);
    let home = PathBuf::from(format!("{base}/{filler}"));
    std::fs::create_dir_all(&home).unwrap();
    assert_eq!(home.as_os_str().len(), length);
    home
}

/// Two sessions in a world whose HOME is `home`, with no
/// `XDG_RUNTIME_DIR`: both are of one daemon; its socket's path.
fn two_sessions_share_one_daemon(world: &Daemon, home: &Path) -> PathBuf {
    let project = project(&[("main.py", "x = 1\n")]);
    let home_text = home.display().to_string();
    let env = [("HOME", home_text.as_str()), ("XDG_RUNTIME_DIR", "")];
    let client = Client {
        daemon: Some(world),
        env: &env,
        ..Client::default()
    };
    let args = root_arg(project.path());
    let first = Session::start_as(&args, &client);
    let second = Session::start_as(&args, &client);
    let status = second.ok("status", json!({}));
    assert!(status.contains("(2 attached)"), "{status}");
    first.ok("status", json!({}));
    // `doctor` names the socket of the daemon it reached.
    let empty = tempfile::tempdir().unwrap();
    let doctor = Command::new(windlass_binary())
        .args(["doctor", "--json", "--root"])
        .arg(empty.path())
        .env_clear()
        .env("HOME", home)
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let detail = report
        .to_string()
        .split(", at ")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .map(PathBuf::from);
    let socket = detail.unwrap_or_else(|| panic!("no daemon socket in `doctor`: {report}"));
    // Their bridges gone first, none starts the daemon again once stopped.
    drop(first);
    drop(second);
    let stopped = Command::new(windlass_binary())
        .arg("stop")
        .env_clear()
        .env("HOME", home)
        .output()
        .unwrap();
    assert!(stopped.status.success(), "{stopped:?}");
    socket
}

#[test]
fn a_socket_that_fits_stays_under_the_home_directory() {
    let world = Daemon::at_home();
    let home = home_of_length(&world, 100 - longest_socket_suffix());
    let socket = two_sessions_share_one_daemon(&world, &home);
    assert!(
        socket.starts_with(home.join(".local/state/windlass/run")),
        "{socket:?}"
    );
    assert!(socket.as_os_str().len() <= 100, "{socket:?}");
}

#[test]
fn a_home_one_byte_too_deep_puts_the_socket_in_tmp() {
    let world = Daemon::at_home();
    let home = home_of_length(&world, 101 - longest_socket_suffix());
    let socket = two_sessions_share_one_daemon(&world, &home);
    let uid = String::from_utf8(Command::new("id").arg("-u").output().unwrap().stdout).unwrap();
    let directory = format!("/tmp/windlass-{}-", uid.trim());
    assert!(
        socket.display().to_string().starts_with(&directory),
        "{socket:?}"
    );
    assert!(
        !home
            .join(".local/state/windlass/run")
            .join(socket.file_name().unwrap())
            .exists()
    );
    let _removed = std::fs::remove_dir_all(socket.parent().unwrap());
}

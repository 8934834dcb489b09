//! Link options for the binaries.
//!
//! On glibc 2.36 and later the binaries are linked with packed relative
//! relocations (`DT_RELR`): a position-independent executable otherwise
//! carries about half a megabyte of relocation entries that the dynamic
//! loader reads, and keeps resident, at every start. Older glibc cannot
//! load such a binary, and a cross build cannot ask the target's, so
//! both keep the usual relocations. So does a binary meant for other
//! machines: `WINDLASS_GLIBC` names the oldest glibc it must start on
//! (`scripts/dist` sets it, linking with zig against that glibc).

#![allow(
    clippy::print_stdout,
    reason = "cargo reads a build script's instructions from its stdout"
)]

use std::process::Command;

/// The first glibc whose loader applies packed relative relocations.
const RELR_GLIBC: (u32, u32) = (2, 36);

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=WINDLASS_GLIBC");
    let variable = |name| std::env::var(name).unwrap_or_default();
    let oldest = match variable("WINDLASS_GLIBC").as_str() {
        "" => host_glibc(),
        floor => parse_glibc(floor),
    };
    let target = variable("TARGET");
    let host = variable("HOST");
    let gnu_linux =
        variable("CARGO_CFG_TARGET_OS") == "linux" && variable("CARGO_CFG_TARGET_ENV") == "gnu";
    if gnu_linux && target == host && oldest.is_some_and(|version| version >= RELR_GLIBC) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// The version of this machine's glibc, as `getconf` reports it
/// ("glibc 2.36").
fn host_glibc() -> Option<(u32, u32)> {
    let output = Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    parse_glibc(text.trim().strip_prefix("glibc ")?)
}

/// `2.31` as `(2, 31)`.
fn parse_glibc(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

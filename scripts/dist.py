#!/usr/bin/env python3
"""Builds the packages that carry Windlass's binaries to machines without
a Rust toolchain: npm packages (`npx -y windlass-mcp`) and a Python wheel
(`uvx windlass-mcp`, `pipx install windlass-mcp`).

    scripts/dist.py [--platform P] [--bin-dir DIR] [--out DIR]

Without `--bin-dir` it builds the release binaries first: for Linux with
cargo-zigbuild against glibc 2.31 (`WINDLASS_GLIBC` keeps build.rs from
linking in what only glibc 2.36 loads), for macOS with plain cargo.
It writes into `--out` (default `target/dist`):

    bin/                       the two binaries it packaged
    npm/windlass-mcp-V.tgz     the launcher package, one for all platforms
    npm/windlass-mcp-P-V.tgz   this platform's binaries
    wheel/windlass_mcp-V-py3-none-TAG.whl

docs/decisions.md says why these names and this layout.
"""

import argparse
import base64
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = "windlass-mcp"
BINARIES = ("windlass", "windlass-bridge")
# The oldest glibc a Linux binary starts on: Debian 11, Ubuntu 20.04.
GLIBC = "2.31"

# Each platform: its Rust target, npm's `os` and `cpu`, and its wheel tag.
PLATFORMS = {
    "linux-x64-gnu": ("x86_64-unknown-linux-gnu", "linux", "x64",
                      f"manylinux_{GLIBC.replace('.', '_')}_x86_64"),
    "linux-arm64-gnu": ("aarch64-unknown-linux-gnu", "linux", "arm64",
                        f"manylinux_{GLIBC.replace('.', '_')}_aarch64"),
    "darwin-x64": ("x86_64-apple-darwin", "darwin", "x64", "macosx_10_12_x86_64"),
    "darwin-arm64": ("aarch64-apple-darwin", "darwin", "arm64", "macosx_11_0_arm64"),
}

DESCRIPTION = ("MCP server that gives AI coding agents answers from real language "
               "servers: types, definitions, references, and the errors after every edit")

# The shell lines both launchers start with: `$self` becomes the script's
# own file, the links npm and pipx make to it followed.
FOLLOW_LINKS = """self=$0
while [ -L "$self" ]; do
  link=$(readlink "$self")
  case $link in
    /*) self=$link ;;
    *) self=$(dirname "$self")/$link ;;
  esac
done
"""

# Runs this machine's binary from its platform package. A shell script,
# not Node: `exec` leaves no Node process beside a server that lives for
# hours. npm links it from node_modules/.bin, so links are followed to
# find the package it belongs to.
NPM_LAUNCHER = """#!/bin/sh
# windlass-mcp: runs the windlass binary of this machine's platform package.
""" + FOLLOW_LINKS + """package=$(cd "$(dirname "$self")/.." && pwd)
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) platform=linux-x64-gnu ;;
  Linux-aarch64 | Linux-arm64) platform=linux-arm64-gnu ;;
  Darwin-x86_64) platform=darwin-x64 ;;
  Darwin-arm64) platform=darwin-arm64 ;;
  *)
    echo "windlass-mcp: no prebuilt windlass for $(uname -s) $(uname -m); build it with cargo (see the README)" >&2
    exit 1
    ;;
esac
for dir in "$package/node_modules/windlass-mcp-$platform" "$package/../windlass-mcp-$platform"; do
  if [ -x "$dir/bin/windlass" ]; then
    exec "$dir/bin/windlass" "$@"
  fi
done
echo "windlass-mcp: its package for this machine, windlass-mcp-$platform, is not installed (npm leaves optional dependencies out with --omit=optional)" >&2
exit 1
"""

# The wheel's `windlass-mcp` command, for `uvx windlass-mcp`, which runs
# the command named after the package. pipx links it elsewhere, so links
# are followed to the directory the binary is in.
WHEEL_LAUNCHER = """#!/bin/sh
# windlass-mcp: runs the windlass binary installed beside this script.
""" + FOLLOW_LINKS + """exec "$(dirname "$self")/windlass" "$@"
"""


def version() -> str:
    text = (ROOT / "Cargo.toml").read_text()
    found = re.search(r'^\[workspace\.package\]\s*\nversion = "([^"]+)"', text, re.M)
    if not found:
        sys.exit("dist: no [workspace.package] version in Cargo.toml")
    return found.group(1)


def this_platform() -> str:
    system, machine = platform.system(), platform.machine()
    names = {
        ("Linux", "x86_64"): "linux-x64-gnu",
        ("Linux", "aarch64"): "linux-arm64-gnu",
        ("Darwin", "x86_64"): "darwin-x64",
        ("Darwin", "arm64"): "darwin-arm64",
    }
    if (system, machine) not in names:
        sys.exit(f"dist: no package is built for {system} {machine}")
    return names[(system, machine)]


def build(platform_name: str) -> Path:
    """Builds the release binaries for `platform_name`; returns their directory."""
    target = PLATFORMS[platform_name][0]
    arguments = ["--locked", "--release"]
    for binary in BINARIES:
        arguments += ["--bin", binary]
    environment = dict(os.environ)
    if "linux" in target:
        environment["WINDLASS_GLIBC"] = GLIBC
        command = ["cargo", "zigbuild", "--target", f"{target}.{GLIBC}"]
    else:
        command = ["cargo", "build", "--target", target]
    subprocess.run(command + arguments, cwd=ROOT, env=environment, check=True)
    target_dir = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target_dir / target / "release"


def npm_pack(directory: Path, out: Path) -> Path:
    printed = subprocess.run(
        ["npm", "pack", "--silent", "--pack-destination", str(out)],
        cwd=directory, check=True, capture_output=True, text=True,
    ).stdout
    return out / printed.strip().splitlines()[-1]


def readme(extra: str) -> str:
    return (f"# {NAME}\n\n{DESCRIPTION}.\n\n{extra}\n\n"
            "Run `windlass --help` for its commands, `windlass doctor` to see which "
            "language servers it found.\n")


def platform_package(platform_name: str, binaries: Path, work: Path, out: Path) -> Path:
    _, os_name, cpu, _ = PLATFORMS[platform_name]
    directory = work / f"{NAME}-{platform_name}"
    (directory / "bin").mkdir(parents=True)
    for binary in BINARIES:
        shutil.copy2(binaries / binary, directory / "bin" / binary)
        (directory / "bin" / binary).chmod(0o755)
    manifest = {
        "name": f"{NAME}-{platform_name}",
        "version": version(),
        "description": f"The windlass binaries for {platform_name}, for the {NAME} package",
        "license": "MIT",
        "os": [os_name],
        "cpu": [cpu],
        "files": ["bin"],
    }
    if os_name == "linux":
        manifest["libc"] = ["glibc"]
    (directory / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    (directory / "README.md").write_text(
        readme(f"The binaries for {platform_name}; install `{NAME}`, which picks this package."))
    return npm_pack(directory, out)


def launcher_package(work: Path, out: Path) -> Path:
    directory = work / NAME
    (directory / "bin").mkdir(parents=True)
    launcher = directory / "bin" / "windlass"
    launcher.write_text(NPM_LAUNCHER)
    launcher.chmod(0o755)
    manifest = {
        "name": NAME,
        "version": version(),
        "description": DESCRIPTION,
        "license": "MIT",
        "bin": {"windlass": "bin/windlass", NAME: "bin/windlass"},
        "os": ["linux", "darwin"],
        "optionalDependencies": {f"{NAME}-{name}": version() for name in PLATFORMS},
        "files": ["bin"],
    }
    (directory / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    (directory / "README.md").write_text(readme(
        "`npx -y windlass-mcp` runs it as an MCP server over stdio; "
        "`npm install -g windlass-mcp` puts `windlass` on your PATH."))
    return npm_pack(directory, out)


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def wheel(platform_name: str, binaries: Path, out: Path) -> Path:
    """A wheel whose only content is its scripts: pip and uv install them
    into the environment's bin directory with their modes."""
    tag = f"py3-none-{PLATFORMS[platform_name][3]}"
    distribution = NAME.replace("-", "_")
    stem = f"{distribution}-{version()}"
    scripts = f"{stem}.data/scripts"
    info = f"{stem}.dist-info"
    files = [(f"{scripts}/{binary}", (binaries / binary).read_bytes()) for binary in BINARIES]
    files.append((f"{scripts}/{NAME}", WHEEL_LAUNCHER.encode()))
    files.append((f"{info}/METADATA", (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\n"
        f"Version: {version()}\n"
        f"Summary: {DESCRIPTION}\n"
        "License: MIT\n"
        "Description-Content-Type: text/markdown\n\n"
        + readme("`uvx windlass-mcp` runs it as an MCP server over stdio; "
                 "`pipx install windlass-mcp` puts `windlass` on your PATH.")).encode()))
    files.append((f"{info}/WHEEL", (
        "Wheel-Version: 1.0\n"
        "Generator: windlass scripts/dist.py\n"
        "Root-Is-Purelib: false\n"
        f"Tag: {tag}\n").encode()))
    record = "\n".join(record_line(name, data) for name, data in files)
    record += f"\n{info}/RECORD,,\n"
    files.append((f"{info}/RECORD", record.encode()))
    path = out / f"{stem}-{tag}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files:
            entry = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            executable = name.startswith(scripts)
            # The file type too: pip reads the mode only of a regular file.
            entry.external_attr = (0o100755 if executable else 0o100644) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, data)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--platform", choices=sorted(PLATFORMS), default=None)
    parser.add_argument("--bin-dir", type=Path, help="package these binaries instead of building")
    parser.add_argument("--out", type=Path, default=ROOT / "target" / "dist")
    arguments = parser.parse_args()
    platform_name = arguments.platform or this_platform()
    binaries = arguments.bin_dir or build(platform_name)
    out = arguments.out.resolve()
    for part in ("npm", "wheel"):
        shutil.rmtree(out / part, ignore_errors=True)
        (out / part).mkdir(parents=True)
    # `--bin-dir` may be the `bin` a previous run left: it is packed again.
    if binaries.resolve() != (out / "bin").resolve():
        shutil.rmtree(out / "bin", ignore_errors=True)
        (out / "bin").mkdir(parents=True)
        for binary in BINARIES:
            shutil.copy2(binaries / binary, out / "bin" / binary)
    with tempfile.TemporaryDirectory() as work:
        made = [
            launcher_package(Path(work), out / "npm"),
            platform_package(platform_name, binaries, Path(work), out / "npm"),
            wheel(platform_name, binaries, out / "wheel"),
        ]
    for path in made:
        print(path.relative_to(out.parent) if out.parent in path.parents else path)


if __name__ == "__main__":
    main()

//! An npm registry on loopback, for installing the packages
//! `scripts/dist.py` packed as users do (`npx -y`, `npm install -g`):
//! each package's document names its one version and its tarball, and
//! the registry records every path asked for. The launcher's optional
//! platform packages that were not built here are served too, made from
//! this platform's package with their own `os` and `cpu`, so that a test
//! can see npm fetch only the one this machine needs.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

pub struct Registry {
    pub url: String,
    fetched: Arc<Mutex<Vec<String>>>,
}

/// A package as served: its tarball's file name and bytes, and its
/// manifest.
struct Package {
    file: String,
    bytes: Arc<Vec<u8>>,
    manifest: Value,
}

impl Registry {
    /// Serves the tarballs in `packed`, all of version `version`.
    pub fn serve(packed: &Path, version: &str) -> Registry {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let packages = packages(packed, version);
        let fetched = Arc::new(Mutex::new(Vec::new()));
        let seen = fetched.clone();
        let (base, version) = (url.clone(), version.to_owned());
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                let path = request_path(&stream);
                seen.lock().unwrap().push(path.clone());
                let _closed = stream.write_all(&answer(&base, &version, &packages, &path));
            }
        });
        Registry { url, fetched }
    }

    /// The tarballs npm fetched, by file name.
    pub fn tarballs_fetched(&self) -> Vec<String> {
        self.fetched
            .lock()
            .unwrap()
            .iter()
            .filter_map(|path| path.rsplit_once("/-/").map(|(_, file)| file.to_owned()))
            .filter(|file| file.ends_with(".tgz"))
            .collect()
    }
}

/// The packed packages, and the platform packages the launcher names
/// that were not packed here.
fn packages(packed: &Path, version: &str) -> BTreeMap<String, Package> {
    let mut packages = BTreeMap::new();
    for entry in std::fs::read_dir(packed).unwrap().flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let bytes = std::fs::read(entry.path()).unwrap();
        let manifest = manifest_of(&bytes);
        let name = manifest["name"].as_str().unwrap().to_owned();
        let bytes = Arc::new(bytes);
        packages.insert(
            name,
            Package {
                file,
                bytes,
                manifest,
            },
        );
    }
    let built = packages
        .values()
        .find(|package| {
            package.manifest["os"]
                .as_array()
                .is_some_and(|os| os.len() == 1)
        })
        .map(|package| (package.bytes.clone(), package.manifest.clone()));
    let launcher = packages.values().find_map(|package| {
        package.manifest["optionalDependencies"]
            .as_object()
            .map(|names| names.keys().cloned().collect::<Vec<_>>())
    });
    if let (Some((bytes, manifest)), Some(names)) = (built, launcher) {
        for name in names {
            if packages.contains_key(&name) {
                continue;
            }
            let platform = name
                .rsplit_once("-mcp-")
                .map_or("", |(_, platform)| platform);
            let mut parts = platform.split('-');
            let (os, cpu) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
            let mut made = manifest.clone();
            made["name"] = json!(name);
            made["os"] = json!([os]);
            made["cpu"] = json!([cpu]);
            let file = format!("{name}-{version}.tgz");
            let bytes = bytes.clone();
            packages.insert(
                name,
                Package {
                    file,
                    bytes,
                    manifest: made,
                },
            );
        }
    }
    packages
}

/// The path of the request on `stream`, its headers read.
fn request_path(stream: &TcpStream) -> String {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    let _read = reader.read_line(&mut line);
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let mut header = String::new();
    while reader.read_line(&mut header).is_ok_and(|read| read > 2) {
        header.clear();
    }
    path
}

fn answer(base: &str, version: &str, packages: &BTreeMap<String, Package>, path: &str) -> Vec<u8> {
    let path = path.trim_start_matches('/');
    let tarball = packages
        .values()
        .find(|package| path.ends_with(&format!("/-/{}", package.file)));
    let (kind, body) = match (tarball, packages.get_key_value(path)) {
        (Some(package), _) => ("application/octet-stream", package.bytes.to_vec()),
        (None, Some((name, package))) => {
            let mut document = package.manifest.clone();
            document["dist"] = json!({
                "tarball": format!("{base}/{name}/-/{}", package.file),
                "integrity": integrity(&package.bytes),
            });
            let body = json!({
                "name": name,
                "dist-tags": {"latest": version},
                "versions": {version: document},
            });
            ("application/json", body.to_string().into_bytes())
        }
        (None, None) => {
            return b"HTTP/1.1 404 Not Found\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}"
                .to_vec();
        }
    };
    let mut answer = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    answer.extend(body);
    answer
}

/// The `package.json` inside a packed tarball.
fn manifest_of(tarball: &[u8]) -> Value {
    let mut child = Command::new("tar")
        .args(["-xzO", "-f", "-", "package/package.json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let bytes = tarball.to_vec();
    let writer = std::thread::spawn(move || input.write_all(&bytes));
    let mut text = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    writer.join().unwrap().unwrap();
    child.wait().unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Subresource integrity, as npm checks a tarball: `sha512-BASE64`.
fn integrity(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("sha512-{}", base64(&sha2::Sha512::digest(bytes)))
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let triple = chunk.iter().enumerate().fold(0u32, |value, (index, byte)| {
            value | (u32::from(*byte) << (16 - 8 * index))
        });
        for index in 0..4 {
            match index <= chunk.len() {
                true => out.push(ALPHABET[((triple >> (18 - 6 * index)) & 63) as usize] as char),
                false => out.push('='),
            }
        }
    }
    out
}

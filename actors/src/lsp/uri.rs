//! `file://` URIs to and from filesystem paths.
//!
//! lsp-types' `Uri` knows nothing of paths, so the conversion lives here:
//! percent-encoding of every byte outside the unreserved set, and Windows
//! drive letters written as `/C:/…`. Also the repair of URIs servers write
//! with characters RFC 3986 does not allow, which lsp-types refuses.

use percent_encoding::{
    AsciiSet, CONTROLS, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode,
};
use std::path::{Path, PathBuf};

/// Bytes kept literally in a path segment; everything else is escaped.
const PATH_SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'/')
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b':');

/// Builds the `file://` URI of an absolute path.
pub fn path_to_uri(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let rooted = if text.starts_with('/') {
        text
    } else {
        format!("/{text}")
    };
    format!("file://{}", utf8_percent_encode(&rooted, PATH_SEGMENT))
}

/// Characters no URI holds as they are, outside an IPv6 host; other bytes
/// past ASCII are escaped too.
const NOT_IN_URIS: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'<')
    .add(b'>')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// A URI with what RFC 3986 does not allow in it percent-encoded, as
/// servers should have sent it: Java's `URI.toString` leaves `é` as it
/// is, and the url crate (rust-analyzer) `[` and `]`. Escapes already
/// there are kept, so the path it names does not change.
pub fn encode_loose(uri: &str) -> String {
    utf8_percent_encode(uri, NOT_IN_URIS).to_string()
}

/// Reads a `file://` URI back into a path; `None` for other schemes,
/// remote hosts, or escapes that do not decode to UTF-8.
pub fn uri_to_path(uri: &str) -> Option<PathBuf> {
    let rest = strip_scheme(uri)?;
    let path = match rest.strip_prefix("localhost") {
        Some(local) => local,
        None => rest,
    };
    if !path.starts_with('/') {
        return None;
    }
    let decoded = percent_decode_str(path).decode_utf8().ok()?;
    Some(PathBuf::from(windows_drive(&decoded).unwrap_or(&decoded)))
}

fn strip_scheme(uri: &str) -> Option<&str> {
    let prefix = uri.get(..7)?;
    prefix
        .eq_ignore_ascii_case("file://")
        .then(|| uri.get(7..))
        .flatten()
}

/// `/C:/x` is the URI form of `C:/x`.
fn windows_drive(path: &str) -> Option<&str> {
    let bytes = path.as_bytes();
    let is_drive = bytes.len() >= 3 && bytes[1].is_ascii_alphabetic() && bytes[2] == b':';
    (cfg!(windows) && is_drive).then(|| &path[1..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_special_characters() {
        let cases = [
            ("/tmp/a.rs", "file:///tmp/a.rs"),
            ("/tmp/with space/é.py", "file:///tmp/with%20space/%C3%A9.py"),
            ("/tmp/a#b?c%d", "file:///tmp/a%23b%3Fc%25d"),
            ("/tmp/日本.c", "file:///tmp/%E6%97%A5%E6%9C%AC.c"),
        ];
        for (path, uri) in cases {
            assert_eq!(path_to_uri(Path::new(path)), uri);
            assert_eq!(uri_to_path(uri), Some(PathBuf::from(path)));
        }
    }

    #[test]
    fn accepts_localhost_and_uppercase_scheme() {
        assert_eq!(
            uri_to_path("FILE://localhost/tmp/x"),
            Some(PathBuf::from("/tmp/x"))
        );
    }

    #[test]
    fn loose_uris_are_encoded_to_the_same_path() {
        let loose = "file:///home/josé/app/[id]/a b.ts";
        let encoded = encode_loose(loose);
        assert_eq!(encoded, "file:///home/jos%C3%A9/app/%5Bid%5D/a%20b.ts");
        assert!(encoded.parse::<lsp_types::Uri>().is_ok());
        assert!(loose.parse::<lsp_types::Uri>().is_err());
        assert_eq!(uri_to_path(&encoded), uri_to_path(loose));
        assert_eq!(encode_loose("file:///a%20b"), "file:///a%20b");
    }

    #[test]
    fn rejects_other_schemes_and_hosts() {
        assert_eq!(uri_to_path("https://example.com/x"), None);
        assert_eq!(uri_to_path("file://server/share/x"), None);
        assert_eq!(uri_to_path("untitled:Untitled-1"), None);
        assert_eq!(uri_to_path("file:///bad%FF"), None);
    }
}

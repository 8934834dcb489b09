//! LSP base-protocol framing: `Content-Length` headers around JSON bodies.
//!
//! Pure functions over bytes, shared by the transport's reader task and by
//! mockls. The decoder is a push parser so that a reader can feed it whatever
//! the pipe delivers (a byte at a time from a slow writer, or many messages in
//! one read) and pull complete bodies out.
//!
//! A peer's framing is not trusted. A header block without a usable length
//! is reported and the JSON value after it, if one follows, is taken as its
//! body. An oversize JSON body is skipped value by value, not by its stated
//! length (which may be a lie that would swallow every later message), and
//! reported with the request id found at its start.

use thiserror::Error;

/// The largest body a peer may send. Anything larger is refused unread so a
/// flooding server cannot make Windlass allocate without bound.
pub const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// Headers longer than this are not a header block but garbage.
const MAX_HEADER_BYTES: usize = 8 * 1024;

/// What can go wrong while cutting a byte stream into messages.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum FramingError {
    #[error("header block without Content-Length")]
    MissingLength,
    #[error("invalid Content-Length header: {0}")]
    InvalidLength(String),
    #[error("a message of {length} bytes, over the {MAX_BODY_BYTES}-byte limit, was refused")]
    TooLarge {
        length: usize,
        /// The request it answered, when its start says.
        id: Option<i64>,
    },
    #[error("header block longer than {MAX_HEADER_BYTES} bytes")]
    HeaderTooLong,
    #[error("header line is not UTF-8")]
    HeaderNotUtf8,
}

impl FramingError {
    /// The request the bad frame answered, when that can be told.
    pub fn id(&self) -> Option<i64> {
        match self {
            Self::TooLarge { id, .. } => *id,
            _ => None,
        }
    }
}

/// Bytes of an oversize body kept to find its request id in.
const PEEK_BYTES: usize = 512;

/// Frames one message body.
pub fn encode(body: &[u8]) -> Vec<u8> {
    let mut framed = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    framed.extend_from_slice(body);
    framed
}

/// Accumulates bytes and yields complete message bodies.
#[derive(Debug, Default)]
pub struct FrameDecoder {
    buffer: Vec<u8>,
    /// Body length announced by the header block already consumed, if any.
    expected: Option<usize>,
    /// Bytes of an oversize body still to be thrown away.
    discarding: usize,
    /// After a header block without a usable length: a JSON value that
    /// follows is its body.
    recovering: bool,
    /// An oversize JSON body being skipped to its end.
    skipping: Option<Skip>,
}

/// An oversize JSON body on its way past: where the scan is, and its
/// first bytes, read for its id.
#[derive(Debug)]
struct Skip {
    length: usize,
    scan: JsonScan,
    peek: Vec<u8>,
    reported: bool,
}

/// Where a scan of one JSON object or array is: enough to find its end
/// without keeping it.
#[derive(Debug, Default)]
struct JsonScan {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl JsonScan {
    /// Feeds `bytes`, which continue a value that starts with `{` or `[`;
    /// returns the index just past the value's end, if it ends in them.
    fn feed(&mut self, bytes: &[u8]) -> Option<usize> {
        for (index, byte) in bytes.iter().enumerate() {
            if self.in_string {
                match (self.escaped, byte) {
                    (true, _) => self.escaped = false,
                    (false, b'\\') => self.escaped = true,
                    (false, b'"') => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match byte {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return Some(index + 1);
                    }
                }
                _ => {}
            }
        }
        None
    }
}

impl FrameDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds bytes read from the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// Returns the next complete body, `Ok(None)` when more bytes are needed.
    ///
    /// After an error the decoder has resynchronised past the bad frame (an
    /// oversize body is skipped, a bad header block is dropped), so the caller
    /// may keep calling it.
    pub fn next_body(&mut self) -> Result<Option<Vec<u8>>, FramingError> {
        if self.skipping.is_some() {
            return self.skip_json();
        }
        self.skip_discarded();
        if self.discarding > 0 {
            return Ok(None);
        }
        if self.recovering {
            match self.recover() {
                Some(found) => return found,
                None => self.recovering = false,
            }
        }
        let length = match self.expected {
            Some(length) => length,
            None => match self.take_header() {
                Ok(Some(length)) => length,
                Ok(None) => return Ok(None),
                Err(error) => {
                    self.recovering = matches!(
                        error,
                        FramingError::MissingLength | FramingError::InvalidLength(_)
                    );
                    return Err(error);
                }
            },
        };
        if length > MAX_BODY_BYTES {
            return self.refuse(length);
        }
        if self.buffer.len() < length {
            self.expected = Some(length);
            return Ok(None);
        }
        self.expected = None;
        let rest = self.buffer.split_off(length);
        Ok(Some(std::mem::replace(&mut self.buffer, rest)))
    }

    /// After a bad header: the JSON value at the start of the buffer as a
    /// body (`Some(Ok(None))` while it is incomplete); `None` when what
    /// follows is not JSON.
    fn recover(&mut self) -> Option<Result<Option<Vec<u8>>, FramingError>> {
        let start = self
            .buffer
            .iter()
            .position(|byte| !byte.is_ascii_whitespace());
        let Some(start) = start else {
            return Some(Ok(None));
        };
        if !matches!(self.buffer[start], b'{' | b'[') {
            return None;
        }
        match JsonScan::default().feed(&self.buffer[start..]) {
            Some(end) => {
                self.recovering = false;
                let body = self.buffer[start..start + end].to_vec();
                self.buffer.drain(..start + end);
                Some(Ok(Some(body)))
            }
            None if self.buffer.len() > MAX_BODY_BYTES => {
                self.recovering = false;
                let length = self.buffer.len();
                self.buffer.clear();
                Some(Err(FramingError::TooLarge { length, id: None }))
            }
            None => Some(Ok(None)),
        }
    }

    /// An oversize body: a JSON one is skipped to its end, anything else
    /// by its stated length.
    fn refuse(&mut self, length: usize) -> Result<Option<Vec<u8>>, FramingError> {
        match self.buffer.first() {
            None => {
                // Which way to skip is known once the body starts.
                self.expected = Some(length);
                Ok(None)
            }
            Some(b'{' | b'[') => {
                self.expected = None;
                self.skipping = Some(Skip {
                    length,
                    scan: JsonScan::default(),
                    peek: Vec::new(),
                    reported: false,
                });
                self.skip_json()
            }
            Some(_) => {
                self.expected = None;
                self.discarding = length;
                self.skip_discarded();
                Err(FramingError::TooLarge { length, id: None })
            }
        }
    }

    /// Skips what has come of an oversize JSON body, reporting it (with
    /// its id) once its start has been read or it has ended.
    fn skip_json(&mut self) -> Result<Option<Vec<u8>>, FramingError> {
        let Some(skip) = &mut self.skipping else {
            return Ok(None);
        };
        let end = skip.scan.feed(&self.buffer);
        let consumed = end.unwrap_or(self.buffer.len());
        let wanted = PEEK_BYTES.saturating_sub(skip.peek.len()).min(consumed);
        skip.peek.extend_from_slice(&self.buffer[..wanted]);
        self.buffer.drain(..consumed);
        let error = FramingError::TooLarge {
            length: skip.length,
            id: super::message::recover_id(&String::from_utf8_lossy(&skip.peek)),
        };
        let report = !skip.reported && (end.is_some() || skip.peek.len() >= PEEK_BYTES);
        skip.reported |= report;
        if end.is_some() {
            self.skipping = None;
        }
        match report {
            true => Err(error),
            false if end.is_some() => self.next_body(),
            false => Ok(None),
        }
    }

    fn skip_discarded(&mut self) {
        let skipped = self.discarding.min(self.buffer.len());
        self.buffer.drain(..skipped);
        self.discarding -= skipped;
    }

    /// Consumes one header block and returns its Content-Length.
    fn take_header(&mut self) -> Result<Option<usize>, FramingError> {
        let Some(end) = find_header_end(&self.buffer) else {
            if self.buffer.len() > MAX_HEADER_BYTES {
                self.buffer.clear();
                return Err(FramingError::HeaderTooLong);
            }
            return Ok(None);
        };
        let header: Vec<u8> = self.buffer.drain(..end + 4).collect();
        parse_content_length(&header[..end]).map(Some)
    }
}

fn find_header_end(buffer: &[u8]) -> Option<usize> {
    buffer.windows(4).position(|window| window == b"\r\n\r\n")
}

fn parse_content_length(header: &[u8]) -> Result<usize, FramingError> {
    let text = std::str::from_utf8(header).map_err(|_| FramingError::HeaderNotUtf8)?;
    for line in text.split("\r\n") {
        // Searching inside the line, not only at its start, resynchronises
        // after a peer whose previous Content-Length understated its body.
        let Some(at) = line.to_ascii_lowercase().rfind("content-length:") else {
            continue;
        };
        let value = line[at + "content-length:".len()..].trim();
        return value
            .parse()
            .map_err(|_| FramingError::InvalidLength(value.to_owned()));
    }
    Err(FramingError::MissingLength)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(bytes: &[u8]) -> Vec<Result<Vec<u8>, FramingError>> {
        let mut decoder = FrameDecoder::new();
        decoder.push(bytes);
        let mut out = Vec::new();
        loop {
            match decoder.next_body() {
                Ok(Some(body)) => out.push(Ok(body)),
                Ok(None) => return out,
                Err(error) => out.push(Err(error)),
            }
        }
    }

    #[test]
    fn round_trips_one_message() {
        let framed = encode(br#"{"a":1}"#);
        assert_eq!(framed, b"Content-Length: 7\r\n\r\n{\"a\":1}".to_vec());
        assert_eq!(decode_all(&framed), vec![Ok(br#"{"a":1}"#.to_vec())]);
    }

    #[test]
    fn splits_two_messages_in_one_read() {
        let mut bytes = encode(b"{}");
        bytes.extend(encode(b"[1]"));
        assert_eq!(
            decode_all(&bytes),
            vec![Ok(b"{}".to_vec()), Ok(b"[1]".to_vec())]
        );
    }

    #[test]
    fn reassembles_byte_by_byte() {
        let framed = encode("{\"é\":\"😀\"}".as_bytes());
        let mut decoder = FrameDecoder::new();
        let mut bodies = Vec::new();
        for byte in &framed {
            decoder.push(std::slice::from_ref(byte));
            if let Ok(Some(body)) = decoder.next_body() {
                bodies.push(body);
            }
        }
        assert_eq!(bodies, vec!["{\"é\":\"😀\"}".as_bytes().to_vec()]);
    }

    #[test]
    fn accepts_content_type_and_any_header_case() {
        let bytes = b"content-length: 2\r\nContent-Type: application/vscode-jsonrpc\r\n\r\n{}";
        assert_eq!(decode_all(bytes), vec![Ok(b"{}".to_vec())]);
    }

    #[test]
    fn reports_missing_and_invalid_lengths() {
        assert_eq!(
            decode_all(b"Content-Type: x\r\n\r\n"),
            vec![Err(FramingError::MissingLength)]
        );
        assert_eq!(
            decode_all(b"Content-Length: abc\r\n\r\n"),
            vec![Err(FramingError::InvalidLength("abc".into()))]
        );
    }

    #[test]
    fn skips_an_oversize_body_and_recovers() {
        let mut bytes = format!("Content-Length: {}\r\n\r\n", MAX_BODY_BYTES + 1).into_bytes();
        bytes.push(b'x');
        let mut decoder = FrameDecoder::new();
        decoder.push(&bytes);
        assert_eq!(
            decoder.next_body(),
            Err(FramingError::TooLarge {
                length: MAX_BODY_BYTES + 1,
                id: None
            })
        );
        bytes = vec![b'x'; MAX_BODY_BYTES];
        bytes.extend(encode(b"{}"));
        decoder.push(&bytes);
        assert_eq!(decoder.next_body(), Ok(Some(b"{}".to_vec())));
    }

    #[test]
    fn resynchronises_after_an_understated_length() {
        let mut bytes = b"Content-Length: 5\r\n\r\n{\"a\":1}".to_vec();
        bytes.extend(encode(b"{}"));
        assert_eq!(
            decode_all(&bytes),
            vec![Ok(b"{\"a\":".to_vec()), Ok(b"{}".to_vec())]
        );
    }

    #[test]
    fn a_json_body_after_a_header_without_a_length_is_recovered() {
        let mut bytes = b"Content-Type: x\r\n\r\n{\"id\":1,\"s\":\"}{\\\"\"}".to_vec();
        bytes.extend(encode(b"{}"));
        assert_eq!(
            decode_all(&bytes),
            vec![
                Err(FramingError::MissingLength),
                Ok(b"{\"id\":1,\"s\":\"}{\\\"\"}".to_vec()),
                Ok(b"{}".to_vec())
            ]
        );
        let mut bytes = b"Content-Length: twelve\r\n\r\n[1,2]".to_vec();
        bytes.extend(encode(b"{}"));
        assert_eq!(
            decode_all(&bytes),
            vec![
                Err(FramingError::InvalidLength("twelve".into())),
                Ok(b"[1,2]".to_vec()),
                Ok(b"{}".to_vec())
            ]
        );
    }

    #[test]
    fn an_oversize_json_body_is_skipped_to_its_end_and_named_by_its_id() {
        // A stated length far past the body must not swallow what follows.
        let mut bytes =
            b"Content-Length: 99999999999\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":\"x\"}"
                .to_vec();
        bytes.extend(encode(b"{}"));
        assert_eq!(
            decode_all(&bytes),
            vec![
                Err(FramingError::TooLarge {
                    length: 99_999_999_999,
                    id: Some(7)
                }),
                Ok(b"{}".to_vec())
            ]
        );
        // A truly huge one, byte by byte, reported as soon as its start is read.
        let huge = format!("{{\"id\":8,\"result\":\"{}\"}}", "y".repeat(MAX_BODY_BYTES));
        let mut decoder = FrameDecoder::new();
        decoder.push(format!("Content-Length: {}\r\n\r\n", huge.len()).as_bytes());
        let mut seen = Vec::new();
        for chunk in huge.as_bytes().chunks(100_000) {
            decoder.push(chunk);
            while let Some(result) = decoder.next_body().transpose() {
                seen.push(result.map_err(|error| error.id()));
            }
        }
        decoder.push(&encode(b"{}"));
        seen.push(
            decoder
                .next_body()
                .map_err(|error| error.id())
                .map(Option::unwrap_or_default),
        );
        assert_eq!(seen, vec![Err(Some(8)), Ok(b"{}".to_vec())]);
    }

    #[test]
    fn drops_an_endless_header() {
        let bytes = vec![b'a'; MAX_HEADER_BYTES + 1];
        assert_eq!(decode_all(&bytes), vec![Err(FramingError::HeaderTooLong)]);
    }
}

//! The tail of an input file in bounded memory (SPEC 1.2 "Untrusted input stays out":
//! a message's last 4 KiB as stored, read from the file's tail; peak memory under
//! 100 MiB whatever the input size). Used by `record exit --message-file`.
//!
//! - A regular file is read from its end (seek): first back over its trailing ASCII
//!   whitespace, then the `keep` bytes before it. Its size costs nothing.
//! - Anything else (`-` for standard input, a pipe, a character device such as
//!   `/dev/zero`, a file whose size reads 0 such as `/proc` files) is streamed through
//!   one buffer of [`CHUNK`] bytes, keeping only the last `keep` bytes; a stream is read
//!   for at most [`MAX_STREAM_BYTES`] (then [`Tail::stopped`] says so), so an endless one
//!   ends.
//!
//! Memory: `CHUNK + 2 × keep` bytes at most, whatever the input.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// The read buffer, in bytes.
pub(crate) const CHUNK: usize = 256 * 1024;

/// The most read from a stream (1 GiB): past it reading stops with [`Tail::stopped`].
pub(crate) const MAX_STREAM_BYTES: u64 = 1 << 30;

/// The kept end of an input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tail {
    /// At most `keep` bytes: the input's last bytes before its trailing ASCII whitespace
    /// (when the input was longer, starting at a UTF-8 character boundary if one is
    /// within the first 3 bytes).
    pub bytes: Vec<u8>,
    /// The stream was not read to its end: it went past [`MAX_STREAM_BYTES`].
    pub stopped: bool,
}

/// Read the tail of `path` (`-`: standard input), keeping `keep` bytes.
///
/// Errors: the file cannot be opened or read.
pub(crate) fn read_tail(path: &Path, keep: usize) -> io::Result<Tail> {
    if path == Path::new("-") {
        return stream(io::stdin().lock(), keep);
    }
    let f = File::open(path)?;
    let meta = f.metadata()?;
    if meta.is_file() && meta.len() > 0 {
        from_end(f, meta.len(), keep)
    } else {
        stream(f, keep)
    }
}

/// A regular file of `len` bytes, read from its end.
fn from_end(mut f: File, len: u64, keep: usize) -> io::Result<Tail> {
    let mut buf = vec![0u8; CHUNK.min(len as usize)];
    // Back over the trailing whitespace, one chunk at a time.
    let mut end = len;
    loop {
        if end == 0 {
            return Ok(Tail {
                bytes: Vec::new(),
                stopped: false,
            });
        }
        let start = end.saturating_sub(buf.len() as u64);
        let n = (end - start) as usize;
        f.seek(SeekFrom::Start(start))?;
        f.read_exact(&mut buf[..n])?;
        if let Some(i) = buf[..n].iter().rposition(|b| !b.is_ascii_whitespace()) {
            end = start + i as u64 + 1;
            break;
        }
        end = start;
    }
    let start = end.saturating_sub(keep as u64);
    f.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::with_capacity((end - start) as usize);
    (&mut f).take(end - start).read_to_end(&mut bytes)?;
    Ok(Tail {
        bytes: from_boundary(bytes, start > 0),
        stopped: false,
    })
}

/// A stream, read to its end or to [`MAX_STREAM_BYTES`].
fn stream(mut r: impl Read, keep: usize) -> io::Result<Tail> {
    let mut buf = vec![0u8; CHUNK];
    // `content` ends with a byte that is not whitespace; `ws` is the whitespace read
    // after it. Both hold at most `keep` bytes (their last ones).
    let mut content: Vec<u8> = Vec::new();
    let mut ws: Vec<u8> = Vec::new();
    let mut cut = false;
    let mut total = 0u64;
    let mut stopped = false;
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let chunk = &buf[..n];
        match chunk.iter().rposition(|b| !b.is_ascii_whitespace()) {
            None => ws.extend_from_slice(chunk),
            Some(i) if i >= keep => {
                // The chunk alone fills what is kept.
                content.clear();
                content.extend_from_slice(&chunk[i + 1 - keep..=i]);
                cut = true;
                ws.clear();
                ws.extend_from_slice(&chunk[i + 1..]);
            }
            Some(i) => {
                content.append(&mut ws);
                content.extend_from_slice(&chunk[..=i]);
                ws.extend_from_slice(&chunk[i + 1..]);
            }
        }
        cut |= keep_last(&mut content, keep);
        keep_last(&mut ws, keep);
        total += n as u64;
        if total >= MAX_STREAM_BYTES {
            stopped = true;
            break;
        }
    }
    Ok(Tail {
        bytes: from_boundary(content, cut),
        stopped,
    })
}

/// Keep the last `keep` bytes of `v`; whether any were dropped.
fn keep_last(v: &mut Vec<u8>, keep: usize) -> bool {
    if v.len() > keep {
        v.drain(..v.len() - keep);
        true
    } else {
        false
    }
}

/// `bytes` from its first UTF-8 character boundary when it was cut from a longer input
/// (at most 3 continuation bytes skipped).
fn from_boundary(mut bytes: Vec<u8>, cut: bool) -> Vec<u8> {
    if cut {
        let skip = bytes
            .iter()
            .take(3)
            .take_while(|b| (0x80..0xC0).contains(*b))
            .count();
        bytes.drain(..skip);
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(content: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut f, content).unwrap();
        f
    }

    #[test]
    fn a_file_and_a_stream_keep_the_same_tail() {
        let mut text = "é".repeat(5000).into_bytes();
        text.extend_from_slice(b"\nthe end.");
        text.extend(std::iter::repeat_n(b'\n', 300_000));
        let f = file(&text);
        let a = read_tail(f.path(), 11).unwrap();
        let b = stream(&text[..], 11).unwrap();
        // 11 bytes back from "the end." cut "é" in half: the half is skipped.
        assert_eq!(String::from_utf8(a.bytes.clone()).unwrap(), "é\nthe end.");
        assert_eq!(a, b);
        assert!(!a.stopped);
    }

    #[test]
    fn short_and_blank_inputs() {
        assert_eq!(read_tail(file(b"ok\n").path(), 4096).unwrap().bytes, b"ok");
        assert_eq!(read_tail(file(b" \n\t").path(), 4096).unwrap().bytes, b"");
        assert_eq!(read_tail(file(b"").path(), 4096).unwrap().bytes, b"");
        assert_eq!(stream(&b"a  \n b\n\n"[..], 4096).unwrap().bytes, b"a  \n b");
    }
}

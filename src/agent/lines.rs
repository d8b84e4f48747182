//! Reading an agent's output in bounded memory (SPEC 1.2 "Untrusted input stays out":
//! JSON streams line by line, a line over 1 MiB skipped with a warning, peak memory under
//! 100 MiB whatever the input size).

use std::io::BufRead;

/// The longest line read, in bytes (1 MiB); a longer one is skipped, never held whole.
pub(crate) const MAX_LINE: usize = 1 << 20;

/// Call `f` with each line of `r` (without its line break, decoded lossily as UTF-8).
/// A line longer than `max` bytes is skipped as it streams past: at most `max` bytes of
/// it are ever held. Returns how many lines were skipped.
///
/// Errors: the reader's I/O error.
pub(crate) fn for_each_line<R: BufRead>(
    mut r: R,
    max: usize,
    mut f: impl FnMut(&str),
) -> std::io::Result<usize> {
    let mut line: Vec<u8> = Vec::new();
    let mut skipping = false;
    let mut skipped = 0;
    loop {
        let buf = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            if !skipping && !line.is_empty() {
                f(&String::from_utf8_lossy(&line));
            }
            return Ok(skipped);
        }
        let (chunk, end) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !skipping {
            if line.len() + chunk.len() > max {
                skipping = true;
                skipped += 1;
                line = Vec::new(); // give the memory back
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = end.unwrap_or(buf.len());
        r.consume(used);
        if end.is_some() {
            if !skipping {
                let text = String::from_utf8_lossy(&line);
                f(text.strip_suffix('\r').unwrap_or(&text));
            }
            line.clear();
            skipping = false;
        }
    }
}

/// The last `max` bytes of `s`, cut at a character boundary.
pub(crate) fn tail(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    s[start..].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_skipped_and_counted() {
        let text = format!("a\n{}\nb\r\n{}", "x".repeat(50), "y".repeat(20));
        let mut got = Vec::new();
        let reader = std::io::BufReader::with_capacity(8, text.as_bytes());
        let skipped = for_each_line(reader, 30, |l| got.push(l.to_string())).unwrap();
        assert_eq!(got, ["a", "b", &"y".repeat(20)]);
        assert_eq!(skipped, 1);
    }
}

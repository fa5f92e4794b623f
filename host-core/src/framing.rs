//! Newline-delimited framing of an inbound byte stream with a bounded buffer (R-ENV-4): a line
//! reader never buffers more than the envelope limit, whatever the peer sends.

use std::fmt;

use crate::redact::Fingerprint;

/// One item cut from the stream. `Debug` shows a line's bytes as a [`Fingerprint`]: they are
/// the agent's message, state and all, and logs reach journald.
#[derive(Clone, PartialEq, Eq)]
pub enum Frame {
    /// A complete line, without its `\n` (and without a trailing `\r`); numbered from 1.
    Line {
        /// The line number in the stream.
        number: u64,
        /// The line's bytes.
        bytes: Vec<u8>,
    },
    /// A line longer than the limit; its bytes were discarded as they arrived.
    TooLong {
        /// The line number in the stream.
        number: u64,
        /// How many bytes the line had (excluding `\n`).
        len: u64,
        /// The limit it exceeded.
        limit: usize,
    },
}

impl fmt::Debug for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Frame::Line { number, bytes } => f
                .debug_struct("Line")
                .field("number", number)
                .field("bytes", &Fingerprint::of(bytes))
                .finish(),
            Frame::TooLong { number, len, limit } => f
                .debug_struct("TooLong")
                .field("number", number)
                .field("len", len)
                .field("limit", limit)
                .finish(),
        }
    }
}

/// Cuts a byte stream into lines of at most `limit` bytes, holding at most `limit` bytes.
///
/// ```
/// use lineup_host_core::{Frame, LineFramer};
/// let mut framer = LineFramer::new(4);
/// let frames = framer.push(b"ab\nabcdef\ncd");
/// assert_eq!(frames[0], Frame::Line { number: 1, bytes: b"ab".to_vec() });
/// assert_eq!(frames[1], Frame::TooLong { number: 2, len: 6, limit: 4 });
/// assert_eq!(framer.finish(), Some(Frame::Line { number: 3, bytes: b"cd".to_vec() }));
/// ```
///
/// `Debug` shows the bytes of the line in progress as a [`Fingerprint`].
#[derive(Clone)]
pub struct LineFramer {
    limit: usize,
    buffer: Vec<u8>,
    /// Length of the current line when it is being discarded for being too long.
    overflow: Option<u64>,
    number: u64,
}

impl fmt::Debug for LineFramer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LineFramer")
            .field("limit", &self.limit)
            .field("buffer", &Fingerprint::of(&self.buffer))
            .field("overflow", &self.overflow)
            .field("number", &self.number)
            .finish()
    }
}

impl LineFramer {
    /// A framer for lines of at most `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            buffer: Vec::new(),
            overflow: None,
            number: 0,
        }
    }

    /// Feeds bytes; returns the lines they complete.
    pub fn push(&mut self, mut bytes: &[u8]) -> Vec<Frame> {
        let mut frames = Vec::new();
        while !bytes.is_empty() {
            let (chunk, ends_line) = match bytes.iter().position(|&b| b == b'\n') {
                Some(at) => (&bytes[..at], true),
                None => (bytes, false),
            };
            bytes = if ends_line {
                &bytes[chunk.len() + 1..]
            } else {
                &[]
            };
            match &mut self.overflow {
                Some(len) => *len += chunk.len() as u64,
                None if self.buffer.len() + chunk.len() > self.limit + 1 => {
                    // One extra byte is allowed for a `\r` that will be trimmed.
                    self.overflow = Some((self.buffer.len() + chunk.len()) as u64);
                    self.buffer = Vec::new();
                }
                None => self.buffer.extend_from_slice(chunk),
            }
            if ends_line {
                frames.extend(self.end_line());
            }
        }
        frames
    }

    /// Ends the stream: a last line without `\n` is returned, if there is one.
    pub fn finish(&mut self) -> Option<Frame> {
        if self.buffer.is_empty() && self.overflow.is_none() {
            return None;
        }
        self.end_line()
    }

    fn end_line(&mut self) -> Option<Frame> {
        self.number += 1;
        let number = self.number;
        if let Some(len) = self.overflow.take() {
            return Some(Frame::TooLong {
                number,
                len,
                limit: self.limit,
            });
        }
        let mut bytes = std::mem::take(&mut self.buffer);
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        if bytes.len() > self.limit {
            return Some(Frame::TooLong {
                number,
                len: bytes.len() as u64,
                limit: self.limit,
            });
        }
        Some(Frame::Line { number, bytes })
    }

    /// How many bytes are buffered now; never more than the limit plus one.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_env_4_lines_at_and_over_the_limit() {
        let mut f = LineFramer::new(3);
        assert_eq!(
            f.push(b"abc\nabcd\n"),
            vec![
                Frame::Line {
                    number: 1,
                    bytes: b"abc".to_vec()
                },
                Frame::TooLong {
                    number: 2,
                    len: 4,
                    limit: 3
                },
            ]
        );
    }

    #[test]
    fn r_env_4_buffer_stays_bounded_across_chunks() {
        let mut f = LineFramer::new(8);
        for _ in 0..1000 {
            assert!(f.push(&[b'x'; 100]).is_empty());
            assert!(f.buffered() <= 9);
        }
        assert_eq!(
            f.push(b"\nok\n"),
            vec![
                Frame::TooLong {
                    number: 1,
                    len: 100_000,
                    limit: 8
                },
                Frame::Line {
                    number: 2,
                    bytes: b"ok".to_vec()
                },
            ]
        );
    }

    #[test]
    fn crlf_and_split_chunks() {
        let mut f = LineFramer::new(8);
        assert!(f.push(b"ab").is_empty());
        assert_eq!(
            f.push(b"c\r\n"),
            vec![Frame::Line {
                number: 1,
                bytes: b"abc".to_vec()
            }]
        );
        assert_eq!(
            f.push(b"\n"),
            vec![Frame::Line {
                number: 2,
                bytes: vec![]
            }]
        );
        assert_eq!(f.finish(), None);
    }
}

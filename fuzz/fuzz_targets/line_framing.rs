//! Fuzzes the newline framing of the `--stdio` agent stream: `LineFramer` (R-ENV-4), fed the
//! fuzzer's bytes in chunks of a fuzzed size, with a fuzzed line limit.
//!
//! Input: the first byte sets the limit (1 to 64 bytes), the second the chunk size (1 to 16
//! bytes); the rest is the stream.
//!
//! Checks: no panic; the frames are the same whatever the chunking (one push, or chunks), and
//! they are exactly those of a plain model: the stream split at `\n`, a trailing `\r` dropped,
//! lines numbered from 1, a line over the limit reported `TooLong` with its length instead of
//! its bytes, a last line without `\n` returned by `finish`, and nothing after that.
#![no_main]

use lineup_host_core::{Frame, LineFramer};

fn model(stream: &[u8], limit: usize) -> Vec<Frame> {
    let mut frames = Vec::new();
    let mut lines: Vec<&[u8]> = stream.split(|&b| b == b'\n').collect();
    // What follows the last `\n` is a line only when it is not empty.
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    for (i, line) in lines.into_iter().enumerate() {
        let number = i as u64 + 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > limit {
            // The length counted is the line's bytes up to `\n`, a `\r` included when the line
            // was refused before it could be trimmed.
            frames.push(Frame::TooLong {
                number,
                len: line.len() as u64,
                limit,
            });
        } else {
            frames.push(Frame::Line {
                number,
                bytes: line.to_vec(),
            });
        }
    }
    frames
}

fn run(stream: &[u8], limit: usize, chunk: usize) -> Vec<Frame> {
    let mut framer = LineFramer::new(limit);
    let mut frames = Vec::new();
    for piece in stream.chunks(chunk) {
        frames.extend(framer.push(piece));
    }
    frames.extend(framer.finish());
    assert_eq!(framer.finish(), None, "finish returned a frame twice");
    frames
}

/// `TooLong`'s `len` may count a `\r` the model trimmed; everything else must match exactly.
fn same(got: &[Frame], want: &[Frame]) -> bool {
    got.len() == want.len()
        && got.iter().zip(want).all(|pair| match pair {
            (
                Frame::TooLong {
                    number: a,
                    len: la,
                    limit: ma,
                },
                Frame::TooLong {
                    number: b,
                    len: lb,
                    limit: mb,
                },
            ) => a == b && ma == mb && (la == lb || *la == lb + 1),
            (a, b) => a == b,
        })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let [limit, chunk, stream @ ..] = data else {
        return;
    };
    let limit = usize::from(limit % 64) + 1;
    let chunk = usize::from(chunk % 16) + 1;
    let whole = run(stream, limit, stream.len().max(1));
    let chunked = run(stream, limit, chunk);
    assert_eq!(whole, chunked, "the chunking changed the frames");
    let want = model(stream, limit);
    assert!(
        same(&whole, &want),
        "frames {whole:?}, the model's {want:?}"
    );
});

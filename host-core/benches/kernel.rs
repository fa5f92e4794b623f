//! The kernel's cost per message (#12): decode, validate and take a session step for a
//! `ui.patch` of 1 KiB and 16 KiB and for a bridge event, each beside plain
//! `serde_json::from_slice::<Value>` of the same bytes, measured in the same run. For the
//! patch, `decode only` (envelope decoding and validation without the session) and a
//! `RawValue` scan (the JSON grammar alone) show where the time goes.
//!
//! `cargo bench -p lineup-host-core --bench kernel`; the ratio ours/baseline is what to read.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lineup_host_core::{Clock, Effect, PartyId, Session, SessionConfig, SurfaceKey};
use serde_json::{json, Value};

struct Fixed;
impl Clock for Fixed {
    fn monotonic(&self) -> Duration {
        Duration::ZERO
    }
}

fn envelope(id: &str, kind: &str, payload: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "v": 1, "id": id, "type": format!("lineup.v1.{kind}"), "conversation_id": "c1",
        "sender": {"kind": "agent", "id": "a1"}, "payload": payload
    }))
    .unwrap()
}

/// A session with one ready Surface `w1`, and its key.
fn ready_session() -> (Session, SurfaceKey) {
    let config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
    let mut session = Session::new(config, Box::new(Fixed)).unwrap();
    let open = envelope(
        "m0",
        "ui.open",
        json!({"instance_id": "w1", "app": {"id": "com.example.w", "name": "W",
               "version": "1.0.0", "html": "<p>w</p>", "css": "", "js": ""}}),
    );
    let key = session
        .handle_inbound(&open)
        .into_iter()
        .find_map(|e| match e {
            Effect::Open(open) => Some(open.key),
            _ => None,
        })
        .unwrap();
    session.handle_bridge(
        &key,
        r#"{"namespace":"lineup.surface.v1","type":"ready","document":"0123456789abcdef"}"#,
    );
    (session, key)
}

/// A state of about `bytes` bytes: rows of a small table, as a dashboard would send.
fn state(bytes: usize) -> Value {
    let row = json!({"city": "北京", "temperature": 22.5, "humidity": 40, "wind": "NE 3"});
    let per_row = serde_json::to_vec(&row).unwrap().len() + 1;
    let rows: Vec<Value> = (0..bytes / per_row).map(|_| row.clone()).collect();
    json!({"rows": rows})
}

fn patch(c: &mut Criterion) {
    let mut group = c.benchmark_group("ui.patch");
    for kib in [1usize, 16] {
        let bytes = envelope(
            "m1",
            "ui.patch",
            json!({"instance_id": "w1", "state": state(kib * 1024)}),
        );
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("serde_json Value", kib),
            &bytes,
            |b, bytes| {
                b.iter(|| black_box(serde_json::from_slice::<Value>(black_box(bytes)).unwrap()));
            },
        );
        let limits = lineup_host_core::Limits::default();
        group.bench_with_input(BenchmarkId::new("decode only", kib), &bytes, |b, bytes| {
            b.iter(|| black_box(lineup_host_core::decode(black_box(bytes), &limits).unwrap()));
        });
        group.bench_with_input(
            BenchmarkId::new("serde_json RawValue", kib),
            &bytes,
            |b, bytes| {
                b.iter(|| {
                    black_box(
                        serde_json::from_slice::<&serde_json::value::RawValue>(black_box(bytes))
                            .unwrap(),
                    )
                });
            },
        );
        let (mut session, _) = ready_session();
        group.bench_with_input(
            BenchmarkId::new("decode + validate + session", kib),
            &bytes,
            |b, bytes| {
                b.iter(|| black_box(session.handle_inbound(black_box(bytes))));
            },
        );
    }
    group.finish();
}

fn event(c: &mut Criterion) {
    let mut group = c.benchmark_group("bridge event");
    let raw = r#"{"namespace":"lineup.surface.v1","type":"event","event":"refresh","data":{"unit":"c","city":"北京"}}"#;
    group.throughput(Throughput::Bytes(raw.len() as u64));
    group.bench_function("serde_json Value", |b| {
        b.iter(|| black_box(serde_json::from_str::<Value>(black_box(raw)).unwrap()));
    });
    let (mut session, key) = ready_session();
    group.bench_function("decode + validate + session", |b| {
        b.iter(|| black_box(session.handle_bridge(&key, black_box(raw))));
    });
    group.finish();
}

criterion_group!(benches, patch, event);
criterion_main!(benches);

//! The line writer against slow, stalled and gone readers: answers never dropped, page events
//! dropped and counted, back-pressure with hysteresis.
#![allow(clippy::unwrap_used, clippy::panic)]

use super::*;
use std::io;
use std::sync::mpsc;

use lineup_host_core::{
    AppList, ClientError, ClientInventory, ConversationId, Envelope, ErrorCode, EventName,
    JsonObject, MessageId, Party, PartyId, Revision, UiEvent,
};

/// Long enough for any step of a passing test; only there so that a failing one cannot hang.
const DEADLINE: Duration = Duration::from_secs(20);

struct Broken;
impl Write for Broken {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::Error::from(io::ErrorKind::BrokenPipe))
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

struct Stuck;
impl Write for Stuck {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        thread::sleep(Duration::from_secs(3600));
        Ok(0)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A reader the test controls: each line (one flush) waits for a permit, then is recorded.
#[derive(Clone, Default)]
struct Gate(Arc<(Mutex<GateState>, Condvar)>);

#[derive(Default)]
struct GateState {
    permits: usize,
    open: bool,
    partial: Vec<u8>,
    lines: Vec<String>,
}

impl Gate {
    fn state(&self) -> MutexGuard<'_, GateState> {
        self.0 .0.lock().unwrap()
    }

    /// Lets `n` more lines through.
    fn allow(&self, n: usize) {
        self.state().permits += n;
        self.0 .1.notify_all();
    }

    /// Lets every line through from now on.
    fn open(&self) {
        self.state().open = true;
        self.0 .1.notify_all();
    }

    fn lines(&self) -> Vec<String> {
        self.state().lines.clone()
    }

    /// Waits until `n` lines were written.
    fn wait_for_lines(&self, n: usize) -> Vec<String> {
        let deadline = Instant::now() + DEADLINE;
        let mut state = self.state();
        while state.lines.len() < n {
            let now = Instant::now();
            assert!(
                now < deadline,
                "only {} of {n} lines written",
                state.lines.len()
            );
            state = self.0 .1.wait_timeout(state, deadline - now).unwrap().0;
        }
        state.lines.clone()
    }
}

impl Write for Gate {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.state().partial.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        let mut state = self.state();
        while !state.open && state.permits == 0 {
            state = self.0 .1.wait(state).unwrap();
        }
        if !state.open {
            state.permits -= 1;
        }
        let line = String::from_utf8(std::mem::take(&mut state.partial)).unwrap();
        state.lines.push(line.trim_end_matches('\n').to_owned());
        drop(state);
        self.0 .1.notify_all();
        Ok(())
    }
}

fn limits(events: usize, high: usize, low: usize) -> OutboundLimits {
    OutboundLimits {
        max_waiting_events: events,
        answers_high_water: high,
        answers_low_water: low,
    }
}

fn instance(id: &str) -> InstanceId {
    InstanceId::try_from(id).unwrap()
}

fn event(id: &str) -> LineKind {
    LineKind::PageEvent(instance(id))
}

/// Polls `f` until it holds; the deadline only keeps a failing test from hanging.
fn wait_until(what: &str, f: impl Fn() -> bool) {
    let deadline = Instant::now() + DEADLINE;
    while !f() {
        assert!(Instant::now() < deadline, "never: {what}");
        thread::sleep(Duration::from_millis(2));
    }
}

fn envelope<P>(payload: P) -> Envelope<P> {
    Envelope {
        id: MessageId::try_from("m1").unwrap(),
        conversation_id: ConversationId::try_from("c1").unwrap(),
        sender: Party {
            kind: PartyId::try_from("client").unwrap(),
            id: PartyId::try_from("lineup-host").unwrap(),
        },
        target: None,
        payload,
    }
}

fn ui_event(name: &str) -> Message {
    Message::UiEvent(envelope(UiEvent {
        instance_id: instance("w1"),
        event: EventName::try_from(name).unwrap(),
        data: JsonObject::new(),
    }))
}

#[test]
fn r_ui_5_only_page_events_may_give_way_and_a_user_close_never_does() {
    assert_eq!(LineKind::of(&ui_event("refresh")), event("w1"));
    assert_eq!(LineKind::of(&ui_event("close")), LineKind::Answer);
    let error = Message::ClientError(envelope(ClientError {
        in_reply_to: None,
        code: ErrorCode::EventsDropped,
        message: "m".into(),
        field: None,
        limit: None,
        instance_id: Some(instance("w1")),
        count: Some(3),
    }));
    assert_eq!(LineKind::of(&error), LineKind::Answer);
}

fn inventory() -> Message {
    Message::ClientInventory(envelope(ClientInventory {
        revision: Revision::try_from("catalog-42").unwrap(),
        standard_components: Vec::new(),
        applications: Vec::new(),
        capabilities: Vec::new(),
        mcp_apps: None,
    }))
}

fn app_list() -> Message {
    Message::AppList(envelope(AppList {
        capabilities: Vec::new(),
    }))
}

#[test]
fn r_inv_1_r_cap_1_inventory_and_app_list_are_answers_never_page_events() {
    assert_eq!(LineKind::of(&inventory()), LineKind::Answer);
    assert_eq!(LineKind::of(&app_list()), LineKind::Answer);
}

/// `client.inventory` and `app.list`, classified by [`LineKind::of`], are kept however full
/// the queue is: past the page-event capacity and past the answers' high-water mark.
#[test]
fn r_inv_1_r_cap_1_a_full_queue_never_drops_an_inventory_or_an_app_list() {
    let gate = Gate::default();
    let w = LineWriter::spawn(gate.clone(), limits(1, 4, 2)).unwrap();
    // The reader reads nothing: one page event waits, the next is dropped.
    assert_eq!(w.send_line("e1".into(), event("a")), Ok(()));
    assert!(
        w.send_line("e2".into(), event("a")).is_err(),
        "the queue is full"
    );
    for _ in 0..100 {
        for message in [inventory(), app_list()] {
            assert_eq!(
                w.send_line(message.to_json(), LineKind::of(&message)),
                Ok(()),
                "{}",
                message.to_json()
            );
        }
    }
    assert!(w.backpressure(), "past the high-water mark");
    assert_eq!(w.answers_waiting(), 200);
    assert_eq!(w.dropped(), 1);
    gate.open();
    let lines = gate.wait_for_lines(201);
    for kind in ["lineup.v1.client.inventory", "lineup.v1.app.list"] {
        let written = lines.iter().filter(|l| l.contains(kind)).count();
        assert_eq!(written, 100, "{kind}");
    }
}

#[test]
fn r_env_5_answers_are_never_dropped_while_page_events_are() {
    let gate = Gate::default();
    let w = LineWriter::spawn(gate.clone(), limits(2, 10_000, 5_000)).unwrap();
    // The reader reads nothing: two page events wait, the rest are dropped...
    assert_eq!(w.send_line("e1".into(), event("a")), Ok(()));
    assert_eq!(w.send_line("e2".into(), event("a")), Ok(()));
    assert_eq!(
        w.send_line("e3".into(), event("a")),
        Err(WriteError::EventDropped {
            instance: instance("a"),
            capacity: 2
        })
    );
    // ...while every answer is kept, however many wait.
    for i in 0..1000 {
        assert_eq!(w.send_line(format!("answer {i}"), LineKind::Answer), Ok(()));
        assert!(w.send_line(format!("e {i}"), event("b")).is_err());
    }
    assert_eq!(w.answers_waiting(), 1000);
    assert_eq!(w.events_waiting(), 2);
    assert_eq!(w.dropped(), 1001);
    gate.open();
    let lines = gate.wait_for_lines(1002);
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("answer")).count(),
        1000
    );
    assert_eq!(lines.iter().filter(|l| l.starts_with('e')).count(), 2);
}

#[test]
fn r_env_5_kept_lines_are_written_in_the_order_they_were_sent() {
    let gate = Gate::default();
    let w = LineWriter::spawn(gate.clone(), limits(3, 10_000, 5_000)).unwrap();
    let mut kept = Vec::new();
    for i in 0..50 {
        let kind = if i % 4 == 0 {
            LineKind::Answer
        } else {
            event(if i % 2 == 0 { "a" } else { "b" })
        };
        let line = format!("line {i}");
        if w.send_line(line.clone(), kind).is_ok() {
            kept.push(line);
        }
        // Let the reader take one line now and then, so that room opens mid-stream.
        if i % 10 == 9 {
            gate.allow(1);
        }
    }
    assert!(kept.len() < 50, "the test must make events give way");
    gate.open();
    assert_eq!(gate.wait_for_lines(kept.len()), kept);
}

#[test]
fn r_env_4_dropped_events_are_reported_per_surface_once_the_queue_drains() {
    let gate = Gate::default();
    let w = LineWriter::spawn(gate.clone(), limits(1, 10_000, 5_000)).unwrap();
    let (tx, reports) = mpsc::channel();
    w.on_events_dropped(move |instance, count| {
        let _ = tx.send((instance, count));
    });
    w.send_line("kept".into(), event("a")).unwrap();
    for _ in 0..3 {
        assert!(w.send_line("lost".into(), event("a")).is_err());
    }
    assert!(w.send_line("lost".into(), event("b")).is_err());
    w.send_line("answer".into(), LineKind::Answer).unwrap();
    // Nothing is reported while the reader is behind: the queue has not drained.
    assert!(reports.try_recv().is_err());
    gate.open();
    let mut got = vec![
        reports.recv_timeout(DEADLINE).unwrap(),
        reports.recv_timeout(DEADLINE).unwrap(),
    ];
    got.sort();
    // One count per Surface, never merged.
    assert_eq!(got, [(instance("a"), 3), (instance("b"), 1)]);
    assert_eq!(gate.lines(), ["kept", "answer"]);
    // A report empties the counts: a later drain reports nothing more.
    w.send_line("after".into(), LineKind::Answer).unwrap();
    gate.wait_for_lines(3);
    assert!(w.flush(DEADLINE));
    assert!(reports.try_recv().is_err());
}

#[test]
fn r_env_4_counts_dropped_before_a_reporter_is_set_are_kept_for_it() {
    let gate = Gate::default();
    let w = LineWriter::spawn(gate.clone(), limits(0, 10_000, 5_000)).unwrap();
    assert!(w.send_line("lost".into(), event("a")).is_err());
    gate.open();
    assert!(w.flush(DEADLINE));
    let (tx, reports) = mpsc::channel();
    w.on_events_dropped(move |instance, count| {
        let _ = tx.send((instance, count));
    });
    assert_eq!(reports.recv_timeout(DEADLINE).unwrap(), (instance("a"), 1));
}

#[test]
fn r_env_4_backpressure_engages_at_the_high_mark_and_releases_below_the_low_mark() {
    let gate = Gate::default();
    let w = LineWriter::spawn(gate.clone(), limits(8, 4, 2)).unwrap();
    for i in 0..3 {
        w.send_line(format!("a{i}"), LineKind::Answer).unwrap();
        assert!(!w.backpressure(), "engaged below the high-water mark");
    }
    // Page events do not count towards it.
    w.send_line("e".into(), event("a")).unwrap();
    assert!(!w.backpressure());
    w.send_line("a3".into(), LineKind::Answer).unwrap();
    assert!(w.backpressure(), "not engaged at the high-water mark");

    let waiter = {
        let w = w.clone();
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            w.wait_for_room();
            let _ = tx.send(w.answers_waiting());
        });
        rx
    };
    // The reader takes two answers: 3, then 2 wait; still engaged (hysteresis).
    gate.allow(2);
    gate.wait_for_lines(2);
    wait_until("two answers waiting", || w.answers_waiting() == 2);
    assert!(w.backpressure(), "released before the low-water mark");
    assert!(waiter.try_recv().is_err(), "the waiter went on too early");
    // One more: 1 waits, below the low-water mark.
    gate.allow(1);
    let left = waiter.recv_timeout(DEADLINE).unwrap();
    assert!(left < 2, "released with {left} answers waiting");
    assert!(!w.backpressure());
    // Still nothing was dropped.
    gate.open();
    assert!(w.flush(DEADLINE));
    assert_eq!(gate.lines(), ["a0", "a1", "a2", "e", "a3"]);
}

#[test]
fn dropping_every_writer_still_writes_what_was_queued() {
    let gate = Gate::default();
    let w = LineWriter::spawn(gate.clone(), OutboundLimits::default()).unwrap();
    w.send_line("one".into(), LineKind::Answer).unwrap();
    w.send_line("two".into(), event("a")).unwrap();
    drop(w);
    gate.open();
    assert_eq!(gate.wait_for_lines(2), ["one", "two"]);
}

#[test]
fn a_gone_reader_closes_the_writer_without_blocking() {
    let w = LineWriter::spawn(Broken, limits(4, 4, 2)).unwrap();
    let _ = w.send_line("a".into(), LineKind::Answer);
    let deadline = Instant::now() + DEADLINE;
    loop {
        match w.send_line("b".into(), LineKind::Answer) {
            Err(WriteError::Closed(why)) => {
                assert!(why.contains("pipe"), "{why}");
                break;
            }
            _ if Instant::now() > deadline => panic!("writer never reported the broken pipe"),
            _ => thread::sleep(Duration::from_millis(10)),
        }
    }
    // A closed stream releases back-pressure, so that nothing waits on it forever.
    assert!(!w.backpressure());
    w.wait_for_room();
}

#[test]
fn a_slow_reader_never_blocks_the_sender() {
    let w = LineWriter::spawn(Stuck, limits(2, 4, 2)).unwrap();
    let start = Instant::now();
    let events: Vec<_> = (0..10)
        .map(|i| w.send_line(format!("{i}"), event("a")))
        .collect();
    let answers: Vec<_> = (0..10)
        .map(|i| w.send_line(format!("{i}"), LineKind::Answer))
        .collect();
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "send_line blocked"
    );
    assert!(events
        .iter()
        .any(|r| matches!(r, Err(WriteError::EventDropped { capacity: 2, .. }))));
    assert!(answers.iter().all(Result::is_ok));
    assert!(w.backpressure());
    assert!(w.dropped() > 0);
}

//! The built-in consent prompt under Xvfb with real XTEST input (R-CAP-4, R-SEC-6): input inside
//! the guard delay is ignored, a click after it answers, focus starts on Deny, Enter does nothing,
//! Escape and the window manager's close cancel, dropping the queue cancels, requests are shown
//! first in first out (each reported once by `on_shown` when on screen) and withdrawn ones close,
//! the prompt stays above a Surface window, is attached to the embedder's window when given one,
//! and the
//! agent's strings are shown as text, cleaned and capped (with a positive control).
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

mod named;

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lineup_host::platform::{ConsentHandle, Placement, PromptSnapshot, MAX_REASON_GRAPHEMES};
use lineup_host::{
    ConsentAnswer, ConsentPrompt, PendingConsent, PromptContent, PromptOptions, PromptQueue,
    ViewConfig,
};
use lineup_host_core::{display_line, Risk};
use lineup_tests::ensure;
use lineup_tests::home::private_home;
use lineup_tests::prompt::button;
use lineup_tests::runner::{Outcome, WAIT};
use lineup_tests::view_harness::{pump, Harness, Log, Page};
use lineup_tests::x11::{xid_of, X11};
use serde_json::json;

const TITLE: &str = "Permission request";
const SPACE: u32 = 0x20;
const RETURN: u32 = 0xff0d;
const ESCAPE: u32 = 0xff1b;
/// The guard delay under test: the default.
const GUARD: Duration = Duration::from_secs(1);

pub(crate) fn run() {
    private_home("consent");
    let mut h = Harness::start(ViewConfig::default());
    let x = match X11::connect() {
        Ok(x) => x,
        Err(e) => {
            println!("no X display for the consent tests: {e}");
            std::process::exit(1);
        }
    };
    h.run(
        "r_cap_4_click_and_keys_inside_the_guard_delay_are_ignored_a_click_after_it_allows",
        |h| guard(h, &x),
    );
    h.run(
        "r_cap_4_focus_starts_on_deny_enter_does_nothing_space_denies",
        |h| keys(h, &x),
    );
    h.run("r_cap_4_escape_cancels", |h| escape(h, &x));
    h.run("r_cap_4_wm_delete_window_cancels", |h| wm_delete(h, &x));
    h.run(
        "r_cap_4_dropping_the_queue_cancels_what_it_holds_and_closes_the_window",
        |h| dropped(h, &x),
    );
    h.run("r_cap_4_two_requests_first_in_first_out", |h| fifo(h, &x));
    h.run(
        "r_cap_4_a_withdrawn_request_is_removed_and_its_window_closed",
        |h| withdrawn(h, &x),
    );
    h.run(
        "r_cap_4_prompt_raises_itself_above_a_surface_mapped_over_it_and_restarts_its_guard",
        |h| above_surface(h, &x),
    );
    h.run(
        "a_prompt_attached_to_the_embedders_window_is_transient_for_it_and_centred_on_it",
        |h| attached(h, &x),
    );
    h.run(
        "r_sec_6_agent_markup_bidi_and_a_10_kib_reason_shown_as_capped_text",
        |h| escaped(h, &x),
    );
    h.run(
        "r_sec_5_a_1000_character_reason_scrolls_and_never_pushes_the_arguments_below_the_fold",
        |h| long_reason(h, &x),
    );
    h.run(
        "r_sec_5_the_prompt_names_the_conversation_and_an_id_imitating_its_lines_changes_none",
        |h| named::conversation(h, &x),
    );
    h.run(
        "r_std_9_the_prompts_own_words_are_in_the_host_context_language",
        |h| named::chinese(h, &x),
    );
    h.finish();
}

/// Every answer, by label, in the order given; shared with the `Send` answer callbacks.
#[derive(Clone, Default)]
struct Answers(Arc<Mutex<Vec<(String, ConsentAnswer)>>>);

impl Answers {
    fn all(&self) -> Vec<(String, ConsentAnswer)> {
        self.0.lock().map(|a| a.clone()).unwrap_or_default()
    }

    fn of(&self, label: &str) -> Vec<ConsentAnswer> {
        self.all()
            .into_iter()
            .filter(|(l, _)| l == label)
            .map(|(_, a)| a)
            .collect()
    }
}

/// A `clipboard.write` request labelled `label` (its reason), answered into `answers`.
fn pending(answers: &Answers, label: &str, remember: bool) -> (PendingConsent, ConsentHandle) {
    let arguments = json!({ "text": "hello" });
    let request = PromptContent::new(
        "agent-7",
        "clipboard.write".try_into().unwrap(),
        "1".try_into().unwrap(),
        Risk::UserConfirmation,
        label,
        arguments.as_object().unwrap(),
    )
    .with_remember(remember);
    let sink = Arc::clone(&answers.0);
    let label = label.to_owned();
    PendingConsent::new(request, move |answer| {
        if let Ok(mut all) = sink.lock() {
            all.push((label, answer));
        }
    })
}

fn queue(h: &Harness) -> Result<PromptQueue, String> {
    PromptQueue::new(&h.event_loop, PromptOptions::default()).map_err(|e| e.to_string())
}

/// Waits for the prompt window to be mapped; returns it and when it was seen mapped.
fn shown(h: &mut Harness, x: &X11) -> Result<(u32, Instant), String> {
    shown_titled(h, x, TITLE)
}

/// The prompt window titled `title` once it is mapped, and when it was seen.
fn shown_titled(h: &mut Harness, x: &X11, title: &str) -> Result<(u32, Instant), String> {
    let mut found = None;
    let ok = h.wait_for(WAIT, || {
        found = x.find_window_by_title(title).filter(|w| x.is_viewable(*w));
        found.is_some()
    });
    match (ok, found) {
        (true, Some(window)) => Ok((window, Instant::now())),
        _ => Err(format!("the prompt window {title:?} was not mapped")),
    }
}

fn snapshot(h: &mut Harness, q: &PromptQueue) -> Result<PromptSnapshot, String> {
    let slot: Rc<RefCell<Option<Option<PromptSnapshot>>>> = Rc::default();
    let fill = Rc::clone(&slot);
    q.snapshot(move |s| *fill.borrow_mut() = Some(s));
    h.wait_for(WAIT, || slot.borrow().is_some());
    let taken = slot.borrow_mut().take();
    taken
        .flatten()
        .ok_or_else(|| "the prompt page could not be read".to_owned())
}

/// Waits for request `label`'s answer (`what` says which input should have given it), checks
/// that it is `expected`, and that the prompt's window then goes away.
fn answered(
    h: &mut Harness,
    x: &X11,
    answers: &Answers,
    label: &str,
    expected: ConsentAnswer,
    window: u32,
    what: &str,
) -> Outcome {
    ensure!(
        h.wait_for(WAIT, || !answers.all().is_empty()),
        "{what} did not answer"
    );
    ensure!(
        answers.of(label) == vec![expected],
        "answers: {:?}",
        answers.all()
    );
    ensure!(
        h.wait_for(WAIT, || !x.window_exists(window)),
        "the answered prompt's window stayed"
    );
    Ok(())
}

/// Waits until the showing prompt takes input.
fn armed(h: &mut Harness, q: &PromptQueue) -> Result<(), String> {
    ensure!(
        h.wait_for(WAIT, || q.accepts_input()),
        "the prompt never took input"
    );
    Ok(())
}

fn guard(h: &mut Harness, x: &X11) -> Outcome {
    let answers = Answers::default();
    let mut q = queue(h)?;
    q.request(pending(&answers, "guard", false).0);
    let (window, mapped) = shown(h, x)?;
    let s = snapshot(h, &q)?;
    let allow = button(x, window, &s, "allow")?;
    // Straight after mapping: a click on Allow, then Space and Enter on the focused button.
    x.click(allow.0, allow.1)?;
    x.key(SPACE)?;
    x.key(RETURN)?;
    let sent = mapped.elapsed();
    ensure!(
        sent < GUARD,
        "the input took {sent:?} to send, not inside the {GUARD:?} guard delay"
    );
    armed(h, &q)?;
    let opened = mapped.elapsed();
    h.settle(Duration::from_millis(300));
    ensure!(
        answers.all().is_empty(),
        "input inside the guard delay answered: {:?}",
        answers.all()
    );
    ensure!(q.is_showing(), "the prompt went away");
    x.click(allow.0, allow.1)?;
    answered(
        h,
        x,
        &answers,
        "guard",
        ConsentAnswer::Allow,
        window,
        "a click after the guard delay",
    )?;
    println!(
        "  input sent {}ms after mapping; input taken from {}ms after mapping (guard {}ms)",
        sent.as_millis(),
        opened.as_millis(),
        GUARD.as_millis()
    );
    ensure!(
        opened >= GUARD - Duration::from_millis(50),
        "the guard opened after {opened:?}"
    );
    Ok(())
}

fn keys(h: &mut Harness, x: &X11) -> Outcome {
    let answers = Answers::default();
    let mut q = queue(h)?;
    q.request(pending(&answers, "keys", true).0);
    let (window, _) = shown(h, x)?;
    armed(h, &q)?;
    let s = snapshot(h, &q)?;
    ensure!(s.focused == "deny", "focus starts on {:?}", s.focused);
    ensure!(
        s.buttons.iter().any(|(b, _)| b == "always"),
        "always allow is offered when permitted: {:?}",
        s.buttons
    );
    x.key(RETURN)?;
    h.settle(Duration::from_millis(500));
    ensure!(
        answers.all().is_empty(),
        "Enter answered: {:?}",
        answers.all()
    );
    x.key(SPACE)?;
    answered(
        h,
        x,
        &answers,
        "keys",
        ConsentAnswer::Deny,
        window,
        "Space on the focused button",
    )?;
    Ok(())
}

fn escape(h: &mut Harness, x: &X11) -> Outcome {
    let answers = Answers::default();
    let mut q = queue(h)?;
    q.request(pending(&answers, "escape", false).0);
    let (window, _) = shown(h, x)?;
    armed(h, &q)?;
    let s = snapshot(h, &q)?;
    ensure!(
        !s.buttons.iter().any(|(b, _)| b == "always"),
        "always allow offered though not permitted"
    );
    x.key(ESCAPE)?;
    answered(
        h,
        x,
        &answers,
        "escape",
        ConsentAnswer::Dismissed,
        window,
        "Escape",
    )?;
    Ok(())
}

fn wm_delete(h: &mut Harness, x: &X11) -> Outcome {
    let answers = Answers::default();
    let mut q = queue(h)?;
    q.request(pending(&answers, "close", false).0);
    let (window, _) = shown(h, x)?;
    x.request_close(window)?;
    answered(
        h,
        x,
        &answers,
        "close",
        ConsentAnswer::Dismissed,
        window,
        "WM_DELETE_WINDOW",
    )?;
    Ok(())
}

fn dropped(h: &mut Harness, x: &X11) -> Outcome {
    let answers = Answers::default();
    let mut q = queue(h)?;
    q.request(pending(&answers, "first", false).0);
    q.request(pending(&answers, "second", false).0);
    let (window, _) = shown(h, x)?;
    drop(q);
    ensure!(
        answers.all()
            == vec![
                ("second".to_owned(), ConsentAnswer::Dismissed),
                ("first".to_owned(), ConsentAnswer::Dismissed)
            ]
            || answers.all()
                == vec![
                    ("first".to_owned(), ConsentAnswer::Dismissed),
                    ("second".to_owned(), ConsentAnswer::Dismissed)
                ],
        "{:?}",
        answers.all()
    );
    ensure!(
        h.wait_for(WAIT, || !x.window_exists(window)),
        "window stayed"
    );
    // And a request object dropped by an embedder's own prompt.
    let mut own = |p: PendingConsent| drop(p);
    own.request(pending(&answers, "own", false).0);
    ensure!(
        answers.of("own") == vec![ConsentAnswer::Dismissed],
        "{:?}",
        answers.all()
    );
    Ok(())
}

/// The reasons of the requests [`PromptQueue::on_shown`] reported, in order.
fn reported(q: &PromptQueue) -> Rc<RefCell<Vec<String>>> {
    let log: Rc<RefCell<Vec<String>>> = Rc::default();
    let sink = Rc::clone(&log);
    q.on_shown(move |request| sink.borrow_mut().push(request.reason().to_owned()));
    log
}

/// R-CAP-4: one prompt at a time, first in first out; `on_shown` reports each request once,
/// when its window is on screen, and not the one still waiting.
fn fifo(h: &mut Harness, x: &X11) -> Outcome {
    let answers = Answers::default();
    let mut q = queue(h)?;
    let log = reported(&q);
    q.request(pending(&answers, "first", false).0);
    q.request(pending(&answers, "second", false).0);
    let (window, _) = shown(h, x)?;
    ensure!(
        h.wait_for(WAIT, || !log.borrow().is_empty()),
        "the first prompt was never reported shown"
    );
    h.settle(Duration::from_millis(200));
    ensure!(*log.borrow() == ["first"], "reported {:?}", log.borrow());
    ensure!(q.waiting() == 1, "waiting {}", q.waiting());
    let s = snapshot(h, &q)?;
    ensure!(
        s.text.get("reason").map(String::as_str) == Some("first"),
        "{:?}",
        s.text
    );
    armed(h, &q)?;
    let allow = button(x, window, &s, "allow")?;
    x.click(allow.0, allow.1)?;
    ensure!(
        h.wait_for(WAIT, || answers.all().len() == 1),
        "first not answered"
    );
    ensure!(
        h.wait_for(WAIT, || !x.window_exists(window)),
        "first window stayed"
    );
    let (second, _) = shown(h, x)?;
    ensure!(
        h.wait_for(WAIT, || log.borrow().len() == 2),
        "the second prompt was never reported shown: {:?}",
        log.borrow()
    );
    ensure!(
        *log.borrow() == ["first", "second"],
        "reported {:?}",
        log.borrow()
    );
    let s = snapshot(h, &q)?;
    ensure!(
        s.text.get("reason").map(String::as_str) == Some("second"),
        "{:?}",
        s.text
    );
    ensure!(q.waiting() == 0, "waiting {}", q.waiting());
    armed(h, &q)?;
    let deny = button(x, second, &s, "deny")?;
    x.click(deny.0, deny.1)?;
    ensure!(
        h.wait_for(WAIT, || answers.all().len() == 2),
        "second not answered"
    );
    ensure!(
        answers.all()
            == vec![
                ("first".to_owned(), ConsentAnswer::Allow),
                ("second".to_owned(), ConsentAnswer::Deny)
            ],
        "{:?}",
        answers.all()
    );
    ensure!(!q.is_showing(), "still showing");
    Ok(())
}

/// R-CAP-4: withdrawn requests close and get no answer; one withdrawn while waiting is never
/// shown, nor reported by `on_shown`.
fn withdrawn(h: &mut Harness, x: &X11) -> Outcome {
    let answers = Answers::default();
    let mut q = queue(h)?;
    let log = reported(&q);
    let (first, first_handle) = pending(&answers, "first", false);
    let (second, second_handle) = pending(&answers, "second", false);
    q.request(first);
    q.request(second);
    let (window, _) = shown(h, x)?;
    second_handle.withdraw();
    ensure!(q.waiting() == 0, "a withdrawn waiting request still counts");
    first_handle.withdraw();
    ensure!(
        h.wait_for(WAIT, || !x.window_exists(window)),
        "the withdrawn request's window stayed"
    );
    ensure!(h.wait_for(WAIT, || !q.is_showing()), "still showing");
    h.settle(Duration::from_millis(300));
    ensure!(
        x.find_window_by_title(TITLE).is_none(),
        "the withdrawn waiting request was shown"
    );
    ensure!(
        answers.all().is_empty(),
        "withdrawn requests answered: {:?}",
        answers.all()
    );
    ensure!(*log.borrow() == ["first"], "reported {:?}", log.borrow());
    Ok(())
}

fn above(x: &X11, prompt: u32, surface: u32) -> bool {
    let order = x.stacking_order().unwrap_or_default();
    let at = |w: u32| order.iter().position(|c| *c == w);
    matches!((at(prompt), at(surface)), (Some(p), Some(s)) if p > s)
}

fn above_surface(h: &mut Harness, x: &X11) -> Outcome {
    let answers = Answers::default();
    let mut q = queue(h)?;
    q.request(pending(&answers, "above", false).0);
    let (prompt, _) = shown(h, x)?;
    armed(h, &q)?;
    // A Surface window mapped later, large enough to cover the centred prompt.
    let log = Log::default();
    let page = Page::new("<p>surface</p>", "");
    let server = h.server(&page);
    let view = h
        .shell
        .open(
            &h.event_loop,
            server,
            Placement::Window {
                title: "covering surface".to_owned(),
                width: 1200,
                height: 950,
            },
            log.sink(),
        )
        .map_err(|e| e.to_string())?;
    let surface = xid_of(view.window().ok_or("no window")?)?;
    let mut guard_restarted = false;
    let ok = pump(&mut h.event_loop, &[&view], WAIT, || {
        guard_restarted |= !q.accepts_input();
        x.is_viewable(surface) && above(x, prompt, surface) && guard_restarted
    });
    ensure!(
        ok,
        "prompt above: {}, surface viewable: {}, guard restarted: {guard_restarted}",
        above(x, prompt, surface),
        x.is_viewable(surface)
    );
    // Still above once the Surface has loaded and settled.
    h.wait(&[&view], || log.ready());
    h.settle(Duration::from_millis(500));
    ensure!(
        above(x, prompt, surface),
        "the Surface ended above the prompt"
    );
    drop(q);
    ensure!(
        answers.of("above") == vec![ConsentAnswer::Dismissed],
        "{:?}",
        answers.all()
    );
    view.close();
    Ok(())
}

/// #24: with the embedder's window given (`attach_to`, which the host does for child views), the
/// prompt is transient for it and centred on it; without (the positive control), neither.
fn attached(h: &mut Harness, x: &X11) -> Outcome {
    let app = lineup_host::tao::window::WindowBuilder::new()
        .with_title("the embedder's window")
        .with_position(lineup_host::tao::dpi::PhysicalPosition::new(600, 500))
        .with_inner_size(lineup_host::tao::dpi::PhysicalSize::new(640u32, 480u32))
        .build(&h.event_loop)
        .map_err(|e| e.to_string())?;
    let app_xid = xid_of(&app)?;
    h.settle(Duration::from_millis(300));
    let answers = Answers::default();
    let mut plain = queue(h)?;
    plain.request(pending(&answers, "plain", false).0);
    let (prompt, _) = shown(h, x)?;
    let unattached = x.transient_for(prompt).map_err(|e| e.to_string())?;
    drop(plain);
    ensure!(
        h.wait_for(WAIT, || !x.is_viewable(prompt)),
        "the unattached prompt closed"
    );
    let mut attached = queue(h)?;
    attached.attach_to(&app);
    attached.request(pending(&answers, "attached", false).0);
    let (prompt, _) = shown(h, x)?;
    let parent = x.transient_for(prompt).map_err(|e| e.to_string())?;
    let centre = |w: u32| -> Result<(i32, i32), String> {
        let (x0, y0) = x.window_origin(w).map_err(|e| e.to_string())?;
        let (width, height) = x.window_size(w).map_err(|e| e.to_string())?;
        Ok((
            i32::from(x0) + i32::from(width) / 2,
            i32::from(y0) + i32::from(height) / 2,
        ))
    };
    let (px, py) = centre(prompt)?;
    let (ax, ay) = centre(app_xid)?;
    drop(attached);
    ensure!(
        unattached.is_none(),
        "an unattached prompt is transient for {unattached:?}"
    );
    ensure!(
        parent == Some(app_xid),
        "transient for {parent:?}, not the embedder's window {app_xid}"
    );
    ensure!(
        (px - ax).abs() <= 40 && (py - ay).abs() <= 40,
        "prompt centred at ({px}, {py}), the embedder's window at ({ax}, {ay})"
    );
    Ok(())
}

fn escaped(h: &mut Harness, x: &X11) -> Outcome {
    let markup = "<b>x</b><img src=x onerror=alert(1)>";
    let agent = format!("{markup}\u{202E}gent");
    let reason = format!("{markup}\u{202E}\n{}", "r".repeat(10 * 1024));
    let arguments = json!({ "<b>k</b>": markup, "url": "https://bücher.example/a" });
    let answers = Answers::default();
    let sink = Arc::clone(&answers.0);
    let request = PromptContent::new(
        &agent,
        "app.open_url".try_into().unwrap(),
        "1".try_into().unwrap(),
        Risk::UserConfirmation,
        &reason,
        arguments.as_object().unwrap(),
    )
    // The built-in's own wording, as its provider gives it (R-CAP-4).
    .with_headline(lineup_host::Builtin::OpenUrl.headline())
    .with_link_host(
        lineup_host_core::open_url_host("https://bücher.example/a").map_err(|e| e.to_string())?,
    );
    let mut q = queue(h)?;
    q.request(
        PendingConsent::new(request, move |a| {
            if let Ok(mut all) = sink.lock() {
                all.push(("escaped".to_owned(), a));
            }
        })
        .0,
    );
    shown(h, x)?;
    let s = snapshot(h, &q)?;
    let text = |id: &str| s.text.get(id).cloned().unwrap_or_default();
    ensure!(
        text("agent") == format!("{markup}gent") && text("agent") == display_line(&agent, 64),
        "agent shown as {:?}",
        text("agent")
    );
    let shown_reason = text("reason");
    let expected = format!(
        "{markup}\n{}…",
        "r".repeat(MAX_REASON_GRAPHEMES - markup.chars().count() - 1)
    );
    ensure!(
        shown_reason == expected,
        "reason shown as {} chars, starting {:?}",
        shown_reason.chars().count(),
        shown_reason.chars().take(60).collect::<String>()
    );
    ensure!(
        text("host") == "xn--bcher-kva.example",
        "host {:?}",
        text("host")
    );
    ensure!(
        s.arguments.first() == Some(&("<b>k</b>".to_owned(), markup.to_owned())),
        "arguments {:?}",
        s.arguments
    );
    let all_text: String = s.text.values().cloned().collect();
    ensure!(!all_text.contains('\u{202E}'), "a bidi override is shown");
    let markup_elements = |s: &PromptSnapshot| {
        s.elements
            .iter()
            .filter(|e| *e == "b" || *e == "img")
            .count()
    };
    ensure!(
        markup_elements(&s) == 0,
        "agent markup became elements: {:?}",
        s.elements
    );
    ensure!(
        s.other_requests == 0,
        "the page made {} requests",
        s.other_requests
    );
    // Positive control: the same markup put in as markup is seen by the same check.
    q.plant_markup_for_test(markup);
    let mut control = None;
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        let c = snapshot(h, &q)?;
        if markup_elements(&c) > 0 {
            control = Some(c);
            break;
        }
        h.settle(Duration::from_millis(50));
    }
    let control = control.ok_or("the check did not see planted markup")?;
    ensure!(
        control.elements.iter().any(|e| e == "b") && control.elements.iter().any(|e| e == "img"),
        "control elements {:?}",
        control.elements
    );
    println!(
        "  control: planted markup gives {} markup elements, {} refused requests",
        markup_elements(&control),
        control.other_requests
    );
    drop(q);
    ensure!(
        answers.of("escaped") == vec![ConsentAnswer::Dismissed],
        "{:?}",
        answers.all()
    );
    Ok(())
}

/// R-SEC-5: a 1,000-character reason (the most a prompt shows) scrolls in its own box; the
/// agent, the capability and every argument stay above the fold, in full. Positive control: the
/// whole reason is in the page, and its box does scroll.
fn long_reason(h: &mut Harness, x: &X11) -> Outcome {
    let answers = Answers::default();
    // Wide letters, so that 1,000 of them fill the window as the issue saw.
    let reason = "WWW MMM Please let me do this. ".repeat(33);
    let arguments = json!({
        "file_name": "quarterly-report-final.txt",
        "text": "the numbers of the quarter, as the user asked",
        "folder": "documents",
        "mode": "overwrite",
    });
    let request = PromptContent::new(
        "agent-7",
        "artifact.save".try_into().unwrap(),
        "1".try_into().unwrap(),
        Risk::UserConfirmation,
        &reason,
        arguments.as_object().unwrap(),
    );
    let sink = Arc::clone(&answers.0);
    let (pending, _handle) = PendingConsent::new(request, move |answer| {
        if let Ok(mut all) = sink.lock() {
            all.push(("long".to_owned(), answer));
        }
    });
    let mut q = queue(h)?;
    q.request(pending);
    let (window, _) = shown(h, x)?;
    armed(h, &q)?;
    let s = snapshot(h, &q)?;
    let shown_reason = s.text.get("reason").cloned().unwrap_or_default();
    ensure!(
        shown_reason.chars().count() >= 1000,
        "control: the reason is in the page ({} characters)",
        shown_reason.chars().count()
    );
    ensure!(s.fold > 0.0, "the fold is measured: {}", s.fold);
    for id in ["agent", "capability", "arguments", "more"] {
        let Some([_, top, _, height]) = s.boxes.get(id).copied() else {
            return Err(format!("no box for #{id}: {:?}", s.boxes.keys()));
        };
        ensure!(
            top >= 0.0 && top + height <= s.fold + 0.5,
            "#{id} ends at {} below the fold at {}",
            top + height,
            s.fold
        );
    }
    ensure!(
        s.arguments.len() == 4,
        "every argument is listed: {:?}",
        s.arguments
    );
    ensure!(
        s.reason_scrolls,
        "control: the long reason scrolls in its box (fold {}, boxes {:?})",
        s.fold,
        s.boxes
    );
    x.key(ESCAPE)?;
    answered(
        h,
        x,
        &answers,
        "long",
        ConsentAnswer::Dismissed,
        window,
        "Escape",
    )?;
    Ok(())
}

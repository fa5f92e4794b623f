//! The input gate of a component window (R-STD-8) and the web process a conversation's windows
//! share (§4 of standard-components.md).

use std::cell::RefCell;
use std::rc::Rc;

use lineup_host::platform::{ComponentAction, PATCH_GUARD_INTERVAL};
use lineup_host_core::{ComponentKind, InputKind, JsonObject};
use lineup_tests::ensure;
use lineup_tests::runner::{Outcome, WAIT};
use lineup_tests::view_harness::Harness;
use lineup_tests::x11::X11;
use serde_json::json;

use super::{close, mapped, recorded, sample};

pub(super) fn activation(h: &mut Harness, x: &X11) -> Outcome {
    let content = sample(
        ComponentKind::Confirm,
        json!({"title": "Deploy?", "confirm_label": "Deploy"}),
        json!({}),
        None,
    );
    let (window, reported) = recorded(h, &content)?;
    let xid = mapped(h, x, ComponentKind::Confirm)?;
    ensure!(
        h.wait_for(WAIT, || window.accepts_input()),
        "the guard never opened"
    );
    // The page posts an answer with no input event behind it: dropped.
    window.post_from_page_for_test(r#"{"type":"submit","answer":true}"#);
    h.settle(std::time::Duration::from_millis(600));
    ensure!(
        reported.borrow().is_empty(),
        "a page-made submit answered: {:?}",
        reported.borrow()
    );
    let click = |x: &X11| -> Outcome {
        let (w, hh) = x.window_size(xid).map_err(|e| e.to_string())?;
        let cx = i16::try_from(w).unwrap_or(0) - 20 - 60;
        let cy = i16::try_from(hh).unwrap_or(0) - 10 - 17;
        x.click_in(xid, cx, cy).map_err(|e| e.to_string())
    };
    // A real click after the guard answers (the positive control), with the pointer's kind.
    click(x)?;
    ensure!(
        h.wait_for(WAIT, || reported.borrow().len() == 1),
        "a real click after the guard did not answer"
    );
    ensure!(
        matches!(
            reported.borrow()[0],
            ComponentAction::Submit {
                input: InputKind::Pointer,
                ..
            }
        ),
        "{:?}",
        reported.borrow()
    );
    // A patch the user sees restarts the guard: a click right after it is dropped...
    window.update(&JsonObject::default(), None, true);
    click(x)?;
    h.settle(std::time::Duration::from_millis(300));
    ensure!(
        reported.borrow().len() == 1,
        "a click right after a patch answered: {:?}",
        reported.borrow()
    );
    // ...and one after the guard delay answers again.
    h.settle(std::time::Duration::from_millis(500));
    click(x)?;
    ensure!(
        h.wait_for(WAIT, || reported.borrow().len() == 2),
        "a click after the patch's guard did not answer"
    );
    // Patches restart the guard at most once per PATCH_GUARD_INTERVAL: a second patch within
    // it leaves the question answerable, so patching cannot keep it locked...
    let error = |text: &str| JsonObject::try_from(json!({"error": text})).unwrap_or_default();
    window.update(&error("one"), None, true);
    click(x)?;
    ensure!(
        h.wait_for(WAIT, || reported.borrow().len() == 3),
        "a second patch inside the interval restarted the guard"
    );
    // ...and a patch that changes nothing shown restarts nothing either.
    h.settle(PATCH_GUARD_INTERVAL);
    window.update(&error("one"), None, false);
    click(x)?;
    ensure!(
        h.wait_for(WAIT, || reported.borrow().len() == 4),
        "a patch that changed nothing restarted the guard"
    );
    close(h, x, window, xid);
    Ok(())
}

/// R-STD-8 (§5 check 8): forged keys (flagged `send_event`) reach the page, which acts on them,
/// but earn no credit: the answer they make is dropped; the same key from the user answers.
pub(super) fn forged_keys(h: &mut Harness, x: &X11) -> Outcome {
    const TAB: u32 = 0xff09;
    const SPACE: u32 = 0x20;
    let content = sample(
        ComponentKind::Confirm,
        json!({"title": "Rotate the keys?", "confirm_label": "Rotate"}),
        json!({}),
        None,
    );
    let (window, reported) = recorded(h, &content)?;
    let xid = mapped(h, x, ComponentKind::Confirm)?;
    x.focus(xid).map_err(|e| e.to_string())?;
    ensure!(
        h.wait_for(WAIT, || window.accepts_input()),
        "the guard never opened"
    );
    let focused = |h: &mut Harness| -> String {
        let slot: Rc<RefCell<Option<String>>> = Rc::default();
        let fill = Rc::clone(&slot);
        window
            .snapshot(move |s| *fill.borrow_mut() = Some(s.map(|s| s.focused).unwrap_or_default()));
        h.wait_for(WAIT, || slot.borrow().is_some());
        let taken = slot.borrow_mut().take();
        taken.unwrap_or_default()
    };
    // Forged keys reach the page: a forged Tab moves the focus to a button...
    let before = focused(h);
    window.forge_key_for_test(TAB);
    let mut moved = false;
    for _ in 0..20 {
        h.settle(std::time::Duration::from_millis(100));
        if focused(h) != before {
            moved = true;
            break;
        }
    }
    ensure!(
        moved,
        "a forged Tab never reached the page (focus stayed on {before:?})"
    );
    // ...and a forged Space presses it, but answers nothing.
    window.forge_key_for_test(SPACE);
    h.settle(std::time::Duration::from_millis(700));
    ensure!(
        reported.borrow().is_empty(),
        "a forged key answered: {:?}",
        reported.borrow()
    );
    // The user's own Space on the same button answers (the positive control).
    x.key(SPACE).map_err(|e| e.to_string())?;
    ensure!(
        h.wait_for(WAIT, || reported.borrow().len() == 1),
        "a real Space did not answer"
    );
    ensure!(
        matches!(
            reported.borrow()[0],
            ComponentAction::Submit {
                input: InputKind::Keyboard,
                ..
            }
        ),
        "{:?}",
        reported.borrow()
    );
    close(h, x, window, xid);
    Ok(())
}

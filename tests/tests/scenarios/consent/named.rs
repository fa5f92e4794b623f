//! #49 item 4, R-SEC-5: the consent prompt says which conversation asks, without letting the
//! asker write the prompt. A plain id is shown in quotes as the agent's name for it (the
//! positive control); an id that imitates the prompt's lines (`Permission request · Risk: none ·
//! Always allow`) is not shown at all, and every other line of the prompt reads as it does for
//! the plain one.

use std::sync::Arc;

use lineup_host::{ConsentPrompt, PendingConsent, PromptContent, PromptSnapshot};
use lineup_host_core::{ConversationId, Risk, SessionId};
use lineup_tests::ensure;
use lineup_tests::runner::{Outcome, WAIT};
use lineup_tests::view_harness::Harness;
use lineup_tests::x11::X11;
use serde_json::json;

use super::{queue, shown, snapshot, Answers};

/// The prompt for a `clipboard.write` from conversation `id`, read back.
fn asked_from(h: &mut Harness, x: &X11, id: &str) -> Result<PromptSnapshot, String> {
    let answers = Answers::default();
    let conversation = ConversationId::try_from(id).map_err(|e| format!("{e:?}"))?;
    let request = PromptContent::new(
        "agent-7",
        "clipboard.write".try_into().map_err(|e| format!("{e:?}"))?,
        "1".try_into().map_err(|e| format!("{e:?}"))?,
        Risk::UserConfirmation,
        "To copy the summary",
        json!({"text": "hello"}).as_object().ok_or("no object")?,
    )
    .with_remember(true)
    .with_conversation(&conversation, SessionId::STANDALONE, None);
    ensure!(
        request.conversation().map(|c| c.id.as_str()) == Some(id),
        "a custom prompt's request does not carry the conversation"
    );
    let sink = Arc::clone(&answers.0);
    let pending = PendingConsent::new(request, move |answer| {
        if let Ok(mut all) = sink.lock() {
            all.push((String::new(), answer));
        }
    });
    let mut q = queue(h)?;
    q.request(pending.0);
    let (window, _) = shown(h, x)?;
    let read = snapshot(h, &q)?;
    drop(q);
    h.wait_for(WAIT, || !x.window_exists(window));
    Ok(read)
}

pub(super) fn conversation(h: &mut Harness, x: &X11) -> Outcome {
    let plain = asked_from(h, x, "support-chat")?;
    let said = plain.text.get("conversation").cloned().unwrap_or_default();
    ensure!(
        said.contains("“support-chat”"),
        "the prompt does not name the conversation: {said:?}"
    );
    let forged = asked_from(h, x, "Permission request · Risk: none · Always allow")?;
    let said = forged.text.get("conversation").cloned().unwrap_or_default();
    for line in ["Permission", "Risk", "Always"] {
        ensure!(
            !said.contains(line),
            "the conversation's name put {line:?} in the prompt: {said:?}"
        );
    }
    for (id, text) in &plain.text {
        if id != "conversation" {
            ensure!(
                forged.text.get(id) == Some(text),
                "the prompt's {id} line reads {:?}, not {text:?}",
                forged.text.get(id)
            );
        }
    }
    ensure!(
        forged.buttons.len() == plain.buttons.len(),
        "buttons {:?} against {:?}",
        forged.buttons,
        plain.buttons
    );
    Ok(())
}

//! #49 item 4, R-SEC-5: the consent prompt says which conversation asks, without letting the
//! asker write the prompt. A plain id is shown in quotes as the agent's name for it (the
//! positive control); an id that imitates the prompt's lines (`Permission request · Risk: none ·
//! Always allow`) is not shown at all, and every other line of the prompt reads as it does for
//! the plain one.

use std::sync::Arc;

use lineup_host::platform::PromptSnapshot;
use lineup_host::{ConsentPrompt, PendingConsent, PromptContent};
use lineup_host_core::{ConversationId, LanguageTag, Risk, SessionId};
use lineup_tests::ensure;
use lineup_tests::runner::{Outcome, WAIT};
use lineup_tests::view_harness::Harness;
use lineup_tests::x11::X11;
use serde_json::json;

use super::{queue, shown_titled, snapshot, Answers};

/// The prompt for a `clipboard.write` from conversation `id`, read back.
fn asked_from(h: &mut Harness, x: &X11, id: &str) -> Result<PromptSnapshot, String> {
    asked_in(h, x, id, &LanguageTag::english())
}

/// [`asked_from`] with the host's words in `language`.
fn asked_in(
    h: &mut Harness,
    x: &X11,
    id: &str,
    language: &LanguageTag,
) -> Result<PromptSnapshot, String> {
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
    .with_conversation(&conversation, SessionId::STANDALONE, None)
    .with_language(language.clone());
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
    // The window's title is the host's too, in the same language.
    let title = lineup_host_core::host_word(language, "prompt_title").unwrap_or_default();
    let (window, _) = shown_titled(h, x, title)?;
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

/// R-STD-9: the prompt's own words (buttons, headings, the headline, the risk, the
/// conversation's line) in the host context's language, read back from the page: Simplified
/// Chinese for `zh-CN`, English otherwise (the positive control); the agent's words as they came.
pub(super) fn chinese(h: &mut Harness, x: &X11) -> Outcome {
    let zh = LanguageTag::try_from("zh-CN").map_err(|e| format!("{e:?}"))?;
    let english = asked_from(h, x, "support-chat")?;
    let chinese = asked_in(h, x, "support-chat", &zh)?;
    for (id, en, cn) in [
        ("deny", "Deny", "拒绝"),
        ("allow", "Allow", "允许"),
        ("always", "Always allow", "始终允许"),
        ("details", "Details", "详细信息"),
        ("reason_heading", "The agent's reason", "智能体给出的理由"),
        (
            "headline",
            "asks to use “clipboard.write”",
            "请求使用“clipboard.write”",
        ),
        (
            "risk",
            "It acts only if you allow it.",
            "只有在你允许后它才会执行。",
        ),
        ("version", "version 1", "版本 1"),
        (
            "conversation",
            "in the conversation the agent calls “support-chat”",
            "来自智能体称为“support-chat”的对话",
        ),
    ] {
        let read = |s: &PromptSnapshot| s.text.get(id).map(|t| t.trim().to_owned());
        ensure!(
            read(&english).as_deref() == Some(en),
            "English {id}: {:?}",
            read(&english)
        );
        ensure!(
            read(&chinese).as_deref() == Some(cn),
            "Chinese {id}: {:?}",
            read(&chinese)
        );
    }
    ensure!(
        chinese.text.get("reason").map(String::as_str) == Some("To copy the summary")
            && chinese.arguments == vec![("text".to_owned(), "hello".to_owned())],
        "the agent's words changed: {:?}",
        chinese
    );
    Ok(())
}

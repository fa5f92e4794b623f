//! R-STD-9: the words the host draws itself in a component (default labels, the words of
//! states) come from one table in the host context's language: Simplified Chinese for `zh`,
//! English otherwise (the positive control), read back from the page.

use lineup_host::platform::ComponentWindow;
use lineup_host::ComponentOptions;
use lineup_host_core::{ComponentKind, LanguageTag};
use lineup_tests::ensure;
use lineup_tests::runner::Outcome;
use lineup_tests::view_harness::Harness;
use lineup_tests::x11::X11;
use serde_json::json;

use super::{close, mapped_in, read, sample};

pub(super) fn localized(h: &mut Harness, x: &X11) -> Outcome {
    for (tag, cancel, confirm, in_progress) in [
        ("zh-CN", "取消", "确认", "进行中"),
        ("en", "Cancel", "Confirm", "In progress"),
    ] {
        let language = LanguageTag::try_from(tag).map_err(|e| format!("{e:?}"))?;
        let options = ComponentOptions::new().with_language(language);
        let question = sample(
            ComponentKind::Confirm,
            json!({"title": "Deploy?"}),
            json!({}),
            None,
        );
        let window = ComponentWindow::new(&h.event_loop, &question, &options, |_| {})
            .map_err(|e| e.to_string())?;
        let xid = mapped_in(h, x, ComponentKind::Confirm, &options)?;
        let shown = read(h, &window)?;
        let names: Vec<&str> = shown.with_role("button").map(|e| e.name.as_str()).collect();
        ensure!(
            names.contains(&cancel) && names.contains(&confirm),
            "{tag}: the buttons read {names:?}"
        );
        close(h, x, window, xid);

        let status = sample(
            ComponentKind::Status,
            json!({}),
            json!({"status": "in_progress", "title": "Build"}),
            None,
        );
        let window = ComponentWindow::new(&h.event_loop, &status, &options, |_| {})
            .map_err(|e| e.to_string())?;
        let xid = mapped_in(h, x, ComponentKind::Status, &options)?;
        let shown = read(h, &window)?;
        ensure!(
            shown.text.contains(in_progress),
            "{tag}: the status reads {:?}",
            shown.text
        );
        close(h, x, window, xid);
    }
    Ok(())
}

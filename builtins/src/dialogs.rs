//! The built-ins' dialogs that decide a call: `device.pick_file`'s chooser (its OS permission,
//! R-CAP-3) and `artifact.save`'s save dialog (where the file goes). Each takes the place of the
//! permission hook, on a thread of its own, and ends by the call's deadline; what the user chose
//! waits here for the call's handler (R-CAP-4).
//!
//! | the user | answer |
//! | --- | --- |
//! | chooses a file or a place | the call runs: `completed`, or `failed` naming why (a file over the limit, a write that failed) |
//! | presses Cancel, Escape, or closes the dialog | `cancelled` ([`HookAnswer::Dismissed`]) |
//! | lets the deadline pass | `expired`: the kernel withdraws the dialog, which closes; nothing is read or written |

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use lineup_host_core::{
    Answer, CallKey, HookAnswer, HookRequest, SessionId, Ticket, Timestamp, WallClock as _,
};

use super::{
    sanitize_file_name, Builtin, ChooseFile, Deadline, Desktop, DesktopError, PickedFile, SaveFile,
    SaveLocation, MAX_CHOOSER_OPEN, MAX_PICKED_FILE_BYTES,
};
use lineup_webview_shell::SystemWallClock;

use crate::AnswerSink;

/// How long after the call's deadline a dialog the kernel did not withdraw closes itself.
const GRACE: std::time::Duration = std::time::Duration::from_secs(2);
/// How many choices wait for their call to run (each file at most [`MAX_PICKED_FILE_BYTES`]).
const MAX_WAITING: usize = 8;

/// What the user chose in a call's dialog, for its handler.
pub(super) enum Chosen {
    /// `device.pick_file`: the file read, or why it could not be.
    File(Result<PickedFile, DesktopError>),
    /// `artifact.save`: where to write, or why the dialog failed.
    SaveTo(Result<SaveLocation, DesktopError>),
}

/// The open dialogs and the choices waiting for their handlers. Clones share both.
#[derive(Clone)]
pub(super) struct Dialogs {
    desktop: Arc<dyn Desktop>,
    chosen: Arc<Mutex<VecDeque<(CallKey, Chosen)>>>,
    /// Dialogs showing, by session and hook ticket, so the kernel can withdraw them.
    open: Arc<Mutex<BTreeMap<(SessionId, Ticket), Deadline>>>,
}

impl Dialogs {
    pub(super) fn new(desktop: Arc<dyn Desktop>) -> Self {
        Self {
            desktop,
            chosen: Arc::default(),
            open: Arc::default(),
        }
    }

    /// Shows `builtin`'s dialog for `request` on a thread of its own and answers the hook
    /// through `sink`: a choice allows the call (a failure too, so that its handler answers
    /// `failed` with the reason); a dismissed dialog is [`HookAnswer::Dismissed`].
    pub(super) fn show(
        &self,
        builtin: Builtin,
        session: SessionId,
        request: HookRequest,
        sink: &AnswerSink,
    ) {
        let ticket = request.ticket;
        let until = deadline_of(&request.expires_at);
        if let Ok(mut open) = self.open.lock() {
            open.insert((session, ticket), until.clone());
        }
        let me = self.clone();
        let answer = Arc::clone(sink);
        let key = request.call.key;
        let suggested = request
            .call
            .arguments
            .as_map()
            .get("file_name")
            .and_then(|v| v.as_str())
            .map(sanitize_file_name)
            .unwrap_or_else(|| sanitize_file_name(""));
        let spawned = std::thread::Builder::new()
            .name(format!("lineup-builtin-{builtin}"))
            .spawn(move || {
                let chosen = match builtin {
                    Builtin::PickFile => me
                        .desktop
                        .choose_file(&ChooseFile::new(MAX_PICKED_FILE_BYTES, until))
                        .transpose()
                        .map(Chosen::File),
                    _ => me
                        .desktop
                        .choose_save_location(&SaveFile::new(suggested, until))
                        .transpose()
                        .map(Chosen::SaveTo),
                };
                if let Ok(mut open) = me.open.lock() {
                    open.remove(&(session, ticket));
                }
                let verdict = match chosen {
                    Some(chosen) => {
                        me.keep(key, chosen);
                        HookAnswer::Allow
                    }
                    None => HookAnswer::Dismissed,
                };
                answer(session, ticket, Answer::Hook(verdict));
            });
        if let Err(e) = spawned {
            tracing::error!("the {builtin} dialog could not be started: {e}");
            sink(session, ticket, Answer::Hook(HookAnswer::Deny));
        }
    }

    fn keep(&self, key: CallKey, chosen: Chosen) {
        if let Ok(mut waiting) = self.chosen.lock() {
            if waiting.len() >= MAX_WAITING {
                waiting.pop_front();
            }
            waiting.push_back((key, chosen));
        }
    }

    /// The kernel no longer wants the answer to `ticket`: its dialog goes away.
    pub(super) fn withdraw(&self, session: SessionId, ticket: Ticket) {
        if let Some(until) = self
            .open
            .lock()
            .ok()
            .and_then(|mut open| open.remove(&(session, ticket)))
        {
            until.withdraw();
        }
    }

    /// What the user chose for call `key`, taken (each choice serves one run).
    pub(super) fn take(&self, key: &CallKey) -> Option<Chosen> {
        let mut waiting = self.chosen.lock().ok()?;
        let at = waiting.iter().position(|(k, _)| k == key)?;
        waiting.remove(at).map(|(_, chosen)| chosen)
    }
}

/// A dialog's own deadline, a backstop: the kernel withdraws the dialog at the call's deadline
/// (already within `max_call_lifetime`) and answers `expired`; the dialog also closes itself a
/// little later ([`GRACE`]), and never stays longer than [`MAX_CHOOSER_OPEN`].
fn deadline_of(expires_at: &Timestamp) -> Deadline {
    let left = SystemWallClock.now().until(expires_at) + GRACE;
    Deadline::after(left.min(MAX_CHOOSER_OPEN))
}

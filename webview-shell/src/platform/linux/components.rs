//! One standard component instance on Linux: its box in a [`PlatformBoard`] (R-STD-8 per
//! instance), taken out of the board when dropped.

use std::rc::Rc;

use super::board::PlatformBoard;
use super::board_member::Member;
use crate::component_snapshot::{parse_snapshot, snapshot_script, ComponentSnapshot};
use crate::components::{
    lock_script, takes_enter, update_script, ComponentAction, ComponentContent, ComponentOptions,
};
use crate::error::ShellError;
use lineup_host_core::{JsonObject, SafeMarkdown};

/// One instance's box in a board, removed when dropped.
pub(crate) struct PlatformComponent {
    board: PlatformBoard,
    slot: String,
    member: Rc<Member>,
}

impl PlatformComponent {
    /// Adds `content` to `board` as `options` say; its box is shown once the page built it.
    /// `on_action` hears, from the main loop, what the user did in it.
    pub(crate) fn new(
        board: &PlatformBoard,
        content: &ComponentContent,
        options: &ComponentOptions,
        on_action: Rc<dyn Fn(ComponentAction)>,
    ) -> Self {
        let (slot, member) = board.add(
            content,
            options.guard_delay_for(content),
            takes_enter(content.kind),
            on_action,
        );
        Self {
            board: board.clone(),
            slot,
            member,
        }
    }

    /// Whether its box is shown, its board visible, and its guard delay passed.
    pub(crate) fn accepts_input(&self) -> bool {
        self.board.accepts_input(&self.member)
    }

    /// Whether its box is shown in a visible board.
    pub(crate) fn is_shown(&self) -> bool {
        self.member.is_shown() && self.board.is_visible()
    }

    /// Shows `state` (and its Markdown) in its box; `reopened` unlocks it for a new round.
    pub(crate) fn update(
        &self,
        state: &JsonObject,
        markdown: Option<&SafeMarkdown>,
        reopened: bool,
    ) {
        self.member.note_update(state, markdown, reopened);
        self.board
            .run(update_script(&self.slot, state, markdown, reopened));
    }

    /// Locks its box after an answer.
    pub(crate) fn lock(&self) {
        self.member.note_lock();
        self.board.run(lock_script(&self.slot));
    }

    /// A change the user sees: its guard delay starts again (R-STD-8 (b)).
    pub(crate) fn restart_guard(&self, why: &str) {
        self.member.restart_guard(why);
    }

    /// Runs `script` in its board's page (a test control's).
    #[cfg(feature = "test-controls")]
    pub(crate) fn run(&self, script: String) {
        self.board.run(script);
    }

    /// Its slot in the board.
    #[cfg(feature = "test-controls")]
    pub(crate) fn slot(&self) -> &str {
        &self.slot
    }

    /// Feeds its board's window a press and release of `keyval` flagged `send_event` (a test
    /// control).
    #[cfg(feature = "test-controls")]
    pub(crate) fn forge_key(&self, keyval: u32) {
        super::forged::forge_key(self.board.window(), keyval);
    }

    /// A real left click (XTEST) at the middle of its element `id`, where its board shows it
    /// now; `done` hears whether it was sent.
    #[cfg(feature = "test-controls")]
    pub(crate) fn click_for_test(&self, id: &str, done: Box<dyn FnOnce(Result<(), ShellError>)>) {
        let view = self.board.widget().clone();
        let id = id.to_owned();
        self.snapshot(Box::new(move |snapshot| {
            let found = snapshot.and_then(|s| s.boxes.get(&id).copied());
            done(match found {
                Some([x, y, w, h]) => super::pointer::click_in(&view, x + w / 2.0, y + h / 2.0),
                None => Err(ShellError::Platform(format!("no element #{id} to click"))),
            });
        }));
    }

    /// Reads its box back (see [`ComponentSnapshot`]).
    pub(crate) fn snapshot(&self, done: Box<dyn FnOnce(Option<ComponentSnapshot>)>) {
        self.board.evaluate(
            &snapshot_script(&self.slot),
            Box::new(move |json| done(json.as_deref().and_then(parse_snapshot))),
        );
    }

    /// WebKit's snapshot of its board's whole document as PNG bytes.
    pub(crate) fn snapshot_png(&self, done: Box<dyn FnOnce(Result<Vec<u8>, ShellError>)>) {
        super::snapshot::full_document_png(self.board.widget(), done);
    }
}

impl Drop for PlatformComponent {
    fn drop(&mut self) {
        self.board.remove(&self.slot);
    }
}

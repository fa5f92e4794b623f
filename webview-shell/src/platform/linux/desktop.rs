//! The real desktop of the built-in capabilities on Linux: GIO's default handler for links,
//! GTK's clipboard and `GtkFileChooserNative`, the GTK parts run on the GTK main thread.
//!
//! Callers are handler threads (never the GTK thread): each GTK step is handed to the main
//! context with `glib::MainContext::invoke` and answered through a channel with a timeout, so a
//! busy or gone GUI thread fails the call instead of hanging it.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::mpsc;
use std::time::Duration;

use gtk::prelude::*;
use gtk::{gdk, gio, glib};

use crate::desktop::{
    read_picked, ChooseFile, Deadline, DesktopError, PickedFile, SaveFile, SaveLocation,
};
use crate::error::ShellError;

/// How long the GTK thread may take to answer a step that does not wait for the user.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);
/// How often an open chooser checks whether its deadline passed or it was withdrawn.
const POLL: Duration = Duration::from_millis(100);

/// Whether GTK is up in this process.
pub(crate) fn supported() -> Result<(), ShellError> {
    if gtk::is_initialized() {
        Ok(())
    } else {
        Err(ShellError::Platform(
            "GTK is not initialized; build the desktop after the event loop".into(),
        ))
    }
}

/// Runs `f` on the GTK main thread and waits up to [`ANSWER_TIMEOUT`] for its answer.
fn on_main<T: Send + 'static>(
    what: &'static str,
    f: impl FnOnce() -> Result<T, DesktopError> + Send + 'static,
) -> Result<T, DesktopError> {
    let (tx, rx) = mpsc::sync_channel(1);
    glib::MainContext::default().invoke(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(ANSWER_TIMEOUT).map_err(|_| {
        DesktopError::Failed(format!(
            "the GUI thread did not {what} within {} s",
            ANSWER_TIMEOUT.as_secs()
        ))
    })?
}

/// Opens `uri` with the desktop's default handler. GIO's launching is thread-safe, so this runs
/// on the caller's thread and never blocks the GUI.
pub(crate) fn open_uri(uri: &str) -> Result<(), DesktopError> {
    gio::AppInfo::launch_default_for_uri(uri, None::<&gio::AppLaunchContext>).map_err(|e| {
        DesktopError::Failed(format!("no application opened the link: {}", e.message()))
    })
}

/// Puts `text` on the `CLIPBOARD` selection.
pub(crate) fn set_clipboard_text(text: &str) -> Result<(), DesktopError> {
    let text = text.to_owned();
    on_main("set the clipboard", move || {
        let display = gdk::Display::default()
            .ok_or_else(|| DesktopError::Failed("there is no display".into()))?;
        let clipboard = gtk::Clipboard::default(&display)
            .ok_or_else(|| DesktopError::Failed("the display has no clipboard".into()))?;
        clipboard.set_text(&text);
        Ok(())
    })
}

/// Shows the open chooser and reads the chosen file on the caller's thread.
pub(crate) fn choose_file(request: &ChooseFile) -> Result<Option<PickedFile>, DesktopError> {
    let chosen = run_chooser(
        gtk::FileChooserAction::Open,
        "Choose a file to give to the agent",
        "_Give",
        None,
        &request.until,
    )?;
    chosen
        .map(|path| read_picked(&path, request.max_bytes))
        .transpose()
}

/// Shows the save dialog and gives back the place chosen; nothing is written here.
pub(crate) fn choose_save_location(
    request: &SaveFile,
) -> Result<Option<SaveLocation>, DesktopError> {
    let chosen = run_chooser(
        gtk::FileChooserAction::Save,
        "Save the agent's file",
        "_Save",
        Some(request.suggested_name.clone()),
        &request.until,
    )?;
    Ok(chosen.map(SaveLocation::new))
}

/// Shows a modal, host-owned `GtkFileChooserNative` and waits for the path the user chose:
/// `None` when cancelled or withdrawn, [`DesktopError::TimedOut`] when the deadline passed.
fn run_chooser(
    action: gtk::FileChooserAction,
    title: &'static str,
    accept: &'static str,
    suggested: Option<String>,
    until: &Deadline,
) -> Result<Option<PathBuf>, DesktopError> {
    let allowed = until.remaining().as_secs();
    let (tx, rx) = mpsc::channel::<Option<PathBuf>>();
    let watch = until.clone();
    glib::MainContext::default().invoke(move || {
        let dialog = gtk::FileChooserNative::new(
            Some(title),
            None::<&gtk::Window>,
            action,
            Some(accept),
            Some("_Cancel"),
        );
        dialog.set_modal(true);
        dialog.set_select_multiple(false);
        dialog.set_local_only(true);
        if let Some(name) = &suggested {
            dialog.set_current_name(name);
            dialog.set_do_overwrite_confirmation(true);
        }
        // Answered once, by the response or by the deadline, whichever comes first.
        let answer = Rc::new(RefCell::new(Some(tx)));
        let send = {
            let answer = Rc::clone(&answer);
            Rc::new(move |path: Option<PathBuf>| {
                if let Some(tx) = answer.borrow_mut().take() {
                    let _ = tx.send(path);
                }
            })
        };
        let on_response = Rc::clone(&send);
        dialog.connect_response(move |d, response| {
            let path = (response == gtk::ResponseType::Accept)
                .then(|| d.file().and_then(|f| f.path()))
                .flatten();
            on_response(path);
        });
        dialog.show();
        // Holds the dialog until it is answered; hides it when the deadline passes.
        glib::timeout_add_local(POLL, move || {
            if answer.borrow().is_none() {
                return glib::ControlFlow::Break;
            }
            if watch.is_over() {
                dialog.hide();
                send(None);
                return glib::ControlFlow::Break;
            }
            glib::ControlFlow::Continue
        });
    });
    match rx.recv_timeout(until.remaining() + ANSWER_TIMEOUT) {
        Ok(Some(path)) => Ok(Some(path)),
        Ok(None) if until.is_over() && !until.is_withdrawn() => {
            Err(DesktopError::TimedOut { seconds: allowed })
        }
        Ok(None) => Ok(None),
        Err(_) => Err(DesktopError::Failed(
            "the GUI thread did not show the file dialog".into(),
        )),
    }
}

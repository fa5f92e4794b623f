//! #29 item 3: a hibernated Surface's record lives in the store's `open_instances` beside the
//! standard components' (kind `surface`), so that a restart brings it back the same way. A
//! vouched host hibernates a Surface and takes a patch while it sleeps, and ends; a second
//! host on the same data directory, for the same identity, gets the conversation back: the
//! Surface is open and hibernated, its opener hears `restored`, and shown, it wakes with the
//! state of that last patch; its record is forgotten once it woke.

use std::rc::Rc;
use std::time::Duration;

use lineup_host::protocol::{InstanceStore, Limits, PartyId};
use lineup_host::HostBuilder;
use lineup_store::Store;
use lineup_tests::ensure;
use lineup_tests::host_harness::{test_app, HostHarness, TestHost};
use lineup_tests::runner::Outcome;
use serde_json::json;

use super::{css, painted, parent_window, shows, PAGE_JS, PURPLE, RED};

/// A host for the vouched agent `a1` whose Surfaces are child views of a new window, keeping
/// records in the store of `dir`.
fn vouched_host(
    h: &mut HostHarness,
    dir: &std::path::Path,
) -> Result<(Rc<lineup_host::tao::window::Window>, TestHost), String> {
    let parent = parent_window(h, "lineup restart")?;
    let store = Store::open(dir).map_err(|e| e.to_string())?;
    let t = h.host(
        HostBuilder::new()
            .child_views_in(Rc::clone(&parent))
            .limits(Limits::default())
            .vouched_agent(PartyId::try_from("a1").map_err(|e| e.to_string())?)
            .component_store(store),
    )?;
    Ok((parent, t))
}

/// The states of `a1`'s hibernated Surfaces of `c1` in the store of `dir`, by instance.
fn kept(dir: &std::path::Path) -> Result<Vec<(String, String)>, String> {
    let mut store = Store::open(dir).map_err(|e| e.to_string())?;
    let owner = PartyId::try_from("a1").map_err(|e| e.to_string())?;
    let records = store
        .surfaces(
            &owner,
            &"c1"
                .try_into()
                .map_err(|e: lineup_host::protocol::InvalidValue| e.to_string())?,
        )
        .map_err(|e| e.to_string())?;
    Ok(records
        .into_iter()
        .map(|r| (r.instance_id.as_str().to_owned(), r.state.to_json()))
        .collect())
}

pub(super) fn a_hibernated_surface_comes_back_after_a_restart(h: &mut HostHarness) -> Outcome {
    let data = tempfile_dir()?;
    let dir = data.as_path();

    // The first host: opened, hidden, hibernated, patched while it sleeps.
    let (_parent, mut t) = vouched_host(h, dir)?;
    h.open(
        &mut t,
        "r",
        test_app("r", "<p></p>", PAGE_JS),
        Some(json!({"color": css(RED)})),
    )?;
    ensure!(
        h.wait(&mut t, |_, rec| painted(rec, "r").len() == 1),
        "r never painted"
    );
    let r = t.key("r").ok_or("no key for r")?;
    t.host.set_surface_visible(&r, false);
    ensure!(t.host.hibernate(&r), "the hidden Surface did not hibernate");
    ensure!(
        kept(dir)? == [("r".to_owned(), format!(r#"{{"color":"{}"}}"#, css(RED)))],
        "no record at hibernation: {:?}",
        kept(dir)?
    );
    t.send(t.agent.patch("r", json!({"color": css(PURPLE)})))?;
    h.settle(&mut t, Duration::from_millis(300));
    ensure!(
        kept(dir)? == [("r".to_owned(), format!(r#"{{"color":"{}"}}"#, css(PURPLE)))],
        "the record did not follow the patch: {:?}",
        kept(dir)?
    );
    h.shut_down(t)?;
    ensure!(kept(dir)?.len() == 1, "the record did not outlive its host");

    // The second host: the same identity establishes the conversation again.
    let (parent, mut t) = vouched_host(h, dir)?;
    t.send(t.agent.open("x", test_app("x", "<p></p>", ""), None))?;
    ensure!(
        h.wait(&mut t, |_, rec| !rec.events_named("restored").is_empty()),
        "no restored event"
    );
    let restored = t.rec.events_named("restored");
    ensure!(
        restored.len() == 1
            && restored[0]["instance_id"] == "r"
            && restored[0]["data"]["status"] == "open"
            && restored[0]["data"]["opened_by"] == "m1"
            && restored[0]["data"]["state_from"] == "m2",
        "restored: {restored:?}"
    );
    let r = t.key("r").ok_or("the restored Surface is not open")?;
    ensure!(
        t.host.is_hibernated(&r) && t.host.view(&r).is_none(),
        "the restored Surface is not hibernated"
    );
    // Shown, it wakes with the state of the last patch.
    t.host.set_surface_visible(&r, true);
    ensure!(
        h.wait(&mut t, |_, rec| painted(rec, "r").len() == 1),
        "the restored Surface never painted"
    );
    ensure!(
        painted(&t.rec, "r") == [css(PURPLE)],
        "it painted {:?}",
        painted(&t.rec, "r")
    );
    ensure!(
        shows(h, &mut t, &parent, PURPLE),
        "the restored Surface does not show its last state"
    );
    ensure!(
        kept(dir)?.is_empty(),
        "the record outlived the wake: {:?}",
        kept(dir)?
    );
    h.shut_down(t)
}

/// A new empty folder for the data directory, under the process's temporary folder.
fn tempfile_dir() -> Result<std::path::PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("lineup-restart-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    Ok(dir)
}

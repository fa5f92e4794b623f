//! The whole path in a real WebKitGTK webview under Xvfb: an agent's lineup.v1 envelope goes
//! through a [`Host`](lineup_host::Host) into an isolated webview, the page or the user
//! acts, the bridge posts, Rust validates, and the agent gets `ui.event` (or nothing). Every
//! scenario builds its own host on the one event loop of the process. Every negative security
//! check has a positive control: a message that does arrive, or the same bundle under a host
//! whose isolation was explicitly weakened.
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

mod idle;
mod isolation;
mod lifecycle;
mod views;

use idle::*;
use isolation::*;
use lifecycle::*;
use views::*;

use std::path::Path;
use std::rc::Rc;
use std::time::Duration;

use gtk::prelude::*;
use lineup_host::{HostBuilder, Refusal};
use lineup_host_core::{CloseReason, GoneReason};
use lineup_surface_runtime::DocumentOptions;
use lineup_tests::canary::Canary;
use lineup_tests::ensure;
use lineup_tests::home::{files_containing, private_home};
use lineup_tests::host_harness::{
    open_network, test_app, ui_events_in, weather_app, Agent, HostHarness, Note, Recorder,
    TestHost, BRIDGE_NAMESPACE,
};
use lineup_tests::procs::{kill, web_processes};
use lineup_tests::runner::Outcome;
use lineup_tests::x11::{xid_of, X11};
use serde_json::{json, Value};
use tao::dpi::LogicalSize;
use tao::window::WindowBuilder;

pub(crate) fn run() {
    let home = private_home("host_e2e");
    let mut h = HostHarness::start();
    let x = match X11::connect() {
        Ok(x) => x,
        Err(e) => {
            println!("no X display for the input scenarios: {e}");
            std::process::exit(1);
        }
    };
    h.run(
        "r_ui_3_open_ready_initial_state_reaches_on_state",
        open_ready_state,
    );
    h.run(
        "r_ui_6_r_ui_7_xtest_click_gives_exactly_the_weather_refresh_event",
        |h| weather_click(h, &x),
    );
    h.run("r_ui_3_r_ui_4_patch_replaces_the_whole_state", patch);
    h.run(
        "r_ui_1_r_ui_6_replace_sends_nothing_upstream_and_drops_the_old_pages_late_messages",
        replace,
    );
    h.run(
        "r_ui_5_agent_close_closes_the_view_and_sends_nothing",
        |h| agent_close(h, &x),
    );
    h.run(
        "r_ui_5_wm_delete_window_gives_exactly_one_close_event",
        |h| user_close(h, &x),
    );
    h.run(
        "r_ui_7_r_sec_4_bad_bridge_messages_dropped_and_a_valid_one_after_them_arrives",
        bad_messages,
    );
    h.run(
        "r_sec_4_r_sec_2a_srcdoc_subframe_post_is_its_own_surfaces_and_a_forged_instance_id_changes_nothing",
        subframe,
    );
    h.run(
        "r_sec_2_r_sec_3_csp_header_applied_on_the_load_and_origin_null",
        csp_applied,
    );
    h.run(
        "r_sec_3_loopback_fetch_rejected_and_unseen_unless_the_csp_is_removed",
        loopback_fetch,
    );
    h.run(
        "r_sec_2_r_ui_5_page_close_popup_download_permission_navigation_refused",
        |h| refusals(h, &x, &home),
    );
    h.run("r_sec_2_devtools_off_in_debug_profile", devtools);
    h.run(
        "r_sec_2_r_sec_4_two_surfaces_share_no_storage_or_channel",
        no_sharing,
    );
    h.run(
        "child_views_lay_out_two_surfaces_in_one_window_and_relayout_on_resize",
        |h| child_views(h, &x),
    );
    h.run(
        "r_sec_2_killed_web_process_reported_crashed_and_the_other_surface_keeps_working",
        crash,
    );
    h.run("r_env_4_a_flooding_page_cannot_starve_the_agent", flood);
    h.run(
        "idle_surface_of_a_disabled_app_closes_within_2_s_in_an_embedders_own_loop",
        idle_disabled_app_closes,
    );
    h.run(
        "an_idle_loop_with_nothing_due_is_not_woken",
        idle_loop_is_not_woken,
    );
    h.run(
        "r_std_7_an_expiry_seconds_away_wakes_an_embedders_idle_loop_on_time",
        expiry_on_an_idle_loop,
    );
    h.run(
        "r_ses_1_two_conversations_both_open_w1_and_each_sees_only_its_own_surface",
        two_conversations,
    );
    h.finish();
}

/// Reports every state the page receives as a `state` event.
const ECHO_STATE: &str = "LineUpSurface.onState(function (s) { post('state', s); });";

fn new_host(h: &mut HostHarness) -> Result<TestHost, String> {
    h.host(HostBuilder::new())
}

fn no_csp_host(h: &mut HostHarness) -> Result<TestHost, String> {
    h.host(HostBuilder::new().dangerous().without_csp())
}

/// The outbound messages noted after `mark`.
fn outbound_since(rec: &Recorder, mark: usize) -> Vec<Value> {
    rec.notes_since(mark)
        .into_iter()
        .filter_map(|n| match n {
            Note::Outbound(v) => Some(v),
            _ => None,
        })
        .collect()
}

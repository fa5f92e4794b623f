//! The warm pool (#12) in a real WebKitGTK webview: a Surface opened from the pool reaches
//! `ready` and is isolated exactly like a cold-opened one (the same CSP header enforced, opaque
//! origin, `eval` and storage blocked, own ephemeral context, sandboxed web process in its own
//! mount namespace), a pool view is never reused once its Surface closed, the pool refills after a
//! take but not before the taken view's page said `ready`, child views of an embedder's window
//! come from a pool of hidden child views, and size 0 disables it.
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

use std::collections::HashSet;
use std::rc::Rc;
use std::time::Duration;

use lineup_host::tao::dpi::LogicalSize;
use lineup_host::tao::window::WindowBuilder;

use lineup_host::HostBuilder;
use lineup_surface_runtime::DocumentOptions;
use lineup_tests::ensure;
use lineup_tests::home::private_home;
use lineup_tests::host_harness::{test_app, HostHarness, TestHost};
use lineup_tests::procs::{mount_namespace, web_processes};
use lineup_tests::runner::Outcome;
use lineup_tests::x11::{xid_of, X11};
use serde_json::json;

pub(crate) fn run() {
    private_home("pool");
    let mut h = HostHarness::start();
    h.run(
        "r_sec_2_r_sec_3_r_sec_8_pooled_open_is_isolated_like_a_cold_open",
        pooled_isolated,
    );
    h.run(
        "pooled_view_is_never_reused_and_the_pool_refills",
        never_reused,
    );
    h.run(
        "the_pool_is_not_refilled_while_a_taken_view_opens",
        no_refill_while_opening,
    );
    h.run(
        "a_child_view_comes_from_the_pool_isolated_where_it_is_placed_and_the_pool_refills",
        child_views,
    );
    h.run("warm_pool_0_disables_the_pool", disabled);
    h.finish();
}

/// The page of host_e2e's `csp_applied`: what its script may do, and the policy the engine
/// enforced on the load.
const POLICY_JS: &str = "
document.addEventListener('securitypolicyviolation', function (e) {
  post('violation', { directive: e.effectiveDirective, policy: e.originalPolicy, disposition: e.disposition });
});
var r = { origin: String(self.origin) };
try { eval('1'); r.eval = 'allowed'; } catch (e) { r.eval = 'blocked'; }
try { void localStorage.length; r.storage = 'allowed'; } catch (e) { r.storage = 'blocked'; }
post('policy', r);
";

/// A host with a pool of one, once its view has been started.
fn pooled_host(h: &mut HostHarness) -> Result<TestHost, String> {
    let mut t = h.host(HostBuilder::new().warm_pool(1))?;
    ensure!(
        h.wait(&mut t, |host, _| host.pooled_views() == 1),
        "the pool was not filled"
    );
    Ok(t)
}

fn pooled_isolated(h: &mut HostHarness) -> Outcome {
    let header = DocumentOptions::default()
        .csp()
        .map(|c| c.header_value())
        .ok_or("the default document has no CSP")?;
    let mut t = pooled_host(h)?;
    // Let the pool view's web process start and its document request reach the gate.
    h.settle(&mut t, Duration::from_millis(500));
    let before = web_processes();
    let key = h.open(
        &mut t,
        "csp",
        test_app("csp", "<p>csp</p>", POLICY_JS),
        None,
    )?;
    ensure!(
        t.host.pool_taken() == 1,
        "the Surface did not come from the pool"
    );
    let violation = h
        .expect_sandboxed(&mut t, "csp", true)?
        .ok_or("no violation")?;
    ensure!(
        violation
            == json!({ "directive": "script-src", "policy": header, "disposition": "enforce" }),
        "the enforced policy is not the header that was served: {violation}"
    );
    let view = t.host.view(&key).ok_or("no view")?;
    let hardening = view.hardening();
    ensure!(
        hardening.own_context
            && hardening.ephemeral
            && hardening.web_sandbox
            && !hardening.devtools
            && !hardening.popups_without_gesture
            && !hardening.clipboard_access
            && !hardening.console_to_stdout,
        "a pooled view is not hardened like a cold one: {hardening:?}"
    );
    // The pool view's web process started before the open: it is among those that existed
    // then, and (as the probe requires of every web process) not in the host's mount namespace.
    let own = mount_namespace("self")?;
    let sandboxed: HashSet<u32> = before
        .iter()
        .copied()
        .filter(|pid| mount_namespace(&pid.to_string()).is_ok_and(|ns| ns != own))
        .collect();
    ensure!(
        !sandboxed.is_empty() && sandboxed.len() == before.len(),
        "every web process (the pool view's among them) must be sandboxed: {before:?}"
    );
    h.shut_down(t)
}

/// With Surfaces as child views of the embedder's window, the pool's views wait hidden in
/// that window: a Surface takes one, is isolated like a cold one (the same policy in force),
/// shows at the bounds the delegate gave it (its pixels there, the window's beside it), the
/// window keeps its size, and the pool refills with another hidden child view.
fn child_views(h: &mut HostHarness) -> Outcome {
    let x = X11::connect().map_err(|e| e.to_string())?;
    let parent = Rc::new(
        WindowBuilder::new()
            .with_title("lineup pool children")
            .with_inner_size(LogicalSize::new(640u32, 400u32))
            .build(&h.event_loop)
            .map_err(|e| e.to_string())?,
    );
    let mut t = h.host(
        HostBuilder::new()
            .child_views_in(Rc::clone(&parent))
            .warm_pool(1),
    )?;
    ensure!(
        h.wait(&mut t, |host, _| host.pooled_views() == 1),
        "the pool was not filled with a child view"
    );
    h.settle(&mut t, Duration::from_millis(500));
    let xid = xid_of(&parent)?;
    let size = x.window_size(xid)?;
    let green = "document.documentElement.style.background = 'rgb(0, 192, 0)';\
                 document.body.style.height = '100vh';";
    let key = h.open(
        &mut t,
        "kid",
        test_app("kid", "<p></p>", &format!("{green}{POLICY_JS}")),
        None,
    )?;
    ensure!(
        t.host.pool_taken() == 1,
        "the child view did not come from the pool"
    );
    h.expect_sandboxed(&mut t, "kid", false)?;
    ensure!(
        t.host.view(&key).is_some_and(|v| v.hardening().own_context),
        "the pooled child view has no context of its own"
    );
    h.settle(&mut t, Duration::from_millis(500));
    // The default placement of one child view: the whole content area, from its top left.
    let (ox, oy) = x.window_origin(xid)?;
    let mut inside = [0; 3];
    let shows = h.wait(&mut t, |_, _| {
        inside = x.pixel(ox + 20, oy + 20).unwrap_or_default();
        inside[1] > 150 && inside[0] < 40
    });
    ensure!(
        shows,
        "the pooled child view's page is not on screen where it was placed: {inside:?}"
    );
    ensure!(
        x.window_size(xid)? == size,
        "the embedder's window changed size: {size:?} → {:?}",
        x.window_size(xid)?
    );
    ensure!(
        h.wait(&mut t, |host, _| host.pooled_views() == 1),
        "the pool was not refilled"
    );
    h.shut_down(t)
}

fn never_reused(h: &mut HostHarness) -> Outcome {
    let mut t = pooled_host(h)?;
    let app = test_app("reuse", "<p>reuse</p>", "");
    let first = h.open(&mut t, "s1", app.clone(), None)?;
    let first_url = t.host.view(&first).ok_or("no view")?.url().to_owned();
    ensure!(
        h.wait(&mut t, |host, _| host.pooled_views() == 1),
        "the pool did not refill after a take"
    );
    t.send(t.agent.close("s1", "completed"))?;
    ensure!(
        h.wait(&mut t, |host, _| host.surfaces().is_empty()),
        "s1 did not close"
    );
    let second = h.open(&mut t, "s2", app.clone(), None)?;
    let second_url = t.host.view(&second).ok_or("no view")?.url().to_owned();
    ensure!(
        t.host.pool_taken() == 2,
        "both Surfaces should have come from the pool, {} did",
        t.host.pool_taken()
    );
    ensure!(
        first_url != second_url,
        "a pool view (token {first_url}) was used twice"
    );
    ensure!(
        h.wait(&mut t, |host, _| host.pooled_views() == 1),
        "the pool did not refill after the second take"
    );
    h.shut_down(t)
}

/// A page whose top-level script runs for 1.5 s before the bridge can say `ready`.
const SLOW_READY_JS: &str = "var until = Date.now() + 1500; while (Date.now() < until) {}";

/// Starting a pool view takes the GTK thread and a core for tens of milliseconds; started while
/// the view just taken commits its document, it delays that open. So the pool is refilled only
/// after the taken view's page said `ready`. Positive control: the refill does happen, right
/// after that `ready`.
fn no_refill_while_opening(h: &mut HostHarness) -> Outcome {
    let mut t = pooled_host(h)?;
    let mark = t.rec.mark();
    t.send(
        t.agent
            .open("slow", test_app("slow", "<p>slow</p>", SLOW_READY_JS), None),
    )?;
    ensure!(
        h.wait(&mut t, |host, _| host.pool_taken() == 1),
        "the Surface did not come from the pool"
    );
    let ready = |rec: &lineup_tests::host_harness::Recorder| {
        rec.notes_since(mark).iter().any(
            |n| matches!(n, lineup_tests::host_harness::Note::Ready(k) if k.instance.as_str() == "slow"),
        )
    };
    let mut refilled_early = false;
    let opened_ready = h.wait(&mut t, |host, rec| {
        if ready(rec) {
            return true;
        }
        refilled_early |= host.pooled_views() > 0;
        false
    });
    ensure!(opened_ready, "the slow Surface never said ready");
    ensure!(
        !refilled_early,
        "a pool view was started while the taken view was still opening"
    );
    ensure!(
        h.wait(&mut t, |host, _| host.pooled_views() == 1),
        "the pool was not refilled after the taken view said ready"
    );
    h.shut_down(t)
}

fn disabled(h: &mut HostHarness) -> Outcome {
    let mut t = h.host(HostBuilder::new().warm_pool(0))?;
    h.settle(&mut t, Duration::from_millis(500));
    ensure!(t.host.pooled_views() == 0, "a pool of 0 started views");
    h.open(&mut t, "s1", test_app("cold", "<p>cold</p>", ""), None)?;
    h.settle(&mut t, Duration::from_millis(300));
    ensure!(
        t.host.pool_taken() == 0 && t.host.pooled_views() == 0,
        "a pool of 0 was used or filled"
    );
    h.shut_down(t)
}

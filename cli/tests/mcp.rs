//! `lineup mcp` against the official MCP Apps example servers, unmodified, started over stdio
//! (R-MCP-2, R-MCP-14): for each, `--list` shows a tool with a view, `--resource` reads that
//! view (`text/html;profile=mcp-app`, the bytes of the package's own `dist/mcp-app.html`), the
//! tool called with arguments valid for its input schema answers. A fake server
//! (`mcp/fake_server.mjs`) does what they never do: the refusals, the deprecated key, paging, the
//! client's declared extension. Show mode, each view in a real host under Xvfb: `mcp/shown.rs`.
//!
//! The servers come from the cache `scripts/mcp-servers.sh` fills (`scripts/setup.sh` runs it);
//! under CI (`CI=true`) a missing or stale cache fails these tests, elsewhere each says so and
//! checks nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

#[path = "support/screen.rs"]
mod screen;
#[path = "mcp/shown.rs"]
mod shown;

use std::ffi::OsString;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use lineup_host_core::mcp::ResourceDigest;
use serde_json::Value;

const LINEUP: &str = env!("CARGO_BIN_EXE_lineup");
const MIB: usize = 1024 * 1024;
const FIX: &str = "run `bash scripts/mcp-servers.sh` (it installs the pinned servers of \
                   tests/mcp-servers/package.json from the npm registry)";

/// The cache of `scripts/mcp-servers.sh`, checked to be made from the committed lock file.
struct Servers {
    dir: PathBuf,
}

impl Servers {
    /// The cache, or `None` (said on stderr) when it is missing outside CI.
    #[allow(clippy::print_stderr)] // names the missing cache to the developer who runs it
    fn locate() -> Option<Self> {
        let dir = std::env::var_os("LINEUP_MCP_SERVERS_DIR")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/lineup-mcp-servers"))
            })
            .unwrap_or_default();
        let committed =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp-servers/package-lock.json");
        let committed = std::fs::read(&committed).unwrap();
        let cached = std::fs::read(dir.join("package-lock.json")).ok();
        if dir.join("stamp").is_file() && cached.as_deref() == Some(&committed[..]) {
            return Some(Self { dir });
        }
        let problem = format!(
            "the MCP server cache {} is missing, unfinished or made from another \
             tests/mcp-servers/package-lock.json: {FIX}",
            dir.display()
        );
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{problem}");
        eprintln!("{problem}; nothing checked");
        None
    }

    /// `node …/dist/index.js --stdio` of the package.
    fn command(&self, package: &str) -> Vec<OsString> {
        let entry = self.package(package).join("dist/index.js");
        assert!(entry.is_file(), "{}: {FIX}", entry.display());
        vec![
            self.dir.join("bin/node").into(),
            entry.into(),
            "--stdio".into(),
        ]
    }

    fn package(&self, package: &str) -> PathBuf {
        self.dir
            .join("node_modules/@modelcontextprotocol")
            .join(package)
    }
}

/// `lineup mcp <flags> -- <server>`.
fn lineup_mcp(flags: &[&str], server: &[OsString]) -> Output {
    Command::new(LINEUP)
        .arg("mcp")
        .args(flags)
        .arg("--")
        .args(server)
        .output()
        .unwrap()
}

/// The JSON lines of a run that must succeed.
fn lines(out: &Output) -> Vec<Value> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "exit {:?}, stderr: {stderr}",
        out.status
    );
    assert!(stderr.is_empty(), "nothing on stderr: {stderr}");
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The one `error: …` line of a run that must fail.
fn refusal(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    let line = stderr.lines().last().unwrap_or_default().to_owned();
    assert!(line.starts_with("error: "), "a plain message: {stderr}");
    line
}

/// One official example server and what its test calls.
struct Example {
    package: &'static str,
    /// Its tool with a view, and arguments valid for that tool's input schema.
    tool: &'static str,
    args: &'static str,
    /// Its view's size, in bytes after decoding.
    view: RangeInclusive<usize>,
    /// A text the tool's result holds.
    result_holds: &'static str,
}

const SMALL_VIEW: RangeInclusive<usize> = MIB / 5..=MIB * 45 / 100;

fn check(example: &Example) {
    let Some(servers) = Servers::locate() else {
        return;
    };
    let server = servers.command(example.package);
    let name = example.package;

    let tools = lines(&lineup_mcp(&["--list"], &server));
    let tool = tools
        .iter()
        .find(|tool| tool["name"] == example.tool)
        .unwrap_or_else(|| panic!("{name}: no {} in {tools:?}", example.tool));
    let uri = tool["resourceUri"].as_str().unwrap_or_default().to_owned();
    assert!(uri.starts_with("ui://"), "{name}: {tool}");
    assert_eq!(
        tool["visibility"],
        serde_json::json!(["model", "app"]),
        "{name}"
    );

    let view = lines(&lineup_mcp(&["--resource"], &server));
    let view = &view[0];
    assert_eq!(
        view["uri"],
        uri.as_str(),
        "{name}: the first tool with a view"
    );
    assert_eq!(view["mimeType"], "text/html;profile=mcp-app", "{name}");
    let bytes = view["bytes"].as_u64().unwrap() as usize;
    assert!(
        example.view.contains(&bytes),
        "{name}: {bytes} bytes, not in {:?}",
        example.view
    );
    let file = std::fs::read(servers.package(example.package).join("dist/mcp-app.html")).unwrap();
    assert_eq!(bytes, file.len(), "{name}: the package's own view, whole");
    assert_eq!(
        view["sha256"],
        ResourceDigest::of(&file).to_string(),
        "{name}"
    );

    let call = ["--tool", example.tool, "--args", example.args];
    let result = lines(&lineup_mcp(&call, &server));
    let result = &result[0];
    assert!(
        result["content"].as_array().is_some_and(|c| !c.is_empty()),
        "{name}: {result}"
    );
    assert_ne!(result["isError"], true, "{name}: {result}");
    assert!(
        result.to_string().contains(example.result_holds),
        "{name}: {result}"
    );
}

#[test]
fn r_mcp_14_server_basic_vanillajs() {
    check(&Example {
        package: "server-basic-vanillajs",
        tool: "get-time",
        args: "{}",
        view: SMALL_VIEW,
        result_holds: "\"time\"",
    });
}

#[test]
fn r_mcp_14_server_basic_react() {
    check(&Example {
        package: "server-basic-react",
        tool: "get-time",
        args: "{}",
        view: SMALL_VIEW,
        result_holds: "\"text\"",
    });
}

#[test]
fn r_mcp_14_server_budget_allocator() {
    check(&Example {
        package: "server-budget-allocator",
        tool: "get-budget-data",
        args: "{}",
        view: SMALL_VIEW,
        result_holds: "Budget Allocator",
    });
}

#[test]
fn r_mcp_14_server_customer_segmentation() {
    check(&Example {
        package: "server-customer-segmentation",
        tool: "get-customer-data",
        args: r#"{"segment":"Enterprise"}"#,
        view: SMALL_VIEW,
        result_holds: r#"\"segment\":\"Enterprise\""#,
    });
}

#[test]
fn r_mcp_14_server_system_monitor() {
    check(&Example {
        package: "server-system-monitor",
        tool: "get-system-info",
        args: "{}",
        view: SMALL_VIEW,
        result_holds: "totalBytes",
    });
}

/// The view over R-ENV-4's 1 MiB (about 1.12 MiB), which the host takes by digest chunks.
#[test]
fn r_mcp_14_server_threejs() {
    check(&Example {
        package: "server-threejs",
        tool: "show_threejs_scene",
        args: r#"{"code":"const scene = new THREE.Scene();","height":300}"#,
        view: MIB..=MIB * 5 / 4,
        result_holds: "rendered",
    });
}

/// System monitor's `poll-system-stats` is for its view only (`_meta.ui.visibility: ["app"]`):
/// listed so, and still callable by name as the view would call it.
#[test]
fn r_mcp_2_an_app_only_tool_is_listed_as_app_only() {
    let Some(servers) = Servers::locate() else {
        return;
    };
    let server = servers.command("server-system-monitor");
    let tools = lines(&lineup_mcp(&["--list"], &server));
    let poll = tools
        .iter()
        .find(|tool| tool["name"] == "poll-system-stats");
    let poll = poll.unwrap_or_else(|| panic!("{tools:?}"));
    assert_eq!(poll["visibility"], serde_json::json!(["app"]), "{poll}");
    let stats = lines(&lineup_mcp(&["--tool", "poll-system-stats"], &server));
    assert!(stats[0].to_string().contains("usedPercent"), "{}", stats[0]);
}

/// The README's try-out (the `sh` block under "Showing MCP Apps", without its set-up and build
/// lines) prints what the README says it prints.
#[test]
fn the_readmes_try_out_lists_the_system_monitors_tools() {
    let Some(servers) = Servers::locate() else {
        return;
    };
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let readme = std::fs::read_to_string(readme).unwrap();
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Showing MCP Apps"));
    let block = section
        .and_then(|s| s.split("```sh\n").nth(1))
        .and_then(|rest| rest.split("\n```").next())
        .expect("a fenced sh block under `## Showing MCP Apps`");
    let script: Vec<String> = block
        .lines()
        .filter(|l| !l.starts_with("bash ") && !l.starts_with("cargo "))
        .map(|l| {
            l.replace("target/debug/lineup", LINEUP).replace(
                "~/.cache/lineup-mcp-servers",
                &servers.dir.to_string_lossy(),
            )
        })
        .collect();
    assert_eq!(script.len(), 2, "{script:?}");
    let out = Command::new("sh")
        .arg("-c")
        .arg(script.join("\n"))
        .output()
        .unwrap();
    let tools = lines(&out);
    let named = |name: &str| tools.iter().find(|t| t["name"] == name).cloned();
    let info = named("get-system-info").unwrap_or_else(|| panic!("{tools:?}"));
    assert!(
        info["resourceUri"]
            .as_str()
            .is_some_and(|u| u.starts_with("ui://")),
        "{info}"
    );
    let poll = named("poll-system-stats").unwrap_or_else(|| panic!("{tools:?}"));
    assert_eq!(poll["visibility"], serde_json::json!(["app"]), "{poll}");
}

/// `node fake_server.mjs <mode>`, on the cache's node when there is one.
fn fake(mode: &str) -> Vec<OsString> {
    let caches = [
        std::env::var_os("LINEUP_MCP_SERVERS_DIR").map(PathBuf::from),
        std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/lineup-mcp-servers")),
    ];
    let node = caches
        .into_iter()
        .flatten()
        .map(|dir| dir.join("bin/node"))
        .find(|node| node.exists())
        .map_or_else(|| OsString::from("node"), PathBuf::into_os_string);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/fake_server.mjs");
    vec![node, script.into(), mode.into()]
}

#[test]
fn r_mcp_2_initialize_declares_the_ui_extension() {
    let result = lines(&lineup_mcp(
        &["--tool", "echo-capabilities"],
        &fake("plain"),
    ));
    assert_eq!(
        result[0]["structuredContent"]["extensions"]["io.modelcontextprotocol/ui"],
        serde_json::json!({"mimeTypes": ["text/html;profile=mcp-app"]}),
        "{}",
        result[0]
    );
}

#[test]
fn r_mcp_3_every_page_is_listed_and_the_deprecated_key_is_read() {
    let tools = lines(&lineup_mcp(&["--list"], &fake("plain")));
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(
        names,
        [
            "echo-capabilities",
            "app-only",
            "old-key",
            "plain-html",
            "oversize",
            "fails"
        ]
    );
    assert_eq!(tools[2]["resourceUri"], "ui://blob", "{}", tools[2]);
    assert_eq!(tools[0]["resourceUri"], Value::Null);
    let endless = refusal(&lineup_mcp(&["--list"], &fake("endless")));
    assert!(
        endless.contains("tools/list ran past 64 pages"),
        "{endless}"
    );
}

/// The first tool with a view that a model may be offered: `app-only` comes first and is
/// skipped; the blob is decoded and the listing's `_meta.ui` taken, as the item has none.
#[test]
fn r_mcp_3_the_view_read_is_a_model_visible_tools_with_the_listings_ui_meta() {
    let view = lines(&lineup_mcp(&["--resource"], &fake("plain")));
    assert_eq!(view[0]["uri"], "ui://blob");
    assert_eq!(view[0]["bytes"], "<p>blob</p>".len());
    assert_eq!(view[0]["ui"], serde_json::json!({"prefersBorder": true}));
}

/// The refusal of `lineup mcp <flags>` against the fake server.
fn fake_refusal(flags: &[&str]) -> String {
    refusal(&lineup_mcp(flags, &fake("plain")))
}

#[test]
fn r_mcp_3_a_view_of_another_mime_type_is_refused() {
    let plain = fake_refusal(&["--resource", "--tool", "plain-html"]);
    let want = "\"ui://plain\" has MIME type \"text/html\", not text/html;profile=mcp-app";
    assert!(plain.contains(want), "{plain}");
    let none = fake_refusal(&["--resource", "--tool", "fails"]);
    assert!(none.contains("names no UI resource"), "{none}");
}

#[test]
fn r_mcp_4_a_view_one_byte_over_8_mib_is_refused_with_the_limit() {
    let over = fake_refusal(&["--resource", "--tool", "oversize"]);
    let want = "is 8388609 bytes after decoding, over the limit of 8388608 bytes";
    assert!(over.contains(want), "{over}");
}

#[test]
fn a_tool_error_result_is_printed_and_fails_the_run() {
    let out = lineup_mcp(&["--tool", "fails"], &fake("plain"));
    assert!(refusal(&out).contains("tool \"fails\" answered with isError"));
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed["isError"], true, "{printed}");
}

#[test]
fn bad_args_are_refused_before_any_server_starts() {
    // `/nonexistent` would fail to start: the refusal comes first.
    let none = [OsString::from("/nonexistent/server")];
    let array = refusal(&lineup_mcp(&["--tool", "x", "--args", "[1]"], &none));
    assert!(array.contains("--args must be a JSON object"), "{array}");
    let broken = refusal(&lineup_mcp(&["--tool", "x", "--args", "{"], &none));
    assert!(broken.contains("--args is not JSON"), "{broken}");
    let missing = refusal(&lineup_mcp(&["--list"], &none));
    assert!(
        missing.contains("cannot start the server \"/nonexistent/server\""),
        "{missing}"
    );
}

/// The server's stderr shows with --verbose only; without it, the error says so.
#[test]
fn the_servers_stderr_is_shown_on_verbose_only() {
    let quiet = lineup_mcp(&["--list"], &fake("crash"));
    let line = refusal(&quiet);
    assert!(line.contains("did not complete initialize"), "{line}");
    assert!(line.contains("--verbose"), "{line}");
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("crashed on purpose"));
    let verbose = lineup_mcp(&["--list", "--verbose"], &fake("crash"));
    refusal(&verbose);
    let stderr = String::from_utf8_lossy(&verbose.stderr);
    assert!(
        stderr.contains("fake server: crashed on purpose"),
        "{stderr}"
    );
}

#[test]
fn a_server_that_never_answers_is_given_up_on_with_the_limit() {
    let out = lineup_mcp(&["--tool", "fails", "--timeout-secs", "1"], &fake("silent"));
    let line = refusal(&out);
    assert!(
        line.contains("did not answer tools/call within 1 s"),
        "{line}"
    );
}

//! Runs the bridge script in Node.js against guest scripts that try to subvert it (R-UI-6,
//! R-SEC-4), and checks the exact messages it posts. The harness is `tests/bridge/harness.js`.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use lineup_host_core::{BridgeMessage, Limits, BRIDGE_NAMESPACE};
use lineup_surface_runtime::DeliveryKey;

/// The key of the bridge copy under test; the harness gets it on its command line.
const KEY: [u8; 16] = [0x7e; 16];

fn bridge_script() -> String {
    DeliveryKey::from_random_bytes(KEY).bridge_script()
}

/// What stands in [`EXPECTED`] for each document id a `ready` carried.
const DOCUMENT: &str = "0123456789abcdef0123456789abcdef";

/// `stdout` with each `ready`'s document id replaced by [`DOCUMENT`], once each id was checked
/// to be 32 lowercase hex digits, drawn anew for each document (R-UI-10).
fn with_documents_replaced(stdout: &str) -> String {
    const FIELD: &str = r#""document":""#;
    let mut seen = Vec::new();
    let mut out = String::new();
    let mut rest = stdout;
    while let Some(at) = rest.find(FIELD) {
        let (before, after) = rest.split_at(at + FIELD.len());
        out.push_str(before);
        let id = &after[..after.find('"').unwrap_or(after.len())];
        assert!(
            id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
            "document id {id:?}"
        );
        assert!(
            !seen.contains(&id.to_owned()),
            "document id {id} drawn twice"
        );
        seen.push(id.to_owned());
        out.push_str(DOCUMENT);
        rest = &after[id.len()..];
    }
    out.push_str(rest);
    assert_eq!(seen.len(), 4, "{stdout}");
    out
}

/// What reaches the host in each scenario of the harness, line by line: `webkit`/`ipc`/`console`
/// lines are strings posted on that channel (`console` ones behind the marker, `page console`
/// ones the page's own console output), `record` lines come from guest code, `reported` lines are
/// subscriber errors rethrown from a timer.
const EXPECTED: &str = r#"== tampering guest
listeners error/capture=true,unhandledrejection/capture=true,securitypolicyviolation/capture=true,DOMContentLoaded/capture=true
webkit {"namespace":"lineup.surface.v1","type":"event","event":"refresh","data":{"unit":"c"}}
record caught TypeError: LineUpSurface.event: the event name must be a string
record caught TypeError
record caught TypeError
webkit {"namespace":"lineup.surface.v1","type":"resize","height":240}
webkit {"namespace":"lineup.surface.v1","type":"event","event":"noData","data":{}}
-- DOMContentLoaded, twice
webkit {"namespace":"lineup.surface.v1","type":"ready","document":"0123456789abcdef0123456789abcdef"}
-- state 21
record first 21
webkit {"namespace":"lineup.surface.v1","type":"diagnostic","kind":"error","level":"error","message":"Error: subscriber threw"}
record once 21
record last 21
reported subscriber threw
-- late subscriber
(not yet)
record late 21
-- unsubscribe first and late, state 22
webkit {"namespace":"lineup.surface.v1","type":"diagnostic","kind":"error","level":"error","message":"Error: subscriber threw"}
record last 22
reported subscriber threw
== ipc channel, document already loaded
listeners 3
ipc {"namespace":"lineup.surface.v1","type":"event","event":"go","data":{"n":1}}
ipc {"namespace":"lineup.surface.v1","type":"ready","document":"0123456789abcdef0123456789abcdef"}
== console channel
console {"namespace":"lineup.surface.v1","type":"event","event":"go","data":{"p":"100%s"}}
page console mine %s x
console {"namespace":"lineup.surface.v1","type":"diagnostic","kind":"console","level":"debug","message":"mine %s x"}
console {"namespace":"lineup.surface.v1","type":"close_attempt"}
console {"namespace":"lineup.surface.v1","type":"ready","document":"0123456789abcdef0123456789abcdef"}
== no channel
record no throw
== bridge evaluated twice
webkit {"namespace":"lineup.surface.v1","type":"ready","document":"0123456789abcdef0123456789abcdef"}
== forged deliveries
record key in sources false
record state {"real":1}
== state as sent
record keys 10,b,__proto__,constructor,prototype,a,t
record own __proto__ true
record prototype is Object.prototype true
record inherited x undefined
record text 3 119070 8232
== subscribe between two states
record got 2
record next got 2
"#;

#[test]
fn r_ui_6_bridge_posts_exact_messages_despite_a_tampering_guest() {
    let harness = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bridge/harness.js");
    let key: String = KEY.iter().map(|b| format!("{b:02x}")).collect();
    let mut child = match Command::new("node")
        .arg(&harness)
        .arg(key)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => panic!(
            "node (Node.js 18 or later) is required to test the bridge script (R-UI-6) and could \
             not be started: {e}; the project's setup script installs nodejs"
        ),
    };
    let mut stdin = child.stdin.take().expect("stdin was piped");
    stdin
        .write_all(bridge_script().as_bytes())
        .expect("node reads the bridge from stdin");
    drop(stdin);
    let output = child.wait_with_output().expect("node runs to completion");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the bridge harness failed ({}):\n{}\n{stdout}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(with_documents_replaced(&stdout), EXPECTED);
}

/// The bridge and the host's decoder agree: every message the bridge posted in the harness is one
/// the host accepts (R-UI-6, R-SEC-4).
#[test]
fn r_ui_6_every_posted_message_decodes_in_host_core() {
    assert!(bridge_script().contains(&format!("'{BRIDGE_NAMESPACE}'")));
    let posted: Vec<&str> = EXPECTED
        .lines()
        .filter_map(|line| {
            line.strip_prefix("webkit ")
                .or_else(|| line.strip_prefix("ipc "))
        })
        .collect();
    assert_eq!(posted.len(), 9);
    for message in posted {
        if let Err(e) = BridgeMessage::decode(message, &Limits::default()) {
            panic!("host-core refuses {message}: {e}");
        }
    }
}

#[test]
fn r_ui_6_typescript_declaration_names_the_bridge() {
    let dts = include_str!("../lineup-surface.d.ts");
    assert!(dts.contains("declare const LineUpSurface"));
    for method in [
        "event(name: string",
        "onState<",
        "callback: (state: State) => void",
        "resize(height: number)",
    ] {
        assert!(dts.contains(method), "lineup-surface.d.ts lacks {method:?}");
    }
}

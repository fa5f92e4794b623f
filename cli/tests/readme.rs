//! README.md says what is true (#7 item 9), where that can be checked mechanically: every
//! built-in capability the host offers is in its table with the risk the code declares, and
//! every `lineup` flag it names is an option of the command it names it for, as the real
//! binary's `--help` lists them. Each check has a positive control: a README changed to say
//! something false fails it.
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use lineup_host::Builtin;

const LINEUP: &str = env!("CARGO_BIN_EXE_lineup");

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap()
}

// ---- built-in capabilities ----

/// The rows of the table under `## Built-in capabilities`: name → risk, as written.
fn builtin_table(text: &str) -> BTreeMap<String, String> {
    let section = text
        .split("\n## ")
        .find(|s| s.starts_with("Built-in capabilities"))
        .expect("a `## Built-in capabilities` section");
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|row| {
            let cells: Vec<&str> = row.split('|').map(|c| c.trim().trim_matches('`')).collect();
            (cells[1].to_owned(), cells[2].to_owned())
        })
        .collect()
}

/// What the README's table gets wrong about the built-ins.
fn builtin_problems(text: &str) -> Vec<String> {
    let table = builtin_table(text);
    let mut problems = Vec::new();
    for builtin in Builtin::ALL {
        let risk = serde_json::to_value(builtin.risk()).unwrap();
        let risk = risk.as_str().unwrap();
        match table.get(builtin.name()) {
            None => problems.push(format!("{} is not in the table", builtin.name())),
            Some(written) if written != risk => problems.push(format!(
                "{} is written {written}, but its risk is {risk}",
                builtin.name()
            )),
            Some(_) => {}
        }
    }
    for name in table.keys() {
        if Builtin::from_name(name).is_none() {
            problems.push(format!("{name} is in the table but is no built-in"));
        }
    }
    problems
}

#[test]
fn r_cap_2_the_readme_lists_every_built_in_with_the_risk_the_code_declares() {
    assert_eq!(builtin_problems(&readme()), Vec::<String>::new());
    // Positive controls: a wrong risk, a missing row and an extra row are found.
    let text = readme();
    let wrong = text.replace(
        "| `device.pick_file` | `system_permission` |",
        "| `device.pick_file` | `user_confirmation` |",
    );
    assert_ne!(wrong, text);
    assert_eq!(builtin_problems(&wrong).len(), 1, "{wrong}");
    let missing: String = text
        .lines()
        .filter(|l| !l.starts_with("| `clipboard.write`"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(builtin_problems(&missing).len(), 1);
    let extra = text.replace(
        "| `app.open_url` |",
        "| `shell.exec` | `restricted` | | |\n| `app.open_url` |",
    );
    assert_eq!(builtin_problems(&extra).len(), 1);
}

// ---- flags ----

/// Programs other than `lineup` that the README shows with flags (by name or path); theirs are
/// not checked.
const OTHER_PROGRAMS: [&str; 8] = [
    "cargo",
    "node",
    "lineup-bench",
    "xvfb-run",
    "sudo",
    "dnf",
    "pacman",
    "apt-get",
];

/// Every `--flag` of the README with the `lineup` command it is written for: the command named
/// last before it (`lineup host`, `lineup apps install`, …), `None` when the text named no
/// command yet or `lineup` alone. Flags written after another program's name are left out, and
/// so are `--lineup-…`, the host's CSS custom properties.
fn flags(text: &str, with_subcommands: &BTreeSet<String>) -> BTreeSet<(Option<String>, String)> {
    let words: Vec<&str> = text
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !(c.is_ascii_alphanumeric() || "-/_.$~".contains(c))))
        .collect();
    let is_word = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase());
    // `Some(None)`: another program; `None`: no command named.
    let mut command: Option<Option<String>> = None;
    let mut found = BTreeSet::new();
    for (i, word) in words.iter().enumerate() {
        if ["lineup", "target/release/lineup", "target/debug/lineup"].contains(word) {
            let first = words.get(i + 1).copied().unwrap_or_default();
            let second = words.get(i + 2).copied().unwrap_or_default();
            let second = second.split('|').next().unwrap_or_default();
            command = if !is_word(first) {
                None
            } else if with_subcommands.contains(first) && is_word(second) {
                Some(Some(format!("{first} {second}")))
            } else {
                Some(Some(first.to_owned()))
            };
        } else if OTHER_PROGRAMS.contains(&word.rsplit('/').next().unwrap_or_default()) {
            command = Some(None);
        } else if let Some(rest) = word.strip_prefix("--") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
                .collect();
            match &command {
                _ if !name.starts_with(|c: char| c.is_ascii_lowercase())
                    || name.starts_with("lineup-") => {}
                Some(None) => {}
                Some(Some(c)) => {
                    found.insert((Some(c.clone()), format!("--{name}")));
                }
                None => {
                    found.insert((None, format!("--{name}")));
                }
            }
        }
    }
    found
}

/// The options `lineup <command> --help` lists (the lines that start with `-`).
fn options(command: &str) -> BTreeSet<String> {
    let out = Command::new(LINEUP)
        .args(command.split(' '))
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "lineup {command} --help failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('-'))
        .flat_map(|l| {
            l.split([' ', ',', '='])
                .filter(|w| w.starts_with("--"))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The top-level commands that have subcommands (`lineup apps install`), from `lineup --help`.
fn commands_with_subcommands() -> BTreeSet<String> {
    let out = Command::new(LINEUP).arg("--help").output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let commands = help
        .split("Commands:")
        .nth(1)
        .and_then(|s| s.split("\n\n").next())
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect::<Vec<_>>();
    assert!(commands.contains(&"host".to_owned()), "{help}");
    commands
        .into_iter()
        .filter(|c| {
            let out = Command::new(LINEUP).args([c, "--help"]).output().unwrap();
            String::from_utf8_lossy(&out.stdout).contains("\nCommands:")
        })
        .collect()
}

/// The README's flags that are not options of the command they are written for.
fn flag_problems(text: &str, with_subcommands: &BTreeSet<String>) -> Vec<String> {
    let mut help: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut problems = Vec::new();
    for (command, flag) in flags(text, with_subcommands) {
        let Some(command) = command else {
            problems.push(format!("{flag} is written for no `lineup` command"));
            continue;
        };
        let options = help
            .entry(command.clone())
            .or_insert_with(|| options(&command));
        if !options.contains(&flag) {
            problems.push(format!("`lineup {command}` has no {flag}"));
        }
    }
    problems
}

#[test]
fn every_flag_the_readme_names_is_an_option_of_its_command() {
    let with_subcommands = commands_with_subcommands();
    assert!(with_subcommands.contains("apps"), "{with_subcommands:?}");
    let text = readme();
    let found = flags(&text, &with_subcommands);
    // The README's own examples are among them, each with its command.
    for (command, flag) in [
        ("host", "--stdio"),
        ("host", "--enable"),
        ("host", "--outbound-queue"),
        ("host", "--bundle-policy"),
        ("apps install", "--stall-timeout"),
        ("preview", "--screenshot"),
    ] {
        assert!(
            found.contains(&(Some(command.to_owned()), flag.to_owned())),
            "{command} {flag} not found: {found:?}"
        );
    }
    assert_eq!(
        flag_problems(&text, &with_subcommands),
        Vec::<String>::new()
    );
    // Positive controls: a flag no command has, and one written for the wrong command.
    let wrong = format!("{text}\n`lineup host --no-such-flag`; `lineup preview --enable`\n");
    assert_eq!(
        flag_problems(&wrong, &with_subcommands),
        [
            "`lineup host` has no --no-such-flag",
            "`lineup preview` has no --enable"
        ]
    );
}

// ---- standard components ----

/// The `ui.open` payloads of the README's `## Standard components` section, one per line.
fn component_examples(text: &str) -> Vec<serde_json::Value> {
    let section = text
        .split("\n## ")
        .find(|s| s.starts_with("Standard components"))
        .expect("a `## Standard components` section");
    let block = section
        .split("```jsonl\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a jsonl block of payloads");
    block
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn r_std_1_every_component_example_of_the_readme_opens_and_the_catalog_is_covered() {
    use lineup_host_core::{
        ComponentEffect, ComponentKind, ComponentSet, Effect, PartyId, Session, SessionConfig,
    };
    struct Still;
    impl lineup_host_core::Clock for Still {
        fn monotonic(&self) -> std::time::Duration {
            std::time::Duration::ZERO
        }
    }
    let mut config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
    config.standard_components = ComponentSet::all_v1();
    let mut session = Session::new(config, Box::new(Still)).unwrap();
    let mut shown = BTreeSet::new();
    for (i, payload) in component_examples(&readme()).into_iter().enumerate() {
        let envelope = serde_json::json!({"v": 1, "id": format!("m-{i}"),
            "type": "lineup.v1.ui.open", "conversation_id": "c1",
            "sender": {"kind": "agent", "id": "a1"}, "payload": payload});
        let effects = session.handle_inbound(envelope.to_string().as_bytes());
        let kind = effects.iter().find_map(|e| match e {
            Effect::Component(ComponentEffect::Show(s)) => Some(s.kind),
            _ => None,
        });
        let kind = kind.unwrap_or_else(|| panic!("example {i} did not open: {effects:?}"));
        shown.insert(kind.as_str());
    }
    let catalog: BTreeSet<&str> = ComponentKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(shown, catalog, "the README shows one example per component");
}

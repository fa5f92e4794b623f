//! `lineup grants list|revoke`: the remembered "always" answers, per vouched agent (R-CAP-3).

use std::io::{self, Write};

use clap::{Args, Subcommand};
use lineup_store::{GrantKey, RevokeScope};

use crate::data::{DataDirArg, Failure, Shown, EXIT_CODES};

/// See and revoke remembered consent ("always") of agents.
#[derive(Debug, Args)]
#[command(after_help = EXIT_CODES)]
pub(crate) struct GrantsArgs {
    #[command(subcommand)]
    command: GrantsCommand,
    #[command(flatten)]
    data_dir: DataDirArg,
}

#[derive(Debug, Subcommand)]
enum GrantsCommand {
    /// List remembered grants, by agent, capability and version.
    #[command(after_help = EXIT_CODES)]
    List {
        /// Only this agent's grants.
        #[arg(long, value_name = "ID")]
        agent: Option<String>,
        /// Print a JSON array of {agent, capability, version, granted_at}.
        #[arg(long)]
        json: bool,
    },
    /// Forget grants; a running host asks again at its next decision.
    #[command(after_help = EXIT_CODES)]
    Revoke {
        /// The agent whose grants to forget (all of them, unless --capability narrows it).
        #[arg(long, value_name = "ID")]
        agent: String,
        /// Only grants of this capability.
        #[arg(long, value_name = "NAME")]
        capability: Option<String>,
        /// Only this version of the capability.
        #[arg(long = "version", value_name = "V", requires = "capability")]
        capability_version: Option<String>,
    },
}

/// Runs `lineup grants …`.
pub(crate) fn run(args: GrantsArgs) -> Result<(), Failure> {
    let store = args.data_dir.open()?;
    let mut out = io::stdout().lock();
    match args.command {
        GrantsCommand::List { agent, json } => {
            let grants = store
                .grants()
                .list(agent.as_deref())
                .map_err(Failure::store)?;
            if json {
                serde_json::to_writer(&mut out, &grants)
                    .map_err(|e| Failure::io("stdout", e.into()))?;
                writeln!(out).map_err(|e| Failure::io("stdout", e))?;
            } else if grants.is_empty() {
                match &agent {
                    Some(agent) => writeln!(out, "no remembered grants for agent {}", Shown(agent)),
                    None => writeln!(out, "no remembered grants"),
                }
                .map_err(|e| Failure::io("stdout", e))?;
            } else {
                let rows: Vec<[String; 4]> = grants
                    .iter()
                    .map(|g| {
                        [
                            Shown(&g.key.agent).to_string(),
                            Shown(&g.key.capability).to_string(),
                            Shown(&g.key.version).to_string(),
                            g.granted_at.clone(),
                        ]
                    })
                    .collect();
                table(
                    &mut out,
                    ["AGENT", "CAPABILITY", "VERSION", "GRANTED AT"],
                    &rows,
                )
                .map_err(|e| Failure::io("stdout", e))?;
            }
        }
        GrantsCommand::Revoke {
            agent,
            capability,
            capability_version,
        } => {
            let scope = match (capability, capability_version) {
                (None, _) => RevokeScope::Agent(agent),
                (Some(capability), None) => RevokeScope::Capability { agent, capability },
                (Some(capability), Some(version)) => {
                    RevokeScope::Exact(GrantKey::new(agent, capability, version))
                }
            };
            let removed = store.grants().revoke(&scope).map_err(Failure::store)?;
            let what = match &scope {
                RevokeScope::Agent(agent) => format!("agent {}", Shown(agent)),
                RevokeScope::Capability { agent, capability } => {
                    format!("agent {} capability {}", Shown(agent), Shown(capability))
                }
                RevokeScope::Exact(key) => format!(
                    "agent {} capability {} version {}",
                    Shown(&key.agent),
                    Shown(&key.capability),
                    Shown(&key.version)
                ),
            };
            match removed {
                0 => writeln!(out, "no grant matched {what}"),
                1 => writeln!(out, "revoked 1 grant of {what}"),
                n => writeln!(out, "revoked {n} grants of {what}"),
            }
            .map_err(|e| Failure::io("stdout", e))?;
        }
    }
    Ok(())
}

/// Writes rows under a header, in left-aligned columns.
fn table<const N: usize>(
    out: &mut impl Write,
    header: [&str; N],
    rows: &[[String; N]],
) -> io::Result<()> {
    let mut widths = header.map(|h| h.chars().count());
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; N]| {
        let mut text = String::new();
        for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
            if i + 1 == N {
                text.push_str(cell);
            } else {
                text.push_str(&format!("{cell:<width$}  "));
            }
        }
        text
    };
    writeln!(out, "{}", line(header))?;
    for row in rows {
        writeln!(out, "{}", line(row.each_ref().map(String::as_str)))?;
    }
    Ok(())
}

//! `lineup capabilities list|hide|show|withdraw|restore`: the operator's capability policy in
//! the data directory, which running hosts pick up within a second (R-INV-1, R-INV-4).

use std::io::{self, Write};

use clap::{Args, Subcommand};

use crate::data::{DataDirArg, Failure, Shown, EXIT_CODES};

/// Withdraw capabilities from every agent or hide them from one; running hosts on the data
/// directory apply it within a second, and each affected session gets a new inventory.
#[derive(Debug, Args)]
#[command(after_help = EXIT_CODES)]
pub(crate) struct PolicyArgs {
    #[command(subcommand)]
    command: PolicyCommand,
    #[command(flatten)]
    data_dir: DataDirArg,
}

#[derive(Debug, Subcommand)]
enum PolicyCommand {
    /// List the rules: withdrawn capabilities, and capabilities hidden from an agent.
    #[command(after_help = EXIT_CODES)]
    List {
        /// Print a JSON array of {agent, capability, since} (agent null: withdrawn).
        #[arg(long)]
        json: bool,
    },
    /// Hide a capability from one vouched agent (`--agent-id` of its host): it is no longer
    /// listed for it, and a call to it is answered `revoked`.
    #[command(after_help = EXIT_CODES)]
    Hide {
        /// The vouched agent identity.
        #[arg(long, value_name = "ID")]
        agent: String,
        /// The capability's name.
        name: String,
    },
    /// Show a capability hidden with `hide` to that agent again.
    #[command(after_help = EXIT_CODES)]
    Show {
        /// The vouched agent identity.
        #[arg(long, value_name = "ID")]
        agent: String,
        /// The capability's name.
        name: String,
    },
    /// Withdraw a capability from every agent: running hosts stop offering it (a call to it is
    /// answered `revoked`), and hosts started later never offer it, until `restore`.
    #[command(after_help = EXIT_CODES)]
    Withdraw {
        /// The capability's name.
        name: String,
    },
    /// Lift a `withdraw`: hosts started from now on offer the capability again (a running host
    /// that withdrew it offers it again once restarted).
    #[command(after_help = EXIT_CODES)]
    Restore {
        /// The capability's name.
        name: String,
    },
}

/// Runs `lineup capabilities …`.
pub(crate) fn run(args: PolicyArgs) -> Result<(), Failure> {
    let store = args.data_dir.open()?;
    let mut out = io::stdout().lock();
    let said = |out: &mut dyn Write, text: String| {
        writeln!(out, "{text}").map_err(|e| Failure::io("stdout", e))
    };
    match args.command {
        PolicyCommand::List { json } => {
            let rules = store.policy().list().map_err(Failure::store)?;
            if json {
                serde_json::to_writer(&mut out, &rules)
                    .map_err(|e| Failure::io("stdout", e.into()))?;
                return said(&mut out, String::new());
            }
            if rules.is_empty() {
                return said(&mut out, "no capability is withdrawn or hidden".into());
            }
            for rule in rules {
                let whom = match &rule.agent {
                    None => "withdrawn from every agent".to_owned(),
                    Some(agent) => format!("hidden from agent {}", Shown(agent)),
                };
                said(
                    &mut out,
                    format!(
                        "{:<32} {whom} since {}",
                        Shown(&rule.capability).to_string(),
                        rule.since
                    ),
                )?;
            }
            Ok(())
        }
        PolicyCommand::Hide { agent, name } => {
            let new = store
                .policy()
                .restrict(Some(&agent), &name)
                .map_err(Failure::store)?;
            let done = if new { "hidden" } else { "already hidden" };
            said(
                &mut out,
                format!("{} {done} from agent {}", Shown(&name), Shown(&agent)),
            )
        }
        PolicyCommand::Show { agent, name } => {
            let lifted = store
                .policy()
                .lift(Some(&agent), &name)
                .map_err(Failure::store)?;
            let done = if lifted {
                "shown again to"
            } else {
                "was not hidden from"
            };
            said(
                &mut out,
                format!("{} {done} agent {}", Shown(&name), Shown(&agent)),
            )
        }
        PolicyCommand::Withdraw { name } => {
            let new = store
                .policy()
                .restrict(None, &name)
                .map_err(Failure::store)?;
            let done = if new {
                "withdrawn"
            } else {
                "already withdrawn"
            };
            said(
                &mut out,
                format!("{} {done} from every agent", Shown(&name)),
            )
        }
        PolicyCommand::Restore { name } => {
            let lifted = store.policy().lift(None, &name).map_err(Failure::store)?;
            let done = if lifted {
                "restored: hosts started from now on offer it"
            } else {
                "was not withdrawn"
            };
            said(&mut out, format!("{} {done}", Shown(&name)))
        }
    }
}

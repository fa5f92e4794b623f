//! `lineup audit verify|export`: check the chained audit log and hand it to a gateway (R-CAP-6).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use clap::{Args, Subcommand};
use lineup_store::{Sha256Hex, StoreError};

use crate::data::{DataDirArg, Failure, EXIT_BAD_AUDIT, EXIT_CODES, EXIT_USAGE};

/// Verify or export the audit log of app calls and consent decisions.
#[derive(Debug, Args)]
#[command(after_help = EXIT_CODES)]
pub(crate) struct AuditArgs {
    #[command(subcommand)]
    command: AuditCommand,
    #[command(flatten)]
    data_dir: DataDirArg,
}

#[derive(Debug, Subcommand)]
enum AuditCommand {
    /// Walk the chain of digests from the first record; print the count and the head digest.
    ///
    /// An edited record, a record removed from the middle and a broken link are found and
    /// named by sequence number. Records cut off the end, or a log rewritten whole, are only
    /// found against a head digest kept elsewhere: keep the printed head, and pass it to a
    /// later run with --expect-head.
    #[command(after_help = EXIT_CODES)]
    Verify {
        /// A head digest printed by an earlier verify: it must still be in the chain.
        #[arg(long, value_name = "DIGEST")]
        expect_head: Option<String>,
    },
    /// Write every record as one JSON line (keys in canonical order, then `digest`).
    #[command(after_help = EXIT_CODES)]
    Export {
        /// Write to this file instead of stdout (created or truncated).
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

/// Runs `lineup audit …`.
pub(crate) fn run(args: AuditArgs) -> Result<(), Failure> {
    // A malformed --expect-head is a usage error, found before the store is opened.
    let expect_head = match &args.command {
        AuditCommand::Verify {
            expect_head: Some(text),
        } => Some(Sha256Hex::try_from(text.as_str()).map_err(|e| Failure {
            code: EXIT_USAGE,
            message: format!("--expect-head: {e}"),
        })?),
        _ => None,
    };
    let store = args.data_dir.open()?;
    match args.command {
        AuditCommand::Verify { .. } => {
            let head = store.audit().verify().map_err(|e| bad_chain(&store, e))?;
            let found = match &expect_head {
                // The empty log's head (64 zeros) is where every chain starts: record 0.
                Some(digest) if *digest == Sha256Hex::zero() => Some(0),
                Some(digest) => store.audit().seq_of(digest).map_err(Failure::store)?,
                None => None,
            };
            let mut out = io::stdout().lock();
            let stdout = |e| Failure::io("stdout", e);
            let noun = if head.count == 1 { "record" } else { "records" };
            writeln!(out, "audit chain ok: {} {noun}", head.count).map_err(stdout)?;
            writeln!(out, "head: {}", head.head).map_err(stdout)?;
            match (expect_head, found) {
                (None, _) => writeln!(
                    out,
                    "keep the head elsewhere: a cut or rewritten log only shows against it (--expect-head)"
                )
                .map_err(stdout)?,
                (Some(_), Some(0)) => {
                    writeln!(out, "expected head is the empty log's: every chain starts there")
                        .map_err(stdout)?;
                }
                (Some(_), Some(seq)) => {
                    writeln!(out, "expected head found at record {seq}").map_err(stdout)?;
                }
                (Some(expected), None) => {
                    return Err(Failure {
                        code: EXIT_BAD_AUDIT,
                        message: format!(
                            "{}: the expected head {expected} is not in the audit chain: \
                             records were cut off the end or the log was rewritten",
                            store.path().display()
                        ),
                    });
                }
            }
        }
        AuditCommand::Export { output } => match output {
            Some(path) => {
                let file =
                    File::create(&path).map_err(|e| Failure::io(&path.display().to_string(), e))?;
                let count = store
                    .audit()
                    .export(BufWriter::new(file))
                    .map_err(Failure::store)?;
                writeln!(
                    io::stderr().lock(),
                    "exported {count} audit records to {}",
                    path.display()
                )
                .map_err(|e| Failure::io("stderr", e))?;
            }
            None => {
                store
                    .audit()
                    .export(io::stdout().lock())
                    .map_err(Failure::store)?;
            }
        },
    }
    Ok(())
}

/// Exit code 1 for a broken chain (naming the file and the record), 3 for anything else.
fn bad_chain(store: &lineup_store::Store, error: StoreError) -> Failure {
    match error.audit_seq() {
        Some(seq) => Failure {
            code: EXIT_BAD_AUDIT,
            message: format!(
                "{}: audit verification failed at record {seq}: {error}",
                store.path().display()
            ),
        },
        None => Failure::store(error),
    }
}

//! What the store commands share: the `--data-dir` option, opening the store, exit codes and
//! printing strings that came from agents.

use std::fmt;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use lineup_store::{Store, StoreError};

/// The exit codes of `lineup grants` and `lineup audit`, as `--help` lists them.
pub(crate) const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  lineup audit verify: a record is edited, missing or unlinked (its sequence number is printed),
     or the --expect-head digest is not in the chain
  2  usage error
  3  the store cannot be opened or read (none in the data directory, newer schema, I/O error)";

/// Exit code 1: the audit chain is broken.
pub(crate) const EXIT_BAD_AUDIT: u8 = 1;
/// Exit code 2: usage error (clap's own code for one).
pub(crate) const EXIT_USAGE: u8 = 2;
/// Exit code 3: the store cannot be opened or read.
pub(crate) const EXIT_STORE: u8 = 3;

/// `--data-dir`, shared by the store commands.
#[derive(Debug, Args)]
pub(crate) struct DataDirArg {
    /// The host's data directory [default: $XDG_DATA_HOME/lineup, or ~/.local/share/lineup].
    #[arg(long, value_name = "DIR", global = true)]
    data_dir: Option<PathBuf>,
}

impl DataDirArg {
    /// Opens the store of the data directory, which must exist: a mistyped directory is an
    /// error, not a new empty store.
    pub(crate) fn open(&self) -> Result<Store, Failure> {
        let dir = match &self.data_dir {
            Some(dir) => dir.clone(),
            None => lineup_store::default_data_dir().map_err(Failure::store)?,
        };
        Store::open_existing(dir).map_err(Failure::store)
    }

    /// Opens the store of the data directory, creating it on first use: for `lineup apps
    /// install`, which an integrator may run before any host has.
    pub(crate) fn open_or_create(&self) -> Result<Store, Failure> {
        let dir = match &self.data_dir {
            Some(dir) => dir.clone(),
            None => lineup_store::default_data_dir().map_err(Failure::store)?,
        };
        Store::open(dir).map_err(Failure::store)
    }
}

/// A store command that did not succeed: what to say on stderr and the exit code.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) code: u8,
    pub(crate) message: String,
}

impl Failure {
    /// Exit code 3 with the store's error.
    pub(crate) fn store(error: StoreError) -> Self {
        Self {
            code: EXIT_STORE,
            message: error.to_string(),
        }
    }

    /// Exit code 3 for an I/O error while writing `what`.
    pub(crate) fn io(what: &str, error: io::Error) -> Self {
        Self {
            code: EXIT_STORE,
            message: format!("cannot write {what}: {error}"),
        }
    }

    /// Says why on stderr and returns the exit code.
    pub(crate) fn report(self) -> ExitCode {
        let _ = writeln!(io::stderr().lock(), "lineup: error: {}", self.message);
        ExitCode::from(self.code)
    }
}

/// A string from the store (an agent id, a capability name) shown on a terminal: as is, or
/// quoted and escaped when it holds control characters, so it cannot move the cursor or
/// change colours.
pub(crate) struct Shown<'a>(pub(crate) &'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.chars().any(char::is_control) {
            write!(f, "{:?}", self.0)
        } else {
            f.write_str(self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_before_they_reach_a_terminal() {
        assert_eq!(Shown("agent-1").to_string(), "agent-1");
        assert_eq!(Shown("a\u{1b}[2Jb").to_string(), "\"a\\u{1b}[2Jb\"");
        assert_eq!(Shown("x\ny").to_string(), "\"x\\ny\"");
    }
}

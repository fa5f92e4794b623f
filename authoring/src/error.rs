//! What went wrong reading an author's files.

use std::path::PathBuf;

/// What went wrong reading a bundle folder; each message names the file (and where known its
/// line and column) and hints at the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthoringError {
    /// A file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file's content is refused, at `file:line:col` when known.
    #[error("{at}: {reason}")]
    Refused {
        /// `index.html:1:1`, `script.js:3:14`, `state.json`, an option name.
        at: String,
        /// Why, with the rule and the fix.
        reason: String,
    },
    /// The script does not parse as the classic script the host runs it as: the page would
    /// stop with a `SyntaxError` that the engine reports only as `Script error.` (R-UI-6a).
    #[error("{file}:{error}")]
    Syntax {
        /// `script.js`, or a package's script file.
        file: String,
        /// Where and why.
        error: crate::SyntaxError,
    },
}

pub(crate) fn refused(at: impl Into<String>, reason: impl Into<String>) -> AuthoringError {
    AuthoringError::Refused {
        at: at.into(),
        reason: reason.into(),
    }
}

//! An author's source files: read as UTF-8, scripts parsed as the engine would (R-UI-6a).

use std::path::Path;

use crate::error::{refused, AuthoringError};

pub(crate) fn read_text(path: &Path, required: bool) -> Result<String, AuthoringError> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|e| {
            refused(
                path.display().to_string(),
                format!(
                    "is not UTF-8 (byte {}); save it as UTF-8",
                    e.utf8_error().valid_up_to()
                ),
            )
        }),
        Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(source) => Err(AuthoringError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// `Err` with the first syntax error of `js`, the script file `file` (R-UI-6a).
pub(crate) fn check_js(file: &str, js: &str) -> Result<(), AuthoringError> {
    match crate::check_script(js) {
        Some(error) => Err(AuthoringError::Syntax {
            file: file.to_owned(),
            error,
        }),
        None => Ok(()),
    }
}

//! The bearer token of the agent link: where it is read from, and how it is kept out of logs,
//! the command line and the web processes' environment.
//!
//! Sources, first found wins: `--token-file PATH` (refused when its mode has any group or other
//! bit), `$CREDENTIALS_DIRECTORY/lineup-agent-token` (systemd's `LoadCredential=`), then the
//! environment variable `LINEUP_AGENT_TOKEN`. Never a command-line value: `/proc/<pid>/cmdline`
//! is readable by every local user.
//!
//! The variable is read and removed by [`take_env_token`] as the very first thing `main` does,
//! before logging starts or any thread exists: web processes (WebKit's `WebKitWebProcess`)
//! inherit the host's environment, and `std::env::remove_var` is only sound while no other
//! thread reads the environment.

use std::fmt;
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// The environment variable the token may come from; removed at start.
pub const TOKEN_ENV: &str = "LINEUP_AGENT_TOKEN";

/// The credential name under `$CREDENTIALS_DIRECTORY` (systemd `LoadCredential=`).
pub const CREDENTIAL_NAME: &str = "lineup-agent-token";

/// A token is a line of visible ASCII; anything longer than this is not a token.
const MAX_TOKEN_BYTES: u64 = 4096;

/// A bearer token. Its `Debug` shows only its length, and it has no `Display`, so it cannot
/// reach a log by accident; [`Token::expose`] is the one way to its text.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Token(<redacted, {} bytes>)", self.0.len())
    }
}

impl Token {
    /// Checks `text` (surrounding whitespace removed): visible ASCII only, so it fits an HTTP
    /// header and holds no line break. The error never repeats the text.
    pub fn new(text: &str, from: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err(format!("{from}: the token is empty"));
        }
        if !text.bytes().all(|b| b.is_ascii_graphic() || b == b' ') {
            return Err(format!(
                "{from}: the token must be visible ASCII on one line ({} bytes read)",
                text.len()
            ));
        }
        Ok(Self(text.to_owned()))
    }

    /// The token's text, for the `Authorization` header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// Reads `LINEUP_AGENT_TOKEN` and removes it from the process's environment. Call it first in
/// `main`, before any thread starts (see the module docs). An empty or invalid value is removed
/// too, and reported once logging runs.
pub fn take_env_token() -> Option<Result<Token, String>> {
    let value = std::env::var_os(TOKEN_ENV)?;
    // Sound here: no other thread exists yet (edition 2021; the call is `unsafe` from 2024 on
    // for exactly that reason).
    std::env::remove_var(TOKEN_ENV);
    Some(match value.to_str() {
        Some(text) => Token::new(text, TOKEN_ENV),
        None => Err(format!("{TOKEN_ENV}: not UTF-8")),
    })
}

/// Where the token came from, for the log (never the token itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `--token-file`.
    File(PathBuf),
    /// `$CREDENTIALS_DIRECTORY/lineup-agent-token`.
    Credentials(PathBuf),
    /// `LINEUP_AGENT_TOKEN`.
    Environment,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::File(p) => write!(f, "--token-file {}", p.display()),
            Source::Credentials(p) => write!(f, "the systemd credential {}", p.display()),
            Source::Environment => write!(f, "the environment ({TOKEN_ENV})"),
        }
    }
}

/// Picks the token: `--token-file`, else `$CREDENTIALS_DIRECTORY/lineup-agent-token` when it
/// exists, else what [`take_env_token`] took. `None`: no token configured.
pub fn resolve(
    token_file: Option<&Path>,
    credentials_dir: Option<&Path>,
    from_env: Option<Result<Token, String>>,
) -> Result<Option<(Token, Source)>, String> {
    if let Some(path) = token_file {
        return read_private_file(path).map(|t| Some((t, Source::File(path.to_owned()))));
    }
    if let Some(dir) = credentials_dir {
        let path = dir.join(CREDENTIAL_NAME);
        if path.exists() {
            // systemd makes the credential readable by the service only; read it as it is.
            return read_file(&path).map(|t| Some((t, Source::Credentials(path))));
        }
    }
    match from_env {
        Some(Ok(token)) => Ok(Some((token, Source::Environment))),
        Some(Err(e)) => Err(e),
        None => Ok(None),
    }
}

/// Reads a token file that only its owner may read: a mode with any group or other bit (say
/// 0644) is refused, naming the path and the mode, before the file is read.
pub fn read_private_file(path: &Path) -> Result<Token, String> {
    use std::os::unix::fs::PermissionsExt as _;
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "{}: the token file has mode {mode:04o}, readable or writable by others; allow its owner only (chmod 600)",
            path.display()
        ));
    }
    read_file(path)
}

fn read_file(path: &Path) -> Result<Token, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut text = String::new();
    file.take(MAX_TOKEN_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if text.len() as u64 > MAX_TOKEN_BYTES {
        return Err(format!(
            "{}: longer than {MAX_TOKEN_BYTES} bytes, not a token",
            path.display()
        ));
    }
    Token::new(&text, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn debug_never_shows_the_token() {
        let token = Token::new("s3cret-value\n", "test").unwrap();
        assert_eq!(token.expose(), "s3cret-value");
        let shown = format!("{token:?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("12 bytes"), "{shown}");
    }

    #[test]
    fn a_token_is_one_line_of_visible_ascii_and_errors_never_repeat_it() {
        assert!(Token::new("  ", "t").is_err());
        let e = Token::new("ab\ncd", "t").unwrap_err();
        assert!(!e.contains("ab"), "{e}");
        assert!(Token::new("é", "t").is_err());
    }

    #[test]
    fn r_sec_a_token_file_readable_by_others_is_refused_and_0600_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "abc\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = read_private_file(&path).unwrap_err();
        assert!(e.contains("0644"), "{e}");
        assert!(e.contains(&path.display().to_string()), "{e}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_private_file(&path).unwrap().expose(), "abc");
        // Group-writable only is refused too.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o620)).unwrap();
        assert!(read_private_file(&path).is_err());
    }

    #[test]
    fn sources_in_order_file_then_credentials_then_environment() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "from-file").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let creds = dir.path().join("creds");
        std::fs::create_dir(&creds).unwrap();
        std::fs::write(creds.join(CREDENTIAL_NAME), "from-creds").unwrap();
        let env = || Some(Token::new("from-env", "env"));
        let pick = |f: Option<&Path>, c: Option<&Path>| {
            resolve(f, c, env())
                .unwrap()
                .map(|(t, _)| t.expose().to_owned())
        };
        assert_eq!(pick(Some(&file), Some(&creds)).unwrap(), "from-file");
        assert_eq!(pick(None, Some(&creds)).unwrap(), "from-creds");
        assert_eq!(pick(None, Some(dir.path())).unwrap(), "from-env");
        assert_eq!(resolve(None, None, None).unwrap(), None);
    }
}

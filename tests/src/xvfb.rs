//! A virtual X server of one's own: a group of real-webview tests that runs on it sees only its
//! own windows, and its XTEST input reaches nothing of another group's, so groups run side by
//! side.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A running `Xvfb` with one 1280 × 1024 × 24 screen (as `xvfb-run -s "-screen 0 1280x1024x24"`
/// starts), stopped when dropped.
///
/// Invariant: `display` names the server `child` runs, which was ready to take connections when
/// [`Xvfb::start`] returned.
#[derive(Debug)]
pub struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    /// Starts `Xvfb` on a free display number: the server picks the number and writes it on its
    /// standard output once it listens (`-displayfd`), so two servers started at once never take
    /// the same one. TCP is off; local clients connect through the socket.
    ///
    /// # Errors
    /// When `Xvfb` cannot be run or exits before saying which display it took.
    pub fn start() -> Result<Self, String> {
        let mut child = Command::new("Xvfb")
            .args(["-displayfd", "1", "-screen", "0", "1280x1024x24"])
            .args(["-nolisten", "tcp"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run Xvfb (scripts/setup.sh installs it): {e}"))?;
        let mut line = String::new();
        let read = match child.stdout.take() {
            Some(out) => BufReader::new(out).read_line(&mut line),
            None => Ok(0),
        };
        match (read, line.trim().parse::<u32>()) {
            (Ok(_), Ok(number)) => Ok(Self {
                child,
                display: format!(":{number}"),
            }),
            (read, _) => {
                let _ = child.kill();
                let status = child.wait();
                Err(format!(
                    "Xvfb did not say which display it took (read {read:?}, {line:?}; {status:?})"
                ))
            }
        }
    }

    /// The value of `DISPLAY` that names this server, such as `:3`.
    pub fn display(&self) -> &str {
        &self.display
    }
}

impl Drop for Xvfb {
    /// Asks the server to stop (SIGTERM, so that it removes its socket and lock file) and waits
    /// for it; kills it if the request could not be sent.
    fn drop(&mut self) {
        let asked = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .is_ok_and(|status| status.success());
        if !asked {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_servers_started_together_take_two_displays_and_stop_when_dropped() {
        let (a, b) = (Xvfb::start().unwrap(), Xvfb::start().unwrap());
        assert_ne!(a.display(), b.display());
        let number = a.display().trim_start_matches(':').to_owned();
        let socket = std::path::PathBuf::from(format!("/tmp/.X11-unix/X{number}"));
        assert!(socket.exists(), "{} is not there", socket.display());
        drop(a);
        assert!(!socket.exists(), "{} outlived its server", socket.display());
        let socket_b = format!("/tmp/.X11-unix/X{}", b.display().trim_start_matches(':'));
        assert!(
            std::path::Path::new(&socket_b).exists(),
            "{socket_b}: the other server stopped too"
        );
    }
}

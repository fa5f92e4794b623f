//! The protocol stream on the process's standard output, protected from everything else in the
//! process and its children: web processes inherit descriptors 0–2, so descriptor 1 must no
//! longer be the protocol's.

use std::fs::File;

use crate::error::ShellError;

/// The process's original standard output, moved to a private descriptor.
///
/// [`ProtocolStdout::take`] duplicates descriptor 1 to a new close-on-exec descriptor that only
/// this value owns, then points descriptor 1 at standard error. Web processes, which inherit
/// descriptors 0–2, and any stray `println!` in the process can then no longer write into the
/// protocol stream.
///
/// ## Platform-specific
/// Unix only; elsewhere [`ProtocolStdout::take`] returns [`ShellError::Unsupported`].
#[derive(Debug)]
pub struct ProtocolStdout {
    file: File,
}

impl ProtocolStdout {
    /// Takes standard output for the protocol; call once, before any web process starts.
    pub fn take() -> Result<Self, ShellError> {
        imp::take().map(|file| Self { file })
    }

    /// The private descriptor, for the one writer of the protocol stream (the transport's
    /// `LineWriter`).
    pub fn into_file(self) -> File {
        self.file
    }
}

#[cfg(unix)]
mod imp {
    use std::fs::File;
    use std::os::fd::AsFd;

    use crate::error::ShellError;

    pub(super) fn take() -> Result<File, ShellError> {
        let stdout = std::io::stdout();
        let stderr = std::io::stderr();
        let private = rustix::io::fcntl_dupfd_cloexec(stdout.as_fd(), 3)
            .map_err(|e| ShellError::Platform(format!("cannot duplicate stdout: {e}")))?;
        rustix::stdio::dup2_stdout(stderr.as_fd())
            .map_err(|e| ShellError::Platform(format!("cannot redirect stdout: {e}")))?;
        Ok(File::from(private))
    }
}

#[cfg(not(unix))]
mod imp {
    use std::fs::File;

    use crate::error::ShellError;

    pub(super) fn take() -> Result<File, ShellError> {
        Err(ShellError::Unsupported(
            "protecting stdout needs a Unix platform",
        ))
    }
}

//! How a database command ends when it does not succeed.

use std::io;

/// A failed database command.
#[derive(Debug)]
pub enum CliError {
    /// Printed as `Failed: <message>` on stderr, exit status 1 (ldb's form).
    Failed(String),
    /// Stdout was closed by its reader (`strata dump | head`): the reader has
    /// what it wanted, so the command stops quietly and still closes the DB.
    StdoutClosed,
}

/// Result of a database command.
pub type CliResult<T = ()> = Result<T, CliError>;

impl From<strata::Error> for CliError {
    fn from(e: strata::Error) -> Self {
        CliError::Failed(e.to_string())
    }
}

impl From<String> for CliError {
    fn from(message: String) -> Self {
        CliError::Failed(message)
    }
}

/// Maps an error writing stdout: a closed pipe is a quiet stop.
pub fn stdout_error(e: io::Error) -> CliError {
    if e.kind() == io::ErrorKind::BrokenPipe {
        CliError::StdoutClosed
    } else {
        CliError::Failed(format!("writing stdout: {e}"))
    }
}

/// Prefixes an engine error with what was being done, as ldb does
/// (`Get failed: Corruption: ...`).
pub fn context(what: &'static str) -> impl Fn(strata::Error) -> CliError {
    move |e| CliError::Failed(format!("{what}: {e}"))
}

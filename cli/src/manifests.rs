//! `operator-gen manifests`: placeholder until the source scan lands; the lead replaces this file.

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::printer::Printer;

/// Options of `operator-gen manifests`.
#[derive(Clone, Debug, Default)]
pub struct ManifestsOptions {
    /// Project root (default: the current directory).
    pub root: Option<PathBuf>,
    /// Truncate descriptions longer than this.
    pub max_desc_len: Option<usize>,
    /// Allow float fields.
    pub allow_dangerous_types: bool,
    /// Name of the generated (Cluster)Role.
    pub role_name: String,
}

/// Generate the project's manifests.
pub fn run(_opts: &ManifestsOptions, _printer: &Printer) -> Result<()> {
    Err(Error::msg("manifests is not implemented yet; wait for the source scan to land"))
}

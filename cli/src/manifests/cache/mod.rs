//! What `manifests` keeps between runs.

pub(crate) mod last_run;

//! A real control plane for tests: etcd and kube-apiserver from `KUBEBUILDER_ASSETS`, started the way envtest starts them.
//!
//! ```no_run
//! # async fn example() -> Result<(), operator_gen_envtest::Error> {
//! let Some(_assets) = operator_gen_envtest::require_assets() else { return Ok(()) };
//! let plane = operator_gen_envtest::ControlPlane::start().await?;
//! let client = plane.client();
//! # drop(client);
//! # Ok(())
//! # }
//! ```
//!
//! The binaries come from `operator-gen envtest use` (or `hack/envtest/build.sh` in an
//! operator-gen checkout), which builds them from the Go module proxy and prints the directory
//! to put in `KUBEBUILDER_ASSETS`.
//! Dropping a [`ControlPlane`] kills both processes and removes its temp dir, also while a
//! test panics.

mod assets;
mod certs;
pub mod ci;
mod control_plane;
mod crds;
mod error;
mod gates;
mod kubeconfig;
mod objects;
mod process;

pub use assets::{ASSETS_ENV, assets, require_assets, require_assets_with};
pub use control_plane::{ControlPlane, START_TIMEOUT_ENV, Settings};
pub use crds::FIELD_MANAGER;
pub use error::Error;
pub use objects::read_yaml;

/// Skips the calling test (returns early) when the control-plane binaries are missing, and fails
/// it instead in CI ([`ci::in_ci`]); evaluates to the assets directory.
///
/// In a test returning `()` write `require_assets!()`; in one returning a value, pass the value
/// to return, e.g. `require_assets!(Ok(()))`.
#[macro_export]
macro_rules! require_assets {
    () => {
        match $crate::require_assets() {
            Some(dir) => dir,
            None => return,
        }
    };
    ($skip:expr) => {
        match $crate::require_assets() {
            Some(dir) => dir,
            None => return $skip,
        }
    };
}

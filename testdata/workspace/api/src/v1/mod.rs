//! Version v1 of the fleet API.

pub mod ship;

pub use ship::{Ship, ShipSpec, ShipStatus};

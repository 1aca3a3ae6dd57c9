//! Reconcilers.

pub mod captain;
pub mod captain_backup;
pub mod firstmate;
pub mod sailor;
pub mod admiral;
pub mod navigator;
pub mod certificate;

//! Reconcilers.

pub mod admiral;
pub mod captain;
pub mod captain_backup;
pub mod certificate;
pub mod firstmate;
pub mod navigator;
pub mod sailor;

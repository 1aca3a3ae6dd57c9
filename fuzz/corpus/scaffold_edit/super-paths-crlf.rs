use super::super::other::Thing;
use super::v1::Captain;
mod tests { use super::*; }
    // +operator-gen:scaffold:modules
pub mod captain;

//! The fleet's own helpers.

pub fn fleet_size() -> usize {
    3
}

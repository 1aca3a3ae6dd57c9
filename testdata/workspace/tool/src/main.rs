//! The fleet tool: another binary on the same API crate.

fn main() {
    let spec = fleet_api::v1::ShipSpec::default();
    println!("{}", spec.name);
}

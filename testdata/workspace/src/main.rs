//! The fleet operator's manager.

mod controller;
mod harbor;

fn main() {
    controller::run();
}

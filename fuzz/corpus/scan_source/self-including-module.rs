#[path = "lib.rs"]
mod again;

#[path = "lib.rs"]
pub mod again2 {
    #[path = "lib.rs"]
    pub mod inner;
}

pub mod document;
pub mod gadget;
pub mod memo;
pub mod widget;

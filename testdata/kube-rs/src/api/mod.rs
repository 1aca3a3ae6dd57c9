pub mod document;
pub mod gadget;
pub mod widget;

//! +groupName=crew.testproject.org

pub mod admiral;
pub mod captain;
pub mod firstmate;
pub mod navigator;
pub mod sailor;

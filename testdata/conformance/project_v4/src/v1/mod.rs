//! +groupName=crew.testproject.org

pub mod captain;
pub mod admiral;
pub mod firstmate;
pub mod navigator;
pub mod sailor;

//! +groupName=crew.testproject.org

pub mod firstmate;

//! The schema trait the derives implement.

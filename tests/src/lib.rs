//! Shared helpers for operator-gen integration tests.

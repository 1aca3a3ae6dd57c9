//! rbac

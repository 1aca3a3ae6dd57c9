//! HTTP serving shared by the manager's servers (probes, metrics) and the webhook server:
//! listeners and connections ([`http`]), certificates ([`tls`]), the TokenReview and
//! SubjectAccessReview check of secure metrics ([`authz`]) and the probes' state ([`Health`]).
//! It knows nothing of what it serves: each server brings its own [`http::Routes`].

pub(crate) mod authz;
mod health;
pub(crate) mod http;
pub(crate) mod tls;

pub use health::Health;

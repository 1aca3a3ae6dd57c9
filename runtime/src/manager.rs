//! Manager helpers: health and metrics endpoints, leader election, shutdown.

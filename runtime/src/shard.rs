//! Shards: which share of a kind's objects one replica set lists, watches, caches and
//! reconciles, so that an operator scales past one leader by configuration (`--shard-count`,
//! `--shard-index`), not by changing its controllers.
//!
//! Each shard runs as its own Deployment with its own leader election (one Lease per shard,
//! [`Shard::lease_name`]). An object's shard is the apiserver's (Kubernetes 1.36, feature gate
//! `ShardedListAndWatch`): the 64-bit FNV-1a hash of its uid (or of its namespace,
//! [`ShardKey::Namespace`]), and shard `I` of `N` holds the hashes from `I * 2^64 / N`
//! (inclusive) to `(I + 1) * 2^64 / N` (exclusive), rounded down. [`Shard::selector`] is that
//! range as a `shardSelector` the apiserver filters lists and watches with; [`Shard::owns`] is
//! the same test on the client, so both pick the same objects.
//!
//! The Leases of every shard count form one group: a replica that holds its Lease starts its
//! controllers only once no replica of an overlapping shard (of another count, or another key)
//! reconciles, so a change of the shard count never has two replicas reconcile one object at
//! once ([`Shard::overlaps`]; the protocol is the manager's).

mod range;
mod watch;

pub use range::{Selection, Shard, ShardKey};
pub(crate) use range::{overlap, parse_range};
pub use watch::{honours_selector, watcher};

#[cfg(test)]
pub(crate) use range::tests;

//! Shards: which share of a kind's objects one replica set reconciles, so that an operator
//! scales past one leader by configuration (`--shard-count`, `--shard-index`), not by changing
//! its controllers.
//!
//! Each shard runs as its own Deployment with its own leader election (one Lease per shard,
//! [`Shard::lease_name`]), watches the kind, and reconciles only the objects whose key
//! ([`Shard::of`]: a hash of namespace and name) falls to it. The watch itself is not split:
//! every shard still receives every object; where the apiserver offers a server-side shard
//! selector for list and watch, [`Shard::of`] is the function to give it.

use kube::{Resource, ResourceExt};

/// One shard of `count`: the objects whose key hashes to `index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shard {
    index: u32,
    count: u32,
}

impl Default for Shard {
    fn default() -> Self {
        Shard::ALL
    }
}

impl Shard {
    /// The only shard of one: every object.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// Shard `index` of `count`; `None` unless `index < count`.
    pub fn new(index: u32, count: u32) -> Option<Shard> {
        (index < count).then_some(Shard { index, count })
    }

    /// This shard's index.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// How many shards there are.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The shard, of `count`, of the object `namespace/name` (`/name` when cluster-scoped):
    /// XXH3-64 of that key modulo `count`, the same in every process and release.
    pub fn of(namespace: Option<&str>, name: &str, count: u32) -> u32 {
        let key = format!("{}/{name}", namespace.unwrap_or_default());
        let hash = xxhash_rust::xxh3::xxh3_64(key.as_bytes());
        (hash % u64::from(count.max(1))) as u32
    }

    /// Whether this shard reconciles `obj`.
    pub fn owns<K: Resource>(&self, obj: &K) -> bool {
        self.count <= 1
            || Shard::of(obj.namespace().as_deref(), &obj.name_any(), self.count) == self.index
    }

    /// The Lease this shard's replicas elect their leader with: `base` for a single shard,
    /// `<base>-shard-<index>-of-<count>` otherwise, so shards never contend for one Lease and
    /// a change of the shard count starts new Leases.
    pub fn lease_name(&self, base: &str) -> String {
        if self.count <= 1 {
            base.to_owned()
        } else {
            format!("{base}-shard-{}-of-{}", self.index, self.count)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::tests::config_map;

    #[test]
    fn every_object_belongs_to_exactly_one_shard() {
        let shards: Vec<Shard> = (0..3).filter_map(|i| Shard::new(i, 3)).collect();
        let mut per_shard = [0usize; 3];
        for i in 0..300 {
            let obj = config_map("default", &format!("gb-{i}"));
            let owners: Vec<u32> = shards
                .iter()
                .filter(|s| s.owns(&obj))
                .map(Shard::index)
                .collect();
            assert_eq!(owners.len(), 1, "gb-{i} is owned by shards {owners:?}");
            per_shard[owners[0] as usize] += 1;
        }
        // a hash, not a single bucket: each of 3 shards gets a fair part of 300 keys
        for (index, n) in per_shard.iter().enumerate() {
            assert!(
                (60..=140).contains(n),
                "shard {index} owns {n} of 300: {per_shard:?}"
            );
        }
        assert!(Shard::ALL.owns(&config_map("any", "thing")));
    }

    #[test]
    fn the_shard_of_a_key_is_stable() {
        // pinned: a change of hash would move every object to another shard on upgrade
        let key = xxhash_rust::xxh3::xxh3_64(b"default/guestbook-sample");
        assert_eq!(
            Shard::of(Some("default"), "guestbook-sample", 7),
            (key % 7) as u32
        );
        assert_eq!(
            Shard::of(Some("default"), "guestbook-sample", 7),
            Shard::of(Some("default"), "guestbook-sample", 7)
        );
    }

    #[test]
    fn one_lease_per_shard() {
        assert_eq!(Shard::ALL.lease_name("p-leader"), "p-leader");
        let leases: Vec<String> = (0..2)
            .filter_map(|i| Shard::new(i, 2))
            .map(|s| s.lease_name("p-leader"))
            .collect();
        assert_eq!(leases, ["p-leader-shard-0-of-2", "p-leader-shard-1-of-2"]);
        assert_eq!(Shard::new(2, 2), None);
        assert_eq!(Shard::new(0, 0), None);
    }
}

//! An object's shard: the 64-bit FNV-1a hash of its key, in one of `count` equal ranges.

use kube::Resource;

/// The field whose hash places an object in a shard.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum ShardKey {
    /// `metadata.uid`: objects spread evenly, whatever their names and namespaces.
    #[default]
    Uid,
    /// `metadata.namespace`: all objects of a namespace in one shard (cluster-scoped objects,
    /// which have none, all in the shard of the empty string).
    Namespace,
}

impl ShardKey {
    /// The field as a shard selector names it (`object.metadata.uid`).
    pub fn field_path(self) -> &'static str {
        match self {
            ShardKey::Uid => "object.metadata.uid",
            ShardKey::Namespace => "object.metadata.namespace",
        }
    }

    /// The key as the flag spells it: `uid` or `namespace`.
    pub fn name(self) -> &'static str {
        match self {
            ShardKey::Uid => "uid",
            ShardKey::Namespace => "namespace",
        }
    }

    /// The key [`name`](Self::name) spells, if any.
    pub fn from_name(name: &str) -> Option<ShardKey> {
        [ShardKey::Uid, ShardKey::Namespace]
            .into_iter()
            .find(|k| k.name() == name)
    }

    /// The field's value on `obj` (empty when unset).
    pub fn value<K: Resource>(self, obj: &K) -> &str {
        let field = match self {
            ShardKey::Uid => &obj.meta().uid,
            ShardKey::Namespace => &obj.meta().namespace,
        };
        field.as_deref().unwrap_or_default()
    }
}

/// How a sharded watch keeps to its shard.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Selection {
    /// Asks the apiserver once ([`honours_selector`](super::honours_selector)) and uses the server when it honours the
    /// selector, the client otherwise.
    #[default]
    Auto,
    /// Sends the shard selector with every list and watch; the apiserver sends only the
    /// shard's objects.
    Server,
    /// Lists and watches every object and drops the other shards' before they are cached.
    Client,
}

/// One shard of `count`: the objects whose key hashes into the `index`th of `count` equal
/// ranges of the 64-bit hash space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shard {
    index: u32,
    count: u32,
    key: ShardKey,
    selection: Selection,
}

impl Default for Shard {
    fn default() -> Self {
        Shard::ALL
    }
}

/// 2^64, the exclusive end of the hash space.
const SPACE: u128 = 1 << 64;

/// The first hash of shard `index` of `count`: `index * 2^64 / count`, rounded down.
fn start(index: u32, count: u32) -> u128 {
    u128::from(index) * SPACE / u128::from(count)
}

/// Whether some object can be in both the range `a` of its key and the range `b` of its
/// own: when the keys differ, always (nothing ties an object's uid to its namespace).
pub(crate) fn overlap(a: (ShardKey, (u128, u128)), b: (ShardKey, (u128, u128))) -> bool {
    let (a_key, (a_start, a_end)) = a;
    let (b_key, (b_start, b_end)) = b;
    a_key != b_key || (a_start < b_end && b_start < a_end)
}

/// The range [`Shard::range_text`] wrote; `None` for anything else or an empty range.
pub(crate) fn parse_range(text: &str) -> Option<(u128, u128)> {
    let (start, end) = text.split_once('-')?;
    let parse = |t: &str| {
        let digits = t.strip_prefix("0x")?;
        (!digits.is_empty() && digits.len() <= 17)
            .then(|| u128::from_str_radix(digits, 16).ok())
            .flatten()
    };
    let (start, end) = (parse(start)?, parse(end)?);
    (start < end && end <= SPACE).then_some((start, end))
}

impl Shard {
    /// The only shard of one: every object.
    pub const ALL: Shard = Shard {
        index: 0,
        count: 1,
        key: ShardKey::Uid,
        selection: Selection::Auto,
    };

    /// Shard `index` of `count`, by uid, selected as [`Selection::Auto`] says; `None` unless
    /// `index < count`.
    pub fn new(index: u32, count: u32) -> Option<Shard> {
        (index < count).then_some(Shard {
            index,
            count,
            ..Shard::ALL
        })
    }

    /// This shard, by `key`.
    #[must_use]
    pub fn by(self, key: ShardKey) -> Shard {
        Shard { key, ..self }
    }

    /// This shard, kept to as `selection` says.
    #[must_use]
    pub fn selected(self, selection: Selection) -> Shard {
        Shard { selection, ..self }
    }

    /// This shard's index.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// How many shards there are.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The field whose hash places an object.
    pub fn key(&self) -> ShardKey {
        self.key
    }

    /// How a watch keeps to this shard.
    pub fn selection(&self) -> Selection {
        self.selection
    }

    /// The 64-bit FNV-1a hash of `value`, the apiserver's hash of a shard key.
    pub fn hash(value: &str) -> u64 {
        const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
        const PRIME: u64 = 0x0100_0000_01b3;
        value.bytes().fold(OFFSET_BASIS, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(PRIME)
        })
    }

    /// The index, of `count` shards, whose [range](Self::range) holds `hash`.
    pub fn index_of(hash: u64, count: u32) -> u32 {
        let count = count.max(1);
        // `hash * count / 2^64` rounded down, or one more when the next range, whose start is
        // rounded down, already holds it
        let index = ((u128::from(hash) * u128::from(count)) >> 64) as u32;
        if index + 1 < count && u128::from(hash) >= start(index + 1, count) {
            index + 1
        } else {
            index
        }
    }

    /// This shard's hashes: from the first (inclusive) to the second (exclusive, 2^64 for
    /// the last shard).
    pub fn range(&self) -> (u128, u128) {
        let count = self.count.max(1);
        (start(self.index, count), start(self.index + 1, count))
    }

    /// The apiserver's `shardSelector` for this shard, e.g.
    /// `shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')`: each
    /// bound `0x` and 16 lowercase hex digits, but 2^64 as `0x10000000000000000`. `None` for a
    /// single shard, which selects nothing away.
    pub fn selector(&self) -> Option<String> {
        if self.count <= 1 {
            return None;
        }
        let (start, end) = self.range();
        Some(format!(
            "shardRange({}, '0x{start:016x}', '0x{end:016x}')",
            self.key.field_path()
        ))
    }

    /// Whether `obj` is this shard's: the hash of its key is in [`range`](Self::range).
    pub fn owns<K: Resource>(&self, obj: &K) -> bool {
        let (start, end) = self.range();
        self.count <= 1 || (start..end).contains(&u128::from(Shard::hash(self.key.value(obj))))
    }

    /// Whether some object can belong to both shards: their keys differ (an object's uid and
    /// namespace hash apart), or their ranges intersect. A single shard overlaps every shard.
    pub fn overlaps(&self, other: &Shard) -> bool {
        overlap((self.key, self.range()), (other.key, other.range()))
    }

    /// [`range`](Self::range) as text, `0x<start>-0x<end>` (16 lowercase hex digits each, but
    /// 2^64 as `0x10000000000000000`), as the Lease of a shard records it.
    pub fn range_text(&self) -> String {
        let (start, end) = self.range();
        format!("0x{start:016x}-0x{end:016x}")
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
pub(crate) mod tests {
    use super::*;
    use crate::controller::tests::config_map;

    /// The `n`th of a fixed series of version 4 UUIDs, as the apiserver gives objects (random:
    /// FNV-1a spreads keys that differ only in their last characters over a narrow band of its
    /// high bits, so `uid-1`, `uid-2` ... would all fall in one shard).
    pub(crate) fn uid(n: u64) -> String {
        let x = xxhash_rust::xxh3::xxh3_128(&n.to_le_bytes());
        let h = format!("{x:032x}");
        format!(
            "{}-{}-4{}-a{}-{}",
            &h[..8],
            &h[8..12],
            &h[13..16],
            &h[17..20],
            &h[20..]
        )
    }

    pub(crate) fn with_uid(uid: &str) -> k8s_openapi::api::core::v1::ConfigMap {
        let mut cm = config_map("default", uid);
        cm.metadata.uid = Some(uid.into());
        cm
    }

    #[test]
    fn the_hash_is_64_bit_fnv_1a() {
        // the published FNV-1a 64 test vectors
        assert_eq!(Shard::hash(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(Shard::hash("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(Shard::hash("foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn shards_split_the_hash_space_into_equal_ranges() {
        let two: Vec<(u128, u128)> = (0..2)
            .map(|i| Shard::new(i, 2).expect("shard").range())
            .collect();
        assert_eq!(two, [(0, 1 << 63), (1 << 63, 1 << 64)]);
        let three = |i| Shard::new(i, 3).expect("shard");
        assert_eq!(three(0).range(), (0, 0x5555_5555_5555_5555));
        assert_eq!(
            three(1).range(),
            (0x5555_5555_5555_5555, 0xaaaa_aaaa_aaaa_aaaa)
        );
        assert_eq!(three(2).range(), (0xaaaa_aaaa_aaaa_aaaa, 1 << 64));
        // the start is the shard's, the end the next one's
        assert_eq!(Shard::index_of(0, 3), 0);
        assert_eq!(Shard::index_of(0x5555_5555_5555_5554, 3), 0);
        // 3 * 0x5555_5555_5555_5555 is 2^64 - 1: rounded down, the product alone would say 0
        assert_eq!(Shard::index_of(0x5555_5555_5555_5555, 3), 1);
        assert_eq!(Shard::index_of(0xaaaa_aaaa_aaaa_aaaa, 3), 2);
        assert_eq!(Shard::index_of(u64::MAX, 3), 2);
        assert_eq!(Shard::index_of(u64::MAX, 1), 0);
    }

    #[test]
    fn selectors_are_the_apiserver_s_shard_ranges() {
        assert_eq!(
            Shard::new(0, 2).expect("shard").selector().as_deref(),
            Some("shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')")
        );
        assert_eq!(
            Shard::new(3, 4)
                .expect("shard")
                .by(ShardKey::Namespace)
                .selector()
                .as_deref(),
            Some(
                "shardRange(object.metadata.namespace, '0xc000000000000000', '0x10000000000000000')"
            )
        );
        assert_eq!(Shard::ALL.selector(), None);
    }

    #[test]
    fn every_object_belongs_to_exactly_one_shard() {
        let shards: Vec<Shard> = (0..3).filter_map(|i| Shard::new(i, 3)).collect();
        let mut per_shard = [0usize; 3];
        for i in 0..300 {
            let obj = with_uid(&uid(i));
            let owners: Vec<u32> = shards
                .iter()
                .filter(|s| s.owns(&obj))
                .map(Shard::index)
                .collect();
            assert_eq!(owners.len(), 1, "object {i} is owned by shards {owners:?}");
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
    fn keys_that_differ_only_at_the_end_fall_close_together() {
        // FNV-1a moves the high bits little for a change in the last byte: `team-0` ...
        // `team-9` are all in the last shard of 2, of 3 and of 4
        for count in 2..=4 {
            let shards: Vec<u32> = (0..10)
                .map(|i| Shard::index_of(Shard::hash(&format!("team-{i}")), count))
                .collect();
            assert_eq!(shards, [count - 1; 10], "of {count}");
        }
    }

    #[test]
    fn the_key_is_the_uid_or_the_namespace() {
        let mut obj = config_map("team-a", "x");
        obj.metadata.uid = Some("u-1".into());
        let by_uid = Shard::new(Shard::index_of(Shard::hash("u-1"), 5), 5).expect("shard");
        assert!(by_uid.owns(&obj));
        let by_ns = Shard::new(Shard::index_of(Shard::hash("team-a"), 5), 5)
            .expect("shard")
            .by(ShardKey::Namespace);
        assert!(by_ns.owns(&obj));
        assert_eq!(ShardKey::Namespace.value(&obj), "team-a");
        assert_eq!(ShardKey::Uid.value(&config_map("a", "b")), "");
    }

    #[test]
    fn shards_overlap_when_an_object_can_be_in_both() {
        let s = |i, n| Shard::new(i, n).expect("shard");
        // the halves of 2 and the thirds of 3: 0/2 meets 0/3 and 1/3, 1/2 meets 1/3 and 2/3
        let met: Vec<(u32, u32)> = (0..2)
            .flat_map(|a| (0..3).map(move |b| (a, b)))
            .filter(|&(a, b)| s(a, 2).overlaps(&s(b, 3)))
            .collect();
        assert_eq!(met, [(0, 0), (0, 1), (1, 1), (1, 2)]);
        assert!(
            !s(0, 2).overlaps(&s(1, 2)),
            "shards of one count are disjoint"
        );
        assert!(s(1, 2).overlaps(&s(1, 2)));
        assert!(
            Shard::ALL.overlaps(&s(3, 4)),
            "one shard holds every object"
        );
        // by uid and by namespace: any object may be in both
        assert!(s(0, 2).overlaps(&s(1, 2).by(ShardKey::Namespace)));
    }

    #[test]
    fn a_range_round_trips_through_its_text() {
        assert_eq!(
            Shard::new(1, 2).expect("shard").range_text(),
            "0x8000000000000000-0x10000000000000000"
        );
        for shard in [
            Shard::ALL,
            Shard::new(0, 3).expect("shard"),
            Shard::new(2, 3).expect("shard"),
        ] {
            assert_eq!(parse_range(&shard.range_text()), Some(shard.range()));
        }
        for bad in [
            "",
            "0x1",
            "0x2-0x1",
            "0x0-0x20000000000000000",
            "1-2",
            "0x-0x1",
            "0xg-0x1",
        ] {
            assert_eq!(parse_range(bad), None, "{bad:?}");
        }
        assert_eq!(ShardKey::from_name("namespace"), Some(ShardKey::Namespace));
        assert_eq!(
            ShardKey::from_name(ShardKey::Uid.name()),
            Some(ShardKey::Uid)
        );
        assert_eq!(ShardKey::from_name("name"), None);
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

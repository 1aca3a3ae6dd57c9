//! Leader election on a `coordination.k8s.io/v1` Lease, with client-go's semantics.
//!
//! The candidate reads the Lease every retry period. It takes the Lease when nobody holds it or
//! when the holder has not renewed it for the holder's lease duration, measured on the local
//! monotonic clock from when this candidate last saw the record change (so clock skew between
//! nodes does not matter); a candidate waiting on a held Lease tries again when it would expire,
//! when that comes before the next retry, so it takes over an abandoned Lease at most one
//! (jittered) retry period after the holder's last renewal plus the lease duration. Writes use
//! the Lease's `resourceVersion`, so of two candidates only one wins. The leader renews every retry period; if no renewal succeeds within the renew deadline,
//! leadership is lost. On shutdown the leader empties `holderIdentity` so that a waiting replica
//! takes over at once.
//!
//! Between taking the Lease and starting the controllers, [`LeaderElector::gate`] waits until no
//! replica of an overlapping shard reconciles (see [`handoff`]).

use std::hash::{BuildHasher, RandomState};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::Api;
use kube::api::PostParams;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::metrics::Metrics;
use crate::error::{Error, Result};

use super::handoff::{self, Blocker, GROUP_LABEL, Gate, Group};
use kube::api::ListParams;

/// client-go's `JitterFactor`: a candidate waits between 1 and `1 + JITTER_FACTOR` (2.2) retry
/// periods between attempts to acquire the Lease.
pub const JITTER_FACTOR: f64 = 1.2;

/// Leader election timings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timings {
    pub lease_duration: Duration,
    pub renew_deadline: Duration,
    pub retry_period: Duration,
}

/// The part of a Lease's spec leader election reads and writes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct LeaseRecord {
    pub holder: Option<String>,
    pub lease_duration_seconds: Option<i32>,
    pub acquire_time: Option<Timestamp>,
    pub renew_time: Option<Timestamp>,
    pub transitions: i32,
}

impl LeaseRecord {
    pub fn from_spec(spec: Option<&LeaseSpec>) -> Self {
        let Some(spec) = spec else {
            return Self::default();
        };
        Self {
            holder: spec.holder_identity.clone().filter(|h| !h.is_empty()),
            lease_duration_seconds: spec.lease_duration_seconds,
            acquire_time: spec.acquire_time.as_ref().map(|t| t.0),
            renew_time: spec.renew_time.as_ref().map(|t| t.0),
            transitions: spec.lease_transitions.unwrap_or(0),
        }
    }

    pub fn write_to(&self, spec: &mut LeaseSpec) {
        spec.holder_identity = self.holder.clone();
        spec.lease_duration_seconds = self.lease_duration_seconds;
        spec.acquire_time = self.acquire_time.map(MicroTime);
        spec.renew_time = self.renew_time.map(MicroTime);
        spec.lease_transitions = Some(self.transitions);
    }

    /// The lease duration the holder declared, else `fallback`.
    pub fn duration_or(&self, fallback: Duration) -> Duration {
        match self.lease_duration_seconds {
            Some(s) if s > 0 => Duration::from_secs(u64::from(s.unsigned_abs())),
            _ => fallback,
        }
    }

    /// The record `me` writes to acquire or renew at `now`.
    pub fn next(&self, me: &str, now: Timestamp, lease_duration: Duration) -> Self {
        let renewing = self.holder.as_deref() == Some(me);
        Self {
            holder: Some(me.to_owned()),
            lease_duration_seconds: Some(duration_seconds(lease_duration)),
            acquire_time: if renewing {
                self.acquire_time.or(Some(now))
            } else {
                Some(now)
            },
            renew_time: Some(now),
            transitions: if renewing {
                self.transitions
            } else {
                self.transitions.saturating_add(1)
            },
        }
    }

    /// The record `me` writes on release: no holder, expiring in one second.
    pub fn released(&self, now: Timestamp) -> Self {
        Self {
            holder: None,
            lease_duration_seconds: Some(1),
            acquire_time: Some(now),
            renew_time: Some(now),
            transitions: self.transitions,
        }
    }
}

fn duration_seconds(d: Duration) -> i32 {
    i32::try_from(d.as_secs().max(1)).unwrap_or(i32::MAX)
}

/// What a candidate does with the Lease it just read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// There is no Lease: create it holding it.
    Create,
    /// We hold it: renew.
    Renew,
    /// Free or expired: take it over.
    Take,
    /// Somebody else holds a valid lease.
    Wait { holder: String },
}

/// Whether a lease last seen changing at `observed_at` has expired by `now`.
pub(crate) fn is_expired(observed_at: Instant, lease_duration: Duration, now: Instant) -> bool {
    now.saturating_duration_since(observed_at) >= lease_duration
}

/// Decides what to do with `current`, last seen changing at `observed_at`.
pub(crate) fn decide(
    current: Option<&LeaseRecord>,
    me: &str,
    observed_at: Instant,
    now: Instant,
    our_duration: Duration,
) -> Decision {
    let Some(record) = current else {
        return Decision::Create;
    };
    match record.holder.as_deref() {
        None => Decision::Take,
        Some(h) if h == me => Decision::Renew,
        Some(h) if !is_expired(observed_at, record.duration_or(our_duration), now) => {
            Decision::Wait {
                holder: h.to_owned(),
            }
        }
        Some(_) => Decision::Take,
    }
}

/// How long a candidate that found the lease held waits before its next attempt: the jittered
/// retry period, or less when the lease, last seen changing at `observed_at`, expires sooner.
pub(crate) fn wait_before_retry(
    jittered_retry: Duration,
    observed_at: Instant,
    lease_duration: Duration,
    now: Instant,
) -> Duration {
    let expires_in = (observed_at + lease_duration).saturating_duration_since(now);
    jittered_retry.min(expires_in)
}

/// Whether the leader, last renewed at `last_renew`, has missed its renew deadline at `now`.
pub(crate) fn renew_deadline_passed(
    last_renew: Instant,
    renew_deadline: Duration,
    now: Instant,
) -> bool {
    now.saturating_duration_since(last_renew) >= renew_deadline
}

/// The wait before the next attempt: `retry * (1 + JITTER_FACTOR * unit)`, `unit` in `[0, 1)`.
pub(crate) fn jittered(retry: Duration, unit: f64) -> Duration {
    retry.mul_f64(1.0 + JITTER_FACTOR * unit.clamp(0.0, 1.0))
}

fn random_unit() -> f64 {
    let bits = RandomState::new().hash_one(std::time::SystemTime::now());
    // 53 random bits as a float in [0, 1).
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// A unique identity for this replica: the pod name (or hostname) plus a random suffix.
pub(crate) fn identity() -> String {
    let host = std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "operator".to_owned());
    let suffix = RandomState::new().hash_one((std::process::id(), std::time::SystemTime::now()));
    format!("{host}_{suffix:016x}")
}

/// The outcome of one attempt.
#[derive(Debug, PartialEq, Eq)]
enum Attempt {
    Held,
    HeldByOther(String),
    /// Somebody wrote the Lease between our read and write.
    Conflict,
}

struct Observed {
    record: LeaseRecord,
    at: Instant,
}

/// One candidate for one Lease.
pub(crate) struct LeaderElector {
    api: Api<Lease>,
    name: String,
    namespace: String,
    identity: String,
    timings: Timings,
    observed: Option<Observed>,
    metrics: Metrics,
    /// The group of shard Leases this one is judged against ([`handoff`]), if any.
    group: Option<Group>,
    /// Whether this replica's writes mark its Lease as reconciling.
    marked: bool,
    /// What this replica saw of the group's other Leases.
    sightings: handoff::Sightings,
    /// When the last successful write of the Lease was begun: the renew deadline counts from
    /// then, not from its answer, since another replica may see the write as soon as it is
    /// stored and count the lease duration from there.
    last_held: Option<Instant>,
}

fn is_conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409)
}

impl LeaderElector {
    pub fn new(
        client: kube::Client,
        namespace: String,
        name: String,
        identity: String,
        timings: Timings,
        metrics: Metrics,
    ) -> Self {
        Self {
            api: Api::namespaced(client, &namespace),
            name,
            namespace,
            identity,
            timings,
            observed: None,
            metrics,
            group: None,
            marked: false,
            sightings: handoff::Sightings::default(),
            last_held: None,
        }
    }

    /// Writes the group's label and annotations, and the mark as [`marked`](Self) says.
    fn stamp(&self, meta: &mut ObjectMeta) {
        if let Some(group) = &self.group {
            group.stamp(meta, self.marked.then_some(self.identity.as_str()));
        }
    }

    fn lease_error(&self, source: kube::Error) -> Error {
        Error::Lease {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            source,
        }
    }

    fn observe(&mut self, record: LeaseRecord) {
        if self.observed.as_ref().is_none_or(|o| o.record != record) {
            self.observed = Some(Observed {
                record,
                at: Instant::now(),
            });
        }
    }

    async fn try_acquire_or_renew(&mut self) -> Result<Attempt> {
        // as client-go: expiry is judged at the attempt's start, the time the record states
        let now = Timestamp::now();
        let started = Instant::now();
        let current = self
            .api
            .get_opt(&self.name)
            .await
            .map_err(|e| self.lease_error(e))?;
        let Some(mut lease) = current else {
            let record = LeaseRecord {
                transitions: 0,
                ..LeaseRecord::default().next(&self.identity, now, self.timings.lease_duration)
            };
            let mut spec = LeaseSpec::default();
            record.write_to(&mut spec);
            let mut lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    namespace: Some(self.namespace.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(spec),
            };
            self.stamp(&mut lease.metadata);
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(_) => {
                    self.last_held = Some(started);
                    self.observe(record);
                    Ok(Attempt::Held)
                }
                Err(e) if is_conflict(&e) => Ok(Attempt::Conflict),
                Err(e) => Err(self.lease_error(e)),
            };
        };
        let record = LeaseRecord::from_spec(lease.spec.as_ref());
        self.observe(record.clone());
        let observed_at = self.observed.as_ref().map_or_else(Instant::now, |o| o.at);
        match decide(
            Some(&record),
            &self.identity,
            observed_at,
            started,
            self.timings.lease_duration,
        ) {
            Decision::Wait { holder } => return Ok(Attempt::HeldByOther(holder)),
            Decision::Create | Decision::Renew | Decision::Take => {}
        }
        let next = record.next(&self.identity, now, self.timings.lease_duration);
        next.write_to(lease.spec.get_or_insert_with(LeaseSpec::default));
        self.stamp(&mut lease.metadata);
        match self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => {
                self.last_held = Some(started);
                self.observe(next);
                Ok(Attempt::Held)
            }
            Err(e) if is_conflict(&e) => Ok(Attempt::Conflict),
            Err(e) => Err(self.lease_error(e)),
        }
    }

    /// Tries until the lease is held (`true`) or `stop` fires (`false`).
    pub async fn acquire(&mut self, stop: &CancellationToken) -> bool {
        tracing::info!(lease = %self.name, namespace = %self.namespace, identity = %self.identity, "attempting to acquire leader lease");
        self.metrics.set_leader(&self.name, false);
        loop {
            let mut wait = jittered(self.timings.retry_period, random_unit());
            match self.try_acquire_or_renew().await {
                Ok(Attempt::Held) => {
                    tracing::info!(lease = %self.name, identity = %self.identity, "successfully acquired lease");
                    self.metrics.set_leader(&self.name, true);
                    return true;
                }
                Ok(Attempt::HeldByOther(holder)) => {
                    if let Some(seen) = &self.observed {
                        let duration = seen.record.duration_or(self.timings.lease_duration);
                        wait = wait_before_retry(wait, seen.at, duration, Instant::now());
                    }
                    tracing::debug!(lease = %self.name, %holder, "lease is held by another replica")
                }
                Ok(Attempt::Conflict) => {
                    tracing::debug!(lease = %self.name, "lease changed while acquiring")
                }
                Err(e) => tracing::warn!(error = %e, "error acquiring the leader lease"),
            }
            tokio::select! {
                () = stop.cancelled() => return false,
                () = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// Renews until `stop` fires (`Ok`; call [`release`](Self::release) once the controllers
    /// have stopped) or until the renew deadline passes (`Err(LeadershipLost)`).
    pub async fn hold(&mut self, stop: &CancellationToken) -> Result<()> {
        let mut last_renew = self.last_held.unwrap_or_else(Instant::now);
        loop {
            tokio::select! {
                () = stop.cancelled() => return Ok(()),
                () = tokio::time::sleep(self.timings.retry_period) => {}
            }
            let left = self
                .timings
                .renew_deadline
                .saturating_sub(Instant::now().saturating_duration_since(last_renew));
            match tokio::time::timeout(left, self.try_acquire_or_renew()).await {
                Ok(Ok(Attempt::Held)) => last_renew = self.last_held.unwrap_or(last_renew),
                Ok(Ok(Attempt::HeldByOther(holder))) => {
                    tracing::error!(lease = %self.name, %holder, "another replica took the lease");
                    return Err(self.lost());
                }
                Ok(Ok(Attempt::Conflict)) => {
                    tracing::debug!(lease = %self.name, "lease changed while renewing")
                }
                Ok(Err(e)) => tracing::warn!(error = %e, "error renewing the leader lease"),
                Err(_) => tracing::warn!(lease = %self.name, "renewing the leader lease timed out"),
            }
            if renew_deadline_passed(last_renew, self.timings.renew_deadline, Instant::now()) {
                return Err(self.lost());
            }
        }
    }

    fn lost(&self) -> Error {
        self.metrics.set_leader(&self.name, false);
        Error::LeadershipLost {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            renew_deadline: self.timings.renew_deadline,
        }
    }

    /// Empties the holder if it is still us; errors are logged, the lease then simply expires.
    pub async fn release(&mut self) {
        self.metrics.set_leader(&self.name, false);
        self.marked = false;
        let attempt = async {
            let Some(mut lease) = self.api.get_opt(&self.name).await? else {
                return Ok(false);
            };
            let record = LeaseRecord::from_spec(lease.spec.as_ref());
            if record.holder.as_deref() != Some(self.identity.as_str()) {
                return Ok(false);
            }
            record
                .released(Timestamp::now())
                .write_to(lease.spec.get_or_insert_with(LeaseSpec::default));
            self.stamp(&mut lease.metadata);
            self.api
                .replace(&self.name, &PostParams::default(), &lease)
                .await?;
            Ok::<_, kube::Error>(true)
        };
        match tokio::time::timeout(self.timings.renew_deadline, attempt).await {
            Ok(Ok(true)) => tracing::info!(lease = %self.name, "released leader lease"),
            Ok(Ok(false)) => {
                tracing::info!(lease = %self.name, "leader lease no longer ours; nothing to release")
            }
            Ok(Err(e)) => {
                tracing::warn!(error = %e, lease = %self.name, "releasing the leader lease failed; it will expire")
            }
            Err(_) => {
                tracing::warn!(lease = %self.name, "releasing the leader lease timed out; it will expire")
            }
        }
    }
}

impl LeaderElector {
    /// This elector's Lease in `group`: it stamps the group on every write, and
    /// [`gate`](Self::gate) waits for the group's overlapping Leases.
    pub fn in_group(mut self, group: Group) -> Self {
        self.group = Some(group);
        self
    }

    /// The time left before the renew deadline, counted from the last successful write.
    fn left(&self) -> Duration {
        let since = self.last_held.map_or(Duration::ZERO, |at| {
            Instant::now().saturating_duration_since(at)
        });
        self.timings.renew_deadline.saturating_sub(since)
    }

    /// Lists the group's Leases and judges them; `None` when the list failed or timed out.
    async fn look(&mut self) -> Option<Vec<Blocker>> {
        let group = self.group.clone()?;
        let params =
            ListParams::default().labels(&format!("{GROUP_LABEL}={}", group.label_value()));
        let asked = Instant::now();
        let listed = match tokio::time::timeout(self.left(), self.api.list(&params)).await {
            Ok(Ok(list)) => list.items,
            Ok(Err(e)) => {
                tracing::warn!(error = %e, lease = %self.name, "error listing the shard leases");
                return None;
            }
            Err(_) => {
                tracing::warn!(lease = %self.name, "listing the shard leases timed out");
                return None;
            }
        };
        Some(handoff::blockers(
            &group,
            &self.name,
            &listed,
            &mut self.sightings,
            Instant::now(),
            asked,
            self.timings.lease_duration,
        ))
    }

    /// Writes the Lease (a renewal) with the mark on or off; `Err(())` when another replica
    /// took it.
    async fn write_mark(&mut self, mark: bool) -> Result<bool, ()> {
        self.marked = mark;
        match tokio::time::timeout(self.left(), self.try_acquire_or_renew()).await {
            Ok(Ok(Attempt::Held)) => Ok(true),
            Ok(Ok(Attempt::HeldByOther(holder))) => {
                tracing::error!(lease = %self.name, %holder, "another replica took the lease");
                self.marked = false;
                Err(())
            }
            Ok(Ok(Attempt::Conflict)) => {
                tracing::debug!(lease = %self.name, "lease changed while marking it");
                Ok(false)
            }
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "error renewing the leader lease");
                Ok(false)
            }
            Err(_) => {
                tracing::warn!(lease = %self.name, "renewing the leader lease timed out");
                Ok(false)
            }
        }
    }

    /// Run once the Lease is held, before the controllers start: marks the Lease and returns
    /// [`Gate::Proceed`] once no overlapping Lease of the group is marked by a live holder;
    /// until then keeps renewing the Lease, unmarked. Without a group it proceeds at once.
    pub async fn gate(&mut self, stop: &CancellationToken) -> Gate {
        if self.group.is_none() {
            return Gate::Proceed;
        }
        let mut waited = false;
        loop {
            if stop.is_cancelled() {
                return Gate::Stopped;
            }
            let mut wait = jittered(self.timings.retry_period, random_unit());
            // look first: no mark is written while an overlapping shard visibly reconciles
            let mut blocked = self.look().await;
            if blocked.as_ref().is_some_and(Vec::is_empty) {
                match self.write_mark(true).await {
                    Err(()) => return Gate::Lost,
                    Ok(false) => blocked = None,
                    Ok(true) => {
                        blocked = self.look().await;
                        let in_time = !renew_deadline_passed(
                            self.last_held.unwrap_or_else(Instant::now),
                            self.timings.renew_deadline,
                            Instant::now(),
                        );
                        if blocked.as_ref().is_some_and(Vec::is_empty) && in_time {
                            if waited {
                                tracing::info!(lease = %self.name, "overlapping shards no longer reconcile; starting");
                            }
                            return Gate::Proceed;
                        }
                    }
                }
            }
            let blockers = blocked.unwrap_or_default();
            if let Some(soonest) = blockers.iter().map(|b| b.expires_in).min() {
                wait = wait.min(soonest);
            }
            if !blockers.is_empty() {
                if waited {
                    tracing::debug!(lease = %self.name, blockers = %handoff::names(&blockers), "overlapping shards still reconcile");
                } else {
                    tracing::info!(lease = %self.name, blockers = %handoff::names(&blockers), "waiting for overlapping shards to stop reconciling");
                }
                waited = true;
            }
            // clear the mark (if written) and renew
            if self.write_mark(false).await.is_err() {
                return Gate::Lost;
            }
            if renew_deadline_passed(
                self.last_held.unwrap_or_else(Instant::now),
                self.timings.renew_deadline,
                Instant::now(),
            ) {
                tracing::error!(lease = %self.name, "the lease was not renewed within the renew deadline while waiting");
                self.marked = false;
                return Gate::Lost;
            }
            tokio::select! {
                () = stop.cancelled() => return Gate::Stopped,
                () = tokio::time::sleep(wait) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: Duration = Duration::from_secs(15);

    fn held_by(h: &str) -> LeaseRecord {
        LeaseRecord {
            holder: Some(h.to_owned()),
            lease_duration_seconds: Some(15),
            ..LeaseRecord::default()
        }
    }

    #[test]
    fn expiry_uses_the_local_observation_time() {
        let t0 = Instant::now();
        assert!(!is_expired(t0, D, t0));
        assert!(!is_expired(t0, D, t0 + Duration::from_secs(14)));
        assert!(is_expired(t0, D, t0 + D));
        // an observation in the future (clock oddities) never counts as expired
        assert!(!is_expired(t0 + D, D, t0));
    }

    #[test]
    fn decisions() {
        let t0 = Instant::now();
        let soon = t0 + Duration::from_secs(1);
        let late = t0 + Duration::from_secs(16);
        assert_eq!(decide(None, "me", t0, t0, D), Decision::Create);
        assert_eq!(
            decide(Some(&LeaseRecord::default()), "me", t0, soon, D),
            Decision::Take
        );
        assert_eq!(
            decide(Some(&held_by("me")), "me", t0, late, D),
            Decision::Renew
        );
        assert_eq!(
            decide(Some(&held_by("other")), "me", t0, soon, D),
            Decision::Wait {
                holder: "other".to_owned()
            }
        );
        assert_eq!(
            decide(Some(&held_by("other")), "me", t0, late, D),
            Decision::Take
        );
    }

    #[test]
    fn holder_declared_duration_wins() {
        let t0 = Instant::now();
        let mut rec = held_by("other");
        rec.lease_duration_seconds = Some(60);
        let after_20s = t0 + Duration::from_secs(20);
        assert!(matches!(
            decide(Some(&rec), "me", t0, after_20s, D),
            Decision::Wait { .. }
        ));
        rec.lease_duration_seconds = None;
        assert_eq!(decide(Some(&rec), "me", t0, after_20s, D), Decision::Take);
    }

    #[test]
    fn a_waiting_candidate_retries_when_the_lease_expires_if_that_is_sooner() {
        let t0 = Instant::now();
        let retry = Duration::from_secs(3);
        // the lease expires in 15s: the retry comes first
        assert_eq!(wait_before_retry(retry, t0, D, t0), retry);
        // it expires in 1s: try again then
        let late = t0 + Duration::from_secs(14);
        assert_eq!(
            wait_before_retry(retry, t0, D, late),
            Duration::from_secs(1)
        );
        // it has expired: at once
        assert_eq!(
            wait_before_retry(retry, t0, D, t0 + Duration::from_secs(20)),
            Duration::ZERO
        );
    }

    #[test]
    fn renew_deadline() {
        let t0 = Instant::now();
        let deadline = Duration::from_secs(10);
        assert!(!renew_deadline_passed(
            t0,
            deadline,
            t0 + Duration::from_secs(9)
        ));
        assert!(renew_deadline_passed(t0, deadline, t0 + deadline));
    }

    #[test]
    fn next_record_counts_transitions_and_keeps_acquire_time_on_renew() {
        let t1 = Timestamp::from_second(1_000).expect("ts");
        let t2 = Timestamp::from_second(2_000).expect("ts");
        let mut taken_over = held_by("other");
        taken_over.transitions = 3;
        let mine = taken_over.next("me", t1, D);
        assert_eq!(mine.holder.as_deref(), Some("me"));
        assert_eq!(mine.transitions, 4);
        assert_eq!(mine.acquire_time, Some(t1));
        assert_eq!(mine.lease_duration_seconds, Some(15));
        let renewed = mine.next("me", t2, D);
        assert_eq!(renewed.transitions, 4);
        assert_eq!(renewed.acquire_time, Some(t1));
        assert_eq!(renewed.renew_time, Some(t2));
        let released = renewed.released(t2);
        assert_eq!(released.holder, None);
        assert_eq!(released.lease_duration_seconds, Some(1));
        // a released lease is free for anyone at once
        let t0 = Instant::now();
        assert_eq!(decide(Some(&released), "other", t0, t0, D), Decision::Take);
    }

    #[test]
    fn record_round_trips_through_the_spec() {
        let rec = held_by("me").next("me", Timestamp::from_second(5).expect("ts"), D);
        let mut spec = LeaseSpec {
            strategy: Some("OldestEmulationVersion".to_owned()),
            ..LeaseSpec::default()
        };
        rec.write_to(&mut spec);
        assert_eq!(
            spec.strategy.as_deref(),
            Some("OldestEmulationVersion"),
            "foreign fields are kept"
        );
        assert_eq!(LeaseRecord::from_spec(Some(&spec)), rec);
        let empty_holder = LeaseSpec {
            holder_identity: Some(String::new()),
            ..LeaseSpec::default()
        };
        assert_eq!(LeaseRecord::from_spec(Some(&empty_holder)).holder, None);
    }

    #[test]
    fn jitter_stays_in_range() {
        let r = Duration::from_secs(2);
        assert_eq!(jittered(r, 0.0), r);
        assert_eq!(jittered(r, 1.0), Duration::from_millis(4400));
        let u = random_unit();
        assert!((0.0..1.0).contains(&u));
    }

    use crate::manager::fake_api::FakeApi;

    const FAST: Timings = Timings {
        lease_duration: Duration::from_secs(1),
        renew_deadline: Duration::from_millis(500),
        retry_period: Duration::from_millis(100),
    };

    fn elector(api: &FakeApi, id: &str) -> LeaderElector {
        LeaderElector::new(
            api.client(),
            "ns".into(),
            "p-leader".into(),
            id.into(),
            FAST,
            Metrics::new(),
        )
    }

    fn holder(api: &FakeApi) -> Option<String> {
        api.lease("ns", "p-leader")
            .and_then(|l| l.spec)
            .and_then(|s| s.holder_identity)
    }

    #[tokio::test]
    async fn second_replica_waits_until_the_first_releases() {
        let api = FakeApi::default();
        let mut a = elector(&api, "a");
        let never = CancellationToken::new();
        assert!(a.acquire(&never).await);
        assert_eq!(holder(&api).as_deref(), Some("a"));
        let stop_a = CancellationToken::new();
        let a_task = tokio::spawn({
            let stop_a = stop_a.clone();
            async move {
                let held = a.hold(&stop_a).await;
                a.release().await;
                held
            }
        });

        let mut b = elector(&api, "b");
        let b_task = tokio::spawn(async move { b.acquire(&CancellationToken::new()).await });
        // longer than the lease duration: a's renewals keep b out
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert!(!b_task.is_finished(), "b must wait while a renews");
        assert_eq!(holder(&api).as_deref(), Some("a"));

        stop_a.cancel();
        a_task
            .await
            .expect("join")
            .expect("a held the lease until stopped");
        let acquired = tokio::time::timeout(Duration::from_secs(2), b_task)
            .await
            .expect("b acquires soon after a releases")
            .expect("join");
        assert!(acquired);
        let spec = api
            .lease("ns", "p-leader")
            .and_then(|l| l.spec)
            .expect("lease");
        assert_eq!(spec.holder_identity.as_deref(), Some("b"));
        assert_eq!(spec.lease_transitions, Some(1));
        assert_eq!(spec.lease_duration_seconds, Some(1));
    }

    #[tokio::test]
    async fn an_unrenewed_lease_is_taken_over_after_it_expires() {
        let api = FakeApi::default();
        let mut a = elector(&api, "a");
        assert!(a.acquire(&CancellationToken::new()).await);
        drop(a); // crashed: no renewals, no release

        let started = Instant::now();
        let mut b = elector(&api, "b");
        let acquired =
            tokio::time::timeout(Duration::from_secs(5), b.acquire(&CancellationToken::new()))
                .await
                .expect("b acquires once the lease expires");
        assert!(acquired);
        assert!(
            started.elapsed() >= Duration::from_millis(900),
            "not before expiry: {:?}",
            started.elapsed()
        );
        assert_eq!(holder(&api).as_deref(), Some("b"));
    }

    #[tokio::test]
    async fn leadership_is_lost_when_renewals_fail_past_the_deadline() {
        let api = FakeApi::default();
        let mut a = elector(&api, "a");
        assert!(a.acquire(&CancellationToken::new()).await);
        api.set_failing(true);
        let held = tokio::time::timeout(Duration::from_secs(3), a.hold(&CancellationToken::new()))
            .await
            .expect("hold gives up after the renew deadline");
        assert!(
            matches!(held, Err(Error::LeadershipLost { .. })),
            "{held:?}"
        );
    }

    /// A write is stored before its answer comes back: a replica that sees it stored may take
    /// the Lease a lease duration later, so the holder's renew deadline counts from when it
    /// began the write, not from the (late) answer.
    #[tokio::test(start_paused = true)]
    async fn a_late_answer_does_not_extend_the_renew_deadline() {
        let api = FakeApi::default();
        let mut a = elector(&api, "a");
        // longer than the lease duration less the renew deadline
        api.set_reply_delay(Duration::from_millis(700));
        let began = Instant::now();
        assert!(a.acquire(&CancellationToken::new()).await);
        api.set_reply_delay(Duration::ZERO);
        api.set_failing(true);
        let held = a.hold(&CancellationToken::new()).await;
        assert!(
            matches!(held, Err(Error::LeadershipLost { .. })),
            "{held:?}"
        );
        // stored at 700 ms (once the read's late answer came), answered at 1.4 s: a replica
        // that saw it stored may take the Lease a lease duration (1 s) after 700 ms
        let gave_up = began.elapsed();
        assert!(
            gave_up < Duration::from_millis(700) + FAST.lease_duration,
            "the holder gave up {gave_up:?} after beginning its write"
        );
    }

    #[tokio::test]
    async fn acquire_returns_false_when_stopped_while_waiting() {
        let api = FakeApi::default();
        let mut a = elector(&api, "a");
        assert!(a.acquire(&CancellationToken::new()).await);
        let mut b = elector(&api, "b");
        let stop = CancellationToken::new();
        let canceller = stop.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            canceller.cancel();
        });
        assert!(!b.acquire(&stop).await);
        assert_eq!(holder(&api).as_deref(), Some("a"));
    }

    #[test]
    fn identities_are_unique() {
        assert_ne!(identity(), identity());
    }
}

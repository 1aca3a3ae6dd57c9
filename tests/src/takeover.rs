//! Proof that replicas of one operator never reconcile at the same time: the leader-election
//! Lease's holder history, as watched, cut into terms, and each replica's reconciles, read from
//! the start and end lines its log has for each (the runtime logs them at `debug`).

use k8s_openapi::jiff::Timestamp;

/// One version of the Lease's spec, in the order the apiserver stored them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseVersion {
    /// `holderIdentity`; `None` when empty (released).
    pub holder: Option<String>,
    /// `acquireTime`.
    pub acquired: Option<Timestamp>,
    /// `renewTime`.
    pub renewed: Option<Timestamp>,
    /// `leaseTransitions`.
    pub transitions: i32,
}

/// One uninterrupted holding of the Lease by one identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    /// The holder identity (`<pod name>_<random>`).
    pub holder: String,
    /// `acquireTime` of the term.
    pub acquired: Timestamp,
    /// The latest `renewTime` the holder wrote.
    pub last_renewed: Timestamp,
    /// When the holder released the Lease (the `renewTime` of the version without holder that
    /// ends the term), if it did.
    pub released: Option<Timestamp>,
    /// `leaseTransitions` during the term.
    pub transitions: i32,
}

/// Cuts `history` into terms, checking that the holders follow one another strictly: each
/// change of holder counts exactly one transition (none was missed, none came at once), and a
/// new term is acquired after the previous holder's last renewal and release.
pub fn terms(history: &[LeaseVersion]) -> Result<Vec<Term>, String> {
    let mut terms: Vec<Term> = Vec::new();
    let mut holding = false;
    for (index, version) in history.iter().enumerate() {
        let at = |what: &str| format!("lease version {index} ({version:?}): {what}");
        let Some(holder) = &version.holder else {
            if let Some(term) = terms.last_mut().filter(|_| holding) {
                if version.transitions != term.transitions {
                    return Err(at("the release changed leaseTransitions"));
                }
                term.released = Some(version.renewed.ok_or_else(|| at("no renewTime"))?);
            }
            holding = false;
            continue;
        };
        let acquired = version.acquired.ok_or_else(|| at("no acquireTime"))?;
        let renewed = version.renewed.ok_or_else(|| at("no renewTime"))?;
        if let Some(term) = terms.last_mut().filter(|t| holding && &t.holder == holder) {
            if acquired != term.acquired || version.transitions != term.transitions {
                return Err(at("a renewal changed acquireTime or leaseTransitions"));
            }
            if renewed < term.last_renewed {
                return Err(at("renewTime went back"));
            }
            term.last_renewed = renewed;
            continue;
        }
        if let Some(previous) = terms.last() {
            if version.transitions != previous.transitions + 1 {
                return Err(at(&format!(
                    "{holder} took over from {} with leaseTransitions {} after {}: a holder in \
                     between was not seen, or the history is not sequential",
                    previous.holder, version.transitions, previous.transitions
                )));
            }
            let free_from = previous.released.unwrap_or(previous.last_renewed);
            if acquired <= previous.last_renewed || acquired < free_from {
                return Err(at(&format!(
                    "{holder} acquired at {acquired}, before {} last renewed ({}) or released",
                    previous.holder, previous.last_renewed
                )));
            }
        }
        terms.push(Term {
            holder: holder.clone(),
            acquired,
            last_renewed: renewed,
            released: None,
            transitions: version.transitions,
        });
        holding = true;
    }
    Ok(terms)
}

/// One reconcile a replica logged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reconcile {
    /// `<namespace>/<name>` of the object.
    pub object: String,
    /// The time of its `reconcile started` line.
    pub started: Timestamp,
    /// The time of its `reconcile finished` line; `None` when the replica died before.
    pub finished: Option<Timestamp>,
    /// The `result` of its `reconcile finished` line (`success`, `requeue_after`, `error` ...);
    /// `None` while unfinished.
    pub result: Option<String>,
}

/// The reconciles of `controller` in a manager's log: each `reconcile started` line (its
/// timestamp first, the object in the `reconcile{object=<key>}` span, `controller=<name>` in its
/// fields), paired with the next `reconcile finished` line for the same object.
pub fn reconciles(log: &str, controller: &str) -> Result<Vec<Reconcile>, String> {
    let mut found: Vec<Reconcile> = Vec::new();
    for line in log.lines() {
        let started = line.contains("reconcile started");
        if !started && !line.contains("reconcile finished") {
            continue;
        }
        let plain = format!("controller={controller}");
        let quoted = format!("controller=\"{controller}\"");
        let of_controller = line
            .split_whitespace()
            .any(|field| field == plain || field == quoted);
        if !of_controller {
            continue;
        }
        let time: Timestamp = line
            .split_whitespace()
            .next()
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| format!("no timestamp at the start of: {line}"))?;
        let object = line
            .split_once("reconcile{object=")
            .and_then(|(_, rest)| rest.split_once('}'))
            .map(|(object, _)| object.to_owned())
            .ok_or_else(|| format!("no reconcile{{object=..}} span in: {line}"))?;
        if started {
            found.push(Reconcile {
                object,
                started: time,
                finished: None,
                result: None,
            });
        } else {
            let open = found
                .iter_mut()
                .rev()
                .find(|r| r.object == object && r.finished.is_none())
                .ok_or_else(|| format!("a reconcile finished that did not start: {line}"))?;
            open.finished = Some(time);
            open.result = line
                .split_whitespace()
                .find_map(|field| field.strip_prefix("result="))
                .map(|r| r.trim_matches('"').to_owned());
        }
    }
    Ok(found)
}

/// One replica's reconciles, known by its pod name (its identities start with `<pod>_`).
#[derive(Clone, Debug)]
pub struct Replica {
    /// `POD_NAME`.
    pub pod: String,
    /// What it reconciled.
    pub reconciles: Vec<Reconcile>,
    /// When it was known to have stopped (after it exited), if it did.
    pub stopped: Option<Timestamp>,
}

impl Replica {
    fn holds(&self, term: &Term) -> bool {
        term.holder.starts_with(&format!("{}_", self.pod))
    }

    /// The first start and the last end of its reconciles (an unfinished one ends when the
    /// replica stopped, or never); `None` without reconciles.
    pub fn window(&self) -> Option<(Timestamp, Option<Timestamp>)> {
        let first = self.reconciles.iter().map(|r| r.started).min()?;
        let mut last = Some(first);
        for r in &self.reconciles {
            let end = r.finished.or(self.stopped);
            last = match (last, end) {
                (Some(a), Some(b)) => Some(a.max(b)),
                _ => None,
            };
        }
        Some((first, last))
    }
}

/// Checks that no two replicas reconciled at once: every reconcile of a replica started after
/// one of its terms was acquired, and ended (an unfinished one: the replica stopped) before
/// that term was released and before the next holder acquired; and the replicas' reconcile
/// windows do not overlap. Returns every violation.
pub fn check_exclusive(terms: &[Term], replicas: &[Replica]) -> Result<(), Vec<String>> {
    let mut problems = Vec::new();
    for replica in replicas {
        for r in &replica.reconciles {
            let term = terms
                .iter()
                .enumerate()
                .rev()
                .find(|(_, t)| replica.holds(t) && t.acquired <= r.started);
            let Some((index, term)) = term else {
                problems.push(format!(
                    "{} reconciled {} at {} without holding the lease",
                    replica.pod, r.object, r.started
                ));
                continue;
            };
            let next = terms.get(index + 1);
            let end = r.finished.or(replica.stopped);
            let limits = term.released.iter().chain(next.map(|n| &n.acquired)).min();
            match (end, limits) {
                (Some(end), Some(limit)) if end > *limit => problems.push(format!(
                    "{} reconciled {} from {} to {end}, past the end of its term at {limit}",
                    replica.pod, r.object, r.started
                )),
                (None, Some(limit)) => problems.push(format!(
                    "{} was still reconciling {} (from {}) when its term ended at {limit}",
                    replica.pod, r.object, r.started
                )),
                _ => {}
            }
        }
    }
    let windows: Vec<(&str, Timestamp, Option<Timestamp>)> = replicas
        .iter()
        .filter_map(|r| r.window().map(|(a, b)| (r.pod.as_str(), a, b)))
        .collect();
    for (i, (a, a_start, a_end)) in windows.iter().enumerate() {
        for (b, b_start, b_end) in &windows[i + 1..] {
            let a_before_b = a_end.is_some_and(|end| end < *b_start);
            let b_before_a = b_end.is_some_and(|end| end < *a_start);
            if !a_before_b && !b_before_a {
                problems.push(format!(
                    "the reconcile windows of {a} ({a_start} to {a_end:?}) and {b} \
                     ({b_start} to {b_end:?}) overlap"
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(second: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + second).expect("timestamp")
    }

    fn held(holder: &str, acquired: i64, renewed: i64, transitions: i32) -> LeaseVersion {
        LeaseVersion {
            holder: Some(holder.to_owned()),
            acquired: Some(t(acquired)),
            renewed: Some(t(renewed)),
            transitions,
        }
    }

    fn released(at: i64, transitions: i32) -> LeaseVersion {
        LeaseVersion {
            holder: None,
            acquired: Some(t(at)),
            renewed: Some(t(at)),
            transitions,
        }
    }

    fn history() -> Vec<LeaseVersion> {
        vec![
            held("a_1", 0, 0, 0),
            held("a_1", 0, 2, 0),
            released(3, 0),
            held("b_2", 4, 4, 1),
            held("b_2", 4, 6, 1),
            // b is killed; c waits out the lease
            held("c_3", 22, 22, 2),
        ]
    }

    #[test]
    fn a_sequential_history_gives_its_terms() {
        let terms = terms(&history()).expect("sequential");
        let summary: Vec<(&str, Timestamp, Timestamp, Option<Timestamp>)> = terms
            .iter()
            .map(|t| (t.holder.as_str(), t.acquired, t.last_renewed, t.released))
            .collect();
        assert_eq!(
            summary,
            [
                ("a_1", t(0), t(2), Some(t(3))),
                ("b_2", t(4), t(6), None),
                ("c_3", t(22), t(22), None),
            ]
        );
    }

    #[test]
    fn a_missed_holder_or_an_early_take_over_fails() {
        let mut skipped = history();
        skipped[5].transitions = 3;
        let error = terms(&skipped).expect_err("a transition was skipped");
        assert!(error.contains("c_3 took over from b_2"), "{error}");
        let mut early = history();
        early[5] = held("c_3", 5, 5, 2);
        let error = terms(&early).expect_err("c took over while b renewed");
        assert!(error.contains("before b_2 last renewed"), "{error}");
    }

    const LOG: &str = "\
2026-11-23T22:00:00.100000Z DEBUG reconcile{object=default/x}: operator_gen_runtime::manager::metrics: reconcile started controller=\"captain\"
2026-11-23T22:00:00.200000Z DEBUG reconcile{object=default/y}: operator_gen_runtime::manager::metrics: reconcile started controller=\"captain\"
2026-11-23T22:00:00.300000Z DEBUG reconcile{object=default/x}: operator_gen_runtime::manager::metrics: reconcile finished controller=\"captain\" result=\"success\" elapsed=200ms
2026-11-23T22:00:00.400000Z DEBUG reconcile{object=default/z}: operator_gen_runtime::manager::metrics: reconcile started controller=\"other\"
";

    #[test]
    fn reconciles_pair_start_and_end_per_object() {
        let found = reconciles(LOG, "captain").expect("parses");
        let ts = |s: &str| s.parse::<Timestamp>().expect("timestamp");
        assert_eq!(
            found,
            [
                Reconcile {
                    object: "default/x".into(),
                    started: ts("2026-11-23T22:00:00.1Z"),
                    finished: Some(ts("2026-11-23T22:00:00.3Z")),
                    result: Some("success".into()),
                },
                Reconcile {
                    object: "default/y".into(),
                    started: ts("2026-11-23T22:00:00.2Z"),
                    finished: None,
                    result: None,
                },
            ]
        );
    }

    fn replica(pod: &str, spans: &[(i64, Option<i64>)], stopped: Option<i64>) -> Replica {
        Replica {
            pod: pod.into(),
            reconciles: spans
                .iter()
                .map(|(s, e)| Reconcile {
                    object: "default/x".into(),
                    started: t(*s),
                    finished: e.map(t),
                    result: e.map(|_| "success".into()),
                })
                .collect(),
            stopped: stopped.map(t),
        }
    }

    #[test]
    fn reconciles_inside_their_terms_pass_and_overlaps_fail() {
        let terms = terms(&history()).expect("terms");
        let good = [
            replica("a", &[(1, Some(2))], Some(3)),
            replica("b", &[(5, Some(6)), (7, None)], Some(8)),
            replica("c", &[(23, None)], None),
        ];
        assert_eq!(check_exclusive(&terms, &good), Ok(()));

        let bad = [
            // a reconciles after its release; b before it holds; c while b's window is open
            replica("a", &[(1, Some(4))], Some(5)),
            replica("b", &[(3, Some(5)), (7, None)], None),
            replica("c", &[(23, None)], None),
        ];
        let problems = check_exclusive(&terms, &bad).expect_err("overlaps");
        let expected = [
            "a reconciled default/x from",
            "b reconciled default/x at",
            "b was still reconciling default/x",
            "the reconcile windows of a",
            "the reconcile windows of b",
        ];
        for start in expected {
            assert!(
                problems.iter().any(|p| p.starts_with(start)),
                "no problem starting {start:?} in {problems:#?}"
            );
        }
    }
}

//! Benchmark (not a test: nothing here asserts a time) of warm standby: how soon a follower
//! reconciles after the leader is killed, its cache kept on standby (warm, the runtime's
//! default) or filled only once it leads (cold, `Source::standby(false)`).
//!
//! Run it with
//!
//!     source hack/envtest/ensure.sh && cargo bench -p operator-gen-tests --bench standby
//!
//! On one control plane, for each N in `STANDBY_OBJECTS` (comma-separated, default `1000,5000`)
//! it creates N ConfigMaps in a namespace of their own, then runs `STANDBY_ROUNDS` (default 3)
//! takeovers of each mode, warm and cold in turn (`operator_gen_tests::standby::takeover`): two
//! managers in this process elect a leader on a Lease (duration 3 s, renew deadline 1.5 s,
//! retry period 0.5 s); once the leader has reconciled all N (and a warm follower cached them),
//! the leader's task is aborted, leaving the Lease held, and the follower takes it when it
//! expires. The reconcile only records its object and time.
//!
//! It prints, per N and mode, the medians of: kill to Lease taken (the follower's controller
//! started), Lease to first reconcile, kill to first reconcile, Lease to every object
//! reconciled; and the objects the follower had cached before the kill.

use std::time::Duration;

use operator_gen_envtest::ControlPlane;
use operator_gen_tests::standby::{self, Takeover};

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values.get(values.len() / 2).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let sizes: Vec<usize> = std::env::var("STANDBY_OBJECTS")
        .unwrap_or_else(|_| "1000,5000".to_owned())
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    let rounds: usize = std::env::var("STANDBY_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    if operator_gen_envtest::require_assets().is_none() {
        eprintln!("standby: no control plane; source hack/envtest/ensure.sh first");
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        let plane = ControlPlane::start().await.expect("control plane starts");
        let client = plane.client();
        println!(
            "| objects | mode | kill → Lease (ms) | Lease → first reconcile (ms) | kill → first reconcile (ms) | Lease → all reconciled (ms) | cached before the kill |"
        );
        println!("|---|---|---|---|---|---|---|");
        for &n in &sizes {
            let namespace = format!("standby-{n}");
            standby::create_objects(&client, &namespace, n).await;
            let mut runs: [Vec<Takeover>; 2] = [Vec::new(), Vec::new()];
            for round in 0..rounds {
                for (slot, warm) in [(0, true), (1, false)] {
                    let mode = if warm { "warm" } else { "cold" };
                    let name = format!("{mode}-{n}-{round}");
                    match standby::takeover(&client, &name, &namespace, n, warm).await {
                        Ok(run) => runs[slot].push(run),
                        Err(error) => eprintln!("standby: {name}: {error}"),
                    }
                }
            }
            for (slot, mode) in [(0, "warm"), (1, "cold")] {
                let of = |f: fn(&Takeover) -> Duration| median(runs[slot].iter().map(f).collect());
                let cached: Vec<String> = runs[slot]
                    .iter()
                    .map(|r| r.cached_before.to_string())
                    .collect();
                println!(
                    "| {n} | {mode} ({} runs) | {} | {} | {} | {} | {} |",
                    runs[slot].len(),
                    ms(of(|r| r.kill_to_lead)),
                    ms(of(|r| r.lead_to_first)),
                    ms(of(|r| r.kill_to_first)),
                    ms(of(|r| r.lead_to_all)),
                    cached.join(", ")
                );
            }
        }
    });
}

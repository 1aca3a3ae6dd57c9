//! Warm standby against a real kube-apiserver, with two managers in one process electing a
//! leader on a Lease (`operator_gen_tests::standby`): a follower keeps its controller's cache
//! in sync before it leads, and once it takes the Lease after the leader was killed, its first
//! reconcile comes within a retry period; with standby off, its cache stays empty until then.

use operator_gen_envtest::{ControlPlane, require_assets};
use operator_gen_tests::standby::{self, RETRY};

const OBJECTS: usize = 300;

#[tokio::test(flavor = "multi_thread")]
async fn a_follower_s_cache_is_warm_and_it_reconciles_within_a_retry_period_of_leading() {
    require_assets!();
    let plane = ControlPlane::start().await.expect("control plane starts");
    let client = plane.client();
    standby::create_objects(&client, "standby", OBJECTS).await;

    let warm = standby::takeover(&client, "warm", "standby", OBJECTS, true)
        .await
        .expect("the warm takeover");
    println!("warm: {warm:?}");
    assert_eq!(
        warm.cached_before, OBJECTS,
        "the follower's cache before it led"
    );
    assert_eq!(
        warm.reconciled_before, 0,
        "the follower reconciled before it led"
    );
    assert!(
        warm.lead_to_first < RETRY,
        "the first reconcile came {:?} after taking the Lease, not within {RETRY:?}",
        warm.lead_to_first
    );

    let cold = standby::takeover(&client, "cold", "standby", OBJECTS, false)
        .await
        .expect("the cold takeover");
    println!("cold: {cold:?}");
    assert_eq!(
        cold.cached_before, 0,
        "a cold follower's cache before it led"
    );
    assert_eq!(cold.reconciled_before, 0);
}

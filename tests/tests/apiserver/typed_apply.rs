//! Typed server-side apply: the apply configurations the derives write (`ShipApply`,
//! `ShipSpecApply`, `HoldApply`, ...), sent by the typed client's `apply` and `apply_status`, on
//! the real kube-apiserver and on the fake API: only set fields are serialised, two managers
//! owning disjoint fields never conflict, a true conflict is the apiserver's 409, and `extract`
//! gives back what a manager applied, status included.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::PatchParams;
use operator_gen_envtest::{ControlPlane, require_assets};
use operator_gen_runtime::fake::FakeApi;
use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A ship: who commands it, its crew, what it carries.
///
/// +kubebuilder:subresource:status
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default)]
#[k8s(
    group = "apply.operator-gen.dev",
    version = "v1",
    kind = "Ship",
    status = "ShipStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct ShipSpec {
    /// Who commands the ship.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub captain: Option<String>,
    /// How many sail on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crew_size: Option<i32>,
    /// What it carries, one hold per cargo.
    /// +listType=map
    /// +listMapKey=name
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holds: Vec<Hold>,
}

/// One hold of a ship.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
#[serde(rename_all = "camelCase")]
pub struct Hold {
    /// The cargo's name.
    pub name: String,
    /// Its weight in tonnes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_load: Option<i64>,
}

/// What the ship reports.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
#[serde(rename_all = "camelCase")]
pub struct ShipStatus {
    /// The ship's conditions.
    /// +listType=map
    /// +listMapKey=type
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The generation last seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

const NS: &str = "default";

fn hold(name: &str, max_load: i64) -> HoldApply {
    HoldApply::default().with_name(name).with_max_load(max_load)
}

/// What the manager `helm` applies: the captain, a label, a finalizer and the hold `rum`.
fn helm_config() -> ShipApply {
    ShipApply::new("victory")
        .with_namespace(NS)
        .with_labels([("fleet", "channel")])
        .with_finalizers(["apply.operator-gen.dev/helm"])
        .with_spec(
            ShipSpecApply::default()
                .with_captain("nelson")
                .with_holds([hold("rum", 40)]),
        )
}

/// What the manager `purser` applies: the crew, a finalizer and the hold `tea`, disjoint from
/// `helm`'s.
fn purser_config() -> ShipApply {
    ShipApply::new("victory")
        .with_namespace(NS)
        .with_finalizers(["apply.operator-gen.dev/purser"])
        .with_spec(
            ShipSpecApply::default()
                .with_crew_size(820)
                .with_holds([hold("tea", 12)]),
        )
}

fn status_config() -> ShipApply {
    let ready = Condition {
        type_: "Ready".into(),
        status: "True".into(),
        reason: "Afloat".into(),
        message: "the ship is afloat".into(),
        last_transition_time: serde_json::from_value(json!("2026-11-27T00:00:00Z"))
            .expect("a time"),
        observed_generation: Some(1),
    };
    ShipApply::new("victory").with_namespace(NS).with_status(
        ShipStatusApply::default()
            .with_conditions([ready])
            .with_observed_generation(1),
    )
}

fn params(manager: &str) -> PatchParams {
    PatchParams::apply(manager)
}

/// A configuration's JSON, for comparisons.
fn json_of(config: &ShipApply) -> Value {
    serde_json::to_value(config).expect("an apply configuration serialises")
}

/// The 409 of an apply: its code, reason, message and causes (field, reason, message).
fn conflict(e: kube::Error) -> (u16, String, String, Vec<(String, String, String)>) {
    let kube::Error::Api(status) = e else {
        panic!("not an API error: {e}");
    };
    let causes = status
        .details
        .map(|d| d.causes)
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.field, c.reason, c.message))
        .collect();
    (status.code, status.reason, status.message, causes)
}

/// Only the fields a configuration sets are serialised, under their wire names (camelCase here),
/// with apiVersion, kind and metadata.name always.
#[test]
fn only_set_fields_serialise() {
    let empty = serde_json::to_string(&HoldApply::default()).expect("serialises");
    assert_eq!(empty, "{}");
    let config = ShipApply::new("victory").with_spec(ShipSpecApply::default().with_crew_size(3));
    assert_eq!(
        serde_json::to_string(&config).expect("serialises"),
        r#"{"apiVersion":"apply.operator-gen.dev/v1","kind":"Ship","metadata":{"name":"victory"},"spec":{"crewSize":3}}"#
    );
    let holds = ShipSpecApply::default().with_holds([HoldApply::default().with_name("rum")]);
    assert_eq!(
        serde_json::to_string(&holds).expect("serialises"),
        r#"{"holds":[{"name":"rum"}]}"#
    );
    // and what is read back keeps only what was there
    let back: ShipApply = serde_json::from_value(json_of(&helm_config())).expect("reads back");
    assert_eq!(json_of(&back), json_of(&helm_config()));
}

/// On the real apiserver: `helm` and `purser` apply disjoint fields (finalizers of one set,
/// items of one list map) without force and without conflict; each `extract` gives back exactly
/// what it applied, and the controller's status apply too; a field `helm` drops goes, `purser`'s
/// stay; `purser` setting `helm`'s captain is the apiserver's 409 naming `helm` and
/// `.spec.captain`, and with force it takes the field over.
#[tokio::test]
async fn typed_apply_on_the_apiserver() {
    require_assets!();
    let plane = ControlPlane::start().await.expect("control plane starts");
    plane
        .install_crds(&[Ship::crd()], Duration::from_secs(60))
        .await
        .expect("installed");
    let ships = Ship::client(plane.client(), NS);

    ships
        .apply(&helm_config(), &params("helm"))
        .await
        .expect("helm applies");
    let ship = ships
        .apply(&purser_config(), &params("purser"))
        .await
        .expect("purser applies disjoint fields without force");
    assert_eq!(ship.spec.captain.as_deref(), Some("nelson"));
    assert_eq!(ship.spec.crew_size, Some(820));
    let holds: Vec<&str> = ship.spec.holds.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(holds, ["rum", "tea"]);
    assert_eq!(
        ship.finalizers(),
        [
            "apply.operator-gen.dev/helm",
            "apply.operator-gen.dev/purser"
        ]
    );

    let ship = ships
        .apply_status(&status_config(), &params("ship-controller"))
        .await
        .expect("the status applies");
    let extracted = ShipApply::extract(&ship, "helm").expect("extracts");
    assert_eq!(json_of(&extracted), json_of(&helm_config()));
    let extracted = ShipApply::extract(&ship, "purser").expect("extracts");
    assert_eq!(json_of(&extracted), json_of(&purser_config()));
    let extracted = ShipApply::extract_status(&ship, "ship-controller").expect("extracts");
    assert_eq!(json_of(&extracted), json_of(&status_config()));
    let nobody = ShipApply::extract(&ship, "nobody").expect("extracts");
    assert_eq!(
        json_of(&nobody),
        json!({"apiVersion": "apply.operator-gen.dev/v1", "kind": "Ship",
            "metadata": {"name": "victory", "namespace": NS}})
    );

    // helm drops its captain: it goes; purser's fields stay
    let mut without = helm_config();
    without.spec.as_mut().expect("a spec").captain = None;
    let ship = ships
        .apply(&without, &params("helm"))
        .await
        .expect("helm applies again");
    assert_eq!(ship.spec.captain, None);
    assert_eq!(ship.spec.crew_size, Some(820));
    ships
        .apply(&helm_config(), &params("helm"))
        .await
        .expect("helm sets the captain again");

    let steps = finalizer_steps(&ships).await;
    assert_eq!(
        steps,
        [
            [HELM_FINALIZER, PURSER_FINALIZER].as_slice(),
            [PURSER_FINALIZER].as_slice(),
            [PURSER_FINALIZER, HELM_FINALIZER].as_slice()
        ]
    );

    let (seen, forced) = true_conflict(&ships).await;
    assert_eq!(seen.0, 409);
    assert_eq!(seen.1, "Conflict");
    assert_eq!(
        seen.2,
        r#"Apply failed with 1 conflict: conflict with "helm": .spec.captain"#
    );
    assert_eq!(
        seen.3,
        [(
            ".spec.captain".to_string(),
            "FieldManagerConflict".to_string(),
            r#"conflict with "helm""#.to_string()
        )]
    );
    let helm_now = ShipApply::extract(&forced, "helm").expect("extracts");
    let helm_spec = json_of(&helm_now)["spec"].clone();
    assert_eq!(
        helm_spec,
        json!({"holds": [{"name": "rum", "maxLoad": 40}]})
    );

    // the same finalizers and the same conflict on the fake API, word for word
    let fake = FakeApi::new().with_crd(&Ship::crd());
    let fake_ships = Ship::client(fake.client(), NS);
    fake_ships
        .apply(&helm_config(), &params("helm"))
        .await
        .expect("helm applies on the fake");
    fake_ships
        .apply(&purser_config(), &params("purser"))
        .await
        .expect("purser applies on the fake");
    assert_eq!(
        finalizer_steps(&fake_ships).await,
        steps,
        "the fake merges finalizers otherwise than the apiserver"
    );
    let (fake_seen, _) = true_conflict(&fake_ships).await;
    assert_eq!(
        fake_seen, seen,
        "the fake's conflict differs from the apiserver's"
    );
}

const HELM_FINALIZER: &str = "apply.operator-gen.dev/helm";
const PURSER_FINALIZER: &str = "apply.operator-gen.dev/purser";

/// The finalizers of one set, after each step, once `helm` and `purser` have each applied their
/// own: both; `helm` applying without its own (it goes, `purser`'s stays); `helm` applying it
/// again (it comes back after `purser`'s). Each manager's `extract` gives back its own only.
async fn finalizer_steps(ships: &ShipClient) -> Vec<Vec<String>> {
    let mut steps = Vec::new();
    let ship = ships.get("victory").await.expect("the ship");
    steps.push(ship.finalizers().to_vec());
    let mut without = helm_config();
    without.metadata.finalizers = None;
    let ship = ships
        .apply(&without, &params("helm"))
        .await
        .expect("helm drops its finalizer");
    steps.push(ship.finalizers().to_vec());
    let helm = ShipApply::extract(&ship, "helm").expect("extracts");
    assert_eq!(helm.metadata.finalizers, None, "helm no longer owns one");
    let ship = ships
        .apply(&helm_config(), &params("helm"))
        .await
        .expect("helm applies its finalizer again");
    steps.push(ship.finalizers().to_vec());
    let purser = ShipApply::extract(&ship, "purser").expect("extracts");
    assert_eq!(json_of(&purser), json_of(&purser_config()));
    steps
}

/// `purser` sets the captain `helm` owns: the refusal, then the object after forcing it.
async fn true_conflict(
    ships: &ShipClient,
) -> ((u16, String, String, Vec<(String, String, String)>), Ship) {
    let mutiny = ShipApply::new("victory")
        .with_namespace(NS)
        .with_spec(ShipSpecApply::default().with_captain("bligh"));
    let refused = ships
        .apply(&mutiny, &params("purser"))
        .await
        .expect_err("a field another manager owns");
    let forced = ships
        .apply(&mutiny, &params("purser").force())
        .await
        .expect("force takes the field over");
    assert_eq!(forced.spec.captain.as_deref(), Some("bligh"));
    (conflict(refused), forced)
}

/// On the fake API: the same disjoint applies, extract of each manager and of the status, and a configuration without a name
/// refused before any request.
#[tokio::test]
async fn typed_apply_on_the_fake() {
    let fake = FakeApi::new().with_crd(&Ship::crd());
    let ships = Ship::client(fake.client(), NS);
    ships
        .apply(&helm_config(), &params("helm"))
        .await
        .expect("helm applies");
    ships
        .apply(&purser_config(), &params("purser"))
        .await
        .expect("purser applies disjoint fields without force");
    let ship = ships
        .apply_status(&status_config(), &params("ship-controller"))
        .await
        .expect("the status applies");
    let holds: Vec<&str> = ship.spec.holds.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(holds, ["rum", "tea"]);
    let extracted = ShipApply::extract(&ship, "helm").expect("extracts");
    assert_eq!(json_of(&extracted), json_of(&helm_config()));
    let extracted = ShipApply::extract(&ship, "purser").expect("extracts");
    assert_eq!(json_of(&extracted), json_of(&purser_config()));
    let extracted = ShipApply::extract_status(&ship, "ship-controller").expect("extracts");
    assert_eq!(json_of(&extracted), json_of(&status_config()));

    let e = ships
        .apply(&ShipApply::default(), &params("helm"))
        .await
        .expect_err("no name");
    assert_eq!(
        e.to_string(),
        "Failed to build request: failed to validate request: the ShipApply has no metadata.name: build it with ShipApply::new(name)"
    );
}

/// What `ShipApply::of(ship)` gets on `ships`, step by step, with the two objects' uids written
/// `<old>` and `<new>` (each backend makes its own): the ship created, then deleted; applying
/// `of` the deleted ship is refused and creates nothing, where a configuration of the name alone
/// creates a new ship; applying `of` the deleted ship to that new one is refused too, and `of`
/// the new one goes through.
async fn applies_of_a_deleted_ship(ships: &ShipClient) -> Vec<String> {
    let captain = || ShipSpecApply::default().with_captain("vanderdecken");
    let mut steps = Vec::new();
    let old = ships
        .apply(
            &ShipApply::new("dutchman").with_spec(captain()),
            &params("helm"),
        )
        .await
        .expect("the ship is made");
    let old_uid = old.metadata.uid.clone().expect("a uid");
    ships
        .api()
        .delete("dutchman", &Default::default())
        .await
        .expect("deleted");
    let outcome = |what: &str, result: kube::Result<Ship>, new_uid: Option<&str>| {
        let text = match result {
            Ok(ship) => format!("applied, uid {}", ship.metadata.uid.unwrap_or_default()),
            Err(kube::Error::Api(status)) => {
                format!("{} {}: {}", status.code, status.reason, status.message)
            }
            Err(other) => format!("{other}"),
        };
        let mut text = text.replace(&old_uid, "<old>");
        if let Some(new) = new_uid {
            text = text.replace(new, "<new>");
        }
        format!("{what}: {text}")
    };
    let refused = ships
        .apply(&ShipApply::of(&old).with_spec(captain()), &params("helm"))
        .await;
    steps.push(outcome("of the deleted ship", refused, None));
    let gone = ships.api().get_opt("dutchman").await.expect("a get");
    steps.push(format!(
        "after it: {}",
        if gone.is_some() { "a ship" } else { "no ship" }
    ));
    let new = ships
        .apply(
            &ShipApply::new("dutchman").with_spec(captain()),
            &params("helm"),
        )
        .await
        .expect("a configuration of the name makes a new ship");
    let new_uid = new.metadata.uid.clone().expect("a uid");
    assert_ne!(new_uid, old_uid);
    let refused = ships
        .apply(&ShipApply::of(&old).with_spec(captain()), &params("helm"))
        .await;
    steps.push(outcome(
        "of the deleted ship to the new one",
        refused,
        Some(&new_uid),
    ));
    let taken = ships
        .apply(&ShipApply::of(&new).with_spec(captain()), &params("helm"))
        .await;
    steps.push(outcome("of the new ship", taken, Some(&new_uid)));
    steps
}

/// `ShipApply::of` carries the ship's uid as a precondition: on the real apiserver, an apply for
/// a deleted ship is 409 `Conflict` and makes no new one, and one for a new ship of the name is
/// 422 (a uid cannot change); the fake API answers each step alike.
#[tokio::test]
async fn an_apply_for_a_deleted_object_creates_nothing() {
    require_assets!();
    let plane = ControlPlane::start().await.expect("control plane starts");
    plane
        .install_crds(&[Ship::crd()], Duration::from_secs(60))
        .await
        .expect("installed");
    let seen = applies_of_a_deleted_ship(&Ship::client(plane.client(), NS)).await;
    assert_eq!(
        seen,
        [
            r#"of the deleted ship: 409 Conflict: Operation cannot be fulfilled on ships.apply.operator-gen.dev "dutchman": uid mismatch: the provided object specified uid <old>, and no existing object was found"#,
            "after it: no ship",
            r#"of the deleted ship to the new one: 422 Invalid: Ship.apply.operator-gen.dev "dutchman" is invalid: metadata.uid: Invalid value: "<old>": field is immutable"#,
            "of the new ship: applied, uid <new>",
        ]
    );
    let fake = FakeApi::new().with_crd(&Ship::crd());
    let on_fake = applies_of_a_deleted_ship(&Ship::client(fake.client(), NS)).await;
    assert_eq!(
        on_fake, seen,
        "the fake answers otherwise than the apiserver"
    );
}

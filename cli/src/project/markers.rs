//! The scaffold markers: the comment lines `init`, `create api` and `create webhook` leave in
//! generated files, before which later commands insert their lines. Defined here once; the
//! templates write them as `{{ markers.<key> }}` (see [`table`]), the commands insert at them.

use std::collections::BTreeMap;

/// In `mod.rs`, `lib.rs` files: where `pub mod` lines go.
pub const MODULES: &str = "// +operator-gen:scaffold:modules";
/// In a version's `mod.rs`: where the kinds are re-exported.
pub const REEXPORTS: &str = "// +operator-gen:scaffold:reexports";
/// In `src/main.rs`: where controllers are registered.
pub const CONTROLLERS: &str = "// +operator-gen:scaffold:controllers";
/// In `src/main.rs`: where webhooks are registered with the webhook server.
pub const WEBHOOKS: &str = "// +operator-gen:scaffold:webhooks";
/// In a kind's webhook module: where its `+kubebuilder:webhook` lines go.
pub const WEBHOOK_MARKERS: &str = "// +operator-gen:scaffold:webhookmarkers";
/// In a kind's webhook module: where its `use` lines go.
pub const IMPORTS: &str = "// +operator-gen:scaffold:imports";
/// In a kind's webhook module: where its hooks are added to the server.
pub const WEBHOOK_REGISTRATIONS: &str = "// +operator-gen:scaffold:webhookregistrations";
/// In a kind's webhook module: where the defaulter and validator types go.
pub const WEBHOOK_TYPES: &str = "// +operator-gen:scaffold:webhooktypes";
/// In `config/crd/kustomization.yaml`: where the CRDs are listed.
pub const CRD_RESOURCES: &str = "# +operator-gen:scaffold:crdkustomizeresource";
/// In `config/crd/kustomization.yaml`: where CRD patches go.
pub const CRD_WEBHOOK_PATCHES: &str = "# +operator-gen:scaffold:crdkustomizewebhookpatch";
/// In `config/samples/kustomization.yaml`: where the samples are listed.
pub const SAMPLES: &str = "# +operator-gen:scaffold:manifestskustomizesamples";
/// In `config/rbac/kustomization.yaml`: where the per-kind roles are listed.
pub const RBAC_ROLES: &str = "# +operator-gen:scaffold:rbackustomizeroles";
/// In `config/default/kustomization.yaml`: where the manager's webhook patch goes.
pub const DEFAULT_PATCHES: &str = "# +operator-gen:scaffold:defaultpatches";
/// In `config/default/kustomization.yaml`: where the CA injection replacements go.
pub const DEFAULT_REPLACEMENTS: &str = "# +operator-gen:scaffold:defaultreplacements";
/// In `config/webhook/kustomization.yaml`: where `manifests.yaml` is listed.
pub const WEBHOOK_MANIFESTS: &str = "# +operator-gen:scaffold:webhookmanifests";
/// In `config/network-policy/kustomization.yaml`: where the network policies are listed.
pub const NETWORK_POLICIES: &str = "# +operator-gen:scaffold:networkpolicies";

/// Every marker by the key templates name it with (`{{ markers.modules }}`).
pub const ALL: &[(&str, &str)] = &[
    ("modules", MODULES),
    ("reexports", REEXPORTS),
    ("controllers", CONTROLLERS),
    ("webhooks", WEBHOOKS),
    ("webhook_markers", WEBHOOK_MARKERS),
    ("imports", IMPORTS),
    ("webhook_registrations", WEBHOOK_REGISTRATIONS),
    ("webhook_types", WEBHOOK_TYPES),
    ("crd_resources", CRD_RESOURCES),
    ("crd_webhook_patches", CRD_WEBHOOK_PATCHES),
    ("samples", SAMPLES),
    ("rbac_roles", RBAC_ROLES),
    ("default_patches", DEFAULT_PATCHES),
    ("default_replacements", DEFAULT_REPLACEMENTS),
    ("webhook_manifests", WEBHOOK_MANIFESTS),
    ("network_policies", NETWORK_POLICIES),
];

/// The markers as the templates' context holds them: key → marker line.
pub fn table() -> BTreeMap<&'static str, &'static str> {
    ALL.iter().copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_marker_is_in_the_table_once() {
        let table = table();
        assert_eq!(table.len(), ALL.len(), "a key is listed twice");
        let mut texts: Vec<&str> = ALL.iter().map(|(_, t)| *t).collect();
        texts.sort_unstable();
        texts.dedup();
        assert_eq!(texts.len(), ALL.len(), "a marker is listed twice");
        assert_eq!(table["modules"], "// +operator-gen:scaffold:modules");
        assert_eq!(
            table["network_policies"],
            "# +operator-gen:scaffold:networkpolicies"
        );
    }
}

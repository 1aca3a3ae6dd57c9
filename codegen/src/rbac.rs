//! The RBAC emitter: `+kubebuilder:rbac` markers merged, deduplicated and sorted exactly as
//! controller-gen does, into a ClusterRole and one Role per namespace.

use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::Marker;
use crate::markers::Kind;
use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule, Role};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

/// One role object of the output, in file order.
#[derive(Clone, Debug, PartialEq)]
pub enum RoleObject {
    Cluster(ClusterRole),
    Namespaced(Role),
}

#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
struct Rule {
    groups: Vec<String>,
    resources: Vec<String>,
    names: Vec<String>,
    urls: Vec<String>,
    verbs: Vec<String>,
}

fn norm(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v.dedup();
    v
}

impl Rule {
    fn normalised(mut self) -> Rule {
        self.groups = norm(
            self.groups
                .into_iter()
                .map(|g| if g == "core" { String::new() } else { g })
                .collect(),
        );
        self.resources = norm(self.resources);
        self.names = norm(self.names);
        self.urls = norm(self.urls);
        self.verbs = norm(self.verbs);
        self
    }
    fn sort_key(&self) -> String {
        format!(
            "{} + {} + {} + {}",
            self.groups.join("&"),
            self.resources.join("&"),
            self.names.join("&"),
            self.urls.join("&")
        )
    }
}

/// Merges rules equal on everything but the field `pick` selects, concatenating that field.
fn merge_by(rules: Vec<Rule>, pick: fn(&mut Rule) -> &mut Vec<String>) -> Vec<Rule> {
    let mut merged: Vec<Rule> = Vec::new();
    let mut index: BTreeMap<Rule, usize> = BTreeMap::new();
    for mut r in rules {
        let taken = std::mem::take(pick(&mut r));
        let key = r.clone();
        match index.get(&key) {
            Some(&i) => pick(&mut merged[i]).extend(taken),
            None => {
                *pick(&mut r) = taken;
                index.insert(key, merged.len());
                merged.push(r);
            }
        }
    }
    merged.into_iter().map(Rule::normalised).collect()
}

fn normalise_rules(markers: &[&Marker]) -> Vec<Rule> {
    // explode per resource, then merge verbs of rules equal on groups, resources, names, urls
    // rules by their groups, resources, names and urls, in the order first seen
    type Key = [Vec<String>; 4];
    let mut by_key: BTreeMap<Key, Rule> = BTreeMap::new();
    let mut order: Vec<Key> = Vec::new();
    for m in markers {
        let base = Rule {
            groups: m.arg_list("groups"),
            resources: Vec::new(),
            names: m.arg_list("resourceNames"),
            urls: m.arg_list("urls"),
            verbs: m.arg_list("verbs"),
        };
        let resources = m.arg_list("resources");
        let exploded: Vec<Rule> = if resources.is_empty() {
            vec![base.clone()]
        } else {
            resources
                .into_iter()
                .map(|r| Rule {
                    resources: vec![r],
                    ..base.clone()
                })
                .collect()
        };
        for rule in exploded {
            let rule = rule.normalised();
            let key = [
                rule.groups.clone(),
                rule.resources.clone(),
                rule.names.clone(),
                rule.urls.clone(),
            ];
            match by_key.get_mut(&key) {
                Some(existing) => {
                    existing.verbs.extend(rule.verbs);
                    existing.verbs = norm(std::mem::take(&mut existing.verbs));
                }
                None => {
                    order.push(key.clone());
                    by_key.insert(key, rule);
                }
            }
        }
    }
    let rules: Vec<Rule> = order
        .into_iter()
        .filter_map(|k| by_key.remove(&k))
        .collect();
    let rules = merge_by(rules, |r| &mut r.resources);
    let rules = merge_by(rules, |r| &mut r.groups);
    let rules = merge_by(rules, |r| &mut r.urls);
    // each key computed once (a merged rule may list hundreds of resources); the index keeps
    // the order of rules with equal keys, as a stable sort would
    let mut keyed: Vec<(String, usize, Rule)> = rules
        .into_iter()
        .enumerate()
        .map(|(i, r)| (r.sort_key(), i, r))
        .collect();
    keyed.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    let mut rules: Vec<Rule> = keyed.into_iter().map(|(_, _, r)| r).collect();
    for r in &mut rules {
        if r.verbs.iter().any(|v| v == "*") {
            r.verbs = vec!["*".to_string()];
        }
    }
    rules
}

fn policy(rule: Rule) -> PolicyRule {
    let some = |v: Vec<String>| (!v.is_empty()).then_some(v);
    PolicyRule {
        api_groups: some(rule.groups),
        non_resource_urls: some(rule.urls),
        resource_names: some(rule.names),
        resources: some(rule.resources),
        verbs: rule.verbs,
    }
}

/// Checks one rbac marker; the message names the fix.
pub fn check(m: &Marker) -> Result<(), Diagnostic> {
    if m.arg_list("verbs").is_empty() {
        return Err(Diagnostic::new(
            "`+kubebuilder:rbac` needs `verbs=...`, e.g. verbs=get;list;watch",
        ));
    }
    if m.arg_list("resources").is_empty() && m.arg_list("urls").is_empty() {
        return Err(Diagnostic::new(
            "`+kubebuilder:rbac` needs `resources=...` (with groups) or `urls=...`",
        ));
    }
    Ok(())
}

/// Roles from rbac markers, ClusterRole first, then Roles by namespace and name.
pub fn roles(markers: &[Marker], default_role_name: &str) -> Vec<RoleObject> {
    let markers: Vec<&Marker> = markers.iter().collect();
    roles_of(&markers, default_role_name)
}

/// [`roles`] of markers held elsewhere.
fn roles_of(markers: &[&Marker], default_role_name: &str) -> Vec<RoleObject> {
    let mut buckets: BTreeMap<(String, String), Vec<&Marker>> = BTreeMap::new();
    for m in markers.iter().copied().filter(|m| m.names(Kind::Rbac)) {
        let ns = m.arg_str("namespace").unwrap_or_default().to_string();
        let name = m
            .arg_str("roleName")
            .unwrap_or(default_role_name)
            .to_string();
        buckets.entry((ns, name)).or_default().push(m);
    }
    let mut out = Vec::new();
    for ((ns, name), ms) in buckets {
        let rules: Vec<PolicyRule> = normalise_rules(&ms).into_iter().map(policy).collect();
        if rules.is_empty() {
            continue;
        }
        if ns.is_empty() {
            out.push(RoleObject::Cluster(ClusterRole {
                metadata: ObjectMeta {
                    name: Some(name),
                    ..Default::default()
                },
                rules: Some(rules),
                aggregation_rule: None,
            }));
        } else {
            out.push(RoleObject::Namespaced(Role {
                metadata: ObjectMeta {
                    name: Some(name),
                    namespace: Some(ns),
                    ..Default::default()
                },
                rules: Some(rules),
            }));
        }
    }
    out
}

/// Whether a marker is an RBAC marker (the others handed to [`role_file`] are skipped).
pub fn is_rbac_marker(m: &Marker) -> bool {
    m.kind == Kind::Rbac
}

/// The text of `config/rbac/role.yaml` for a project's package markers: its roles, or an empty
/// ClusterRole named `role_name` when no marker grants anything (kustomize still needs the
/// file). Problems point at the markers by their index in `markers` ([`Diagnostic::marker`]).
pub fn role_file(markers: &[&Marker], role_name: &str) -> Result<String, Vec<Diagnostic>> {
    let mut problems = Diagnostics::new();
    for (i, m) in markers.iter().enumerate() {
        if is_rbac_marker(m)
            && let Err(problem) = check(m)
        {
            problems.push(problem.on_marker(i));
        }
    }
    problems.check()?;
    let rbac: Vec<&Marker> = markers
        .iter()
        .copied()
        .filter(|m| is_rbac_marker(m))
        .collect();
    let roles = roles_of(&rbac, role_name);
    if roles.is_empty() {
        return Ok(to_yaml(&[RoleObject::Cluster(ClusterRole {
            metadata: ObjectMeta {
                name: Some(role_name.to_string()),
                ..Default::default()
            },
            rules: Some(Vec::new()),
            aggregation_rule: None,
        })]));
    }
    Ok(to_yaml(&roles))
}

/// The role file: every object as its own `---` document.
pub fn to_yaml(roles: &[RoleObject]) -> String {
    let mut out = String::new();
    for r in roles {
        let (kind, value) = match r {
            RoleObject::Cluster(c) => ("ClusterRole", serde_json::to_value(c)),
            RoleObject::Namespaced(r) => ("Role", serde_json::to_value(r)),
        };
        let mut value = value.unwrap_or_default();
        if let Some(o) = value.as_object_mut() {
            o.insert("apiVersion".into(), "rbac.authorization.k8s.io/v1".into());
            o.insert("kind".into(), kind.into());
        }
        out.push_str(&crate::yaml::document(&value));
    }
    out
}

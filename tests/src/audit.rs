//! The kube-apiserver's audit log read as a proof about RBAC: the requests one user made, the
//! ones denied, and which `(role, apiGroup, resource, verb)` grants bound to that user they used,
//! by the authorizer's own account of which role allowed each request.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value;

/// One audited request: the stages the apiserver logged under one `auditID`, merged.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// `auditID`.
    pub audit_id: String,
    /// `user.username`.
    pub user: String,
    /// The authorizer's verb (`get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, ...).
    pub verb: String,
    /// `objectRef.apiGroup`, empty for the core group.
    pub group: String,
    /// `objectRef.resource`, with `/<subresource>` when there is one; empty for a non-resource
    /// request.
    pub resource: String,
    /// `objectRef.namespace`, empty when cluster-scoped.
    pub namespace: String,
    /// `objectRef.name`, empty for a collection.
    pub name: String,
    /// `requestURI`.
    pub uri: String,
    /// `responseStatus.code` of the latest stage that has one.
    pub code: Option<u16>,
    /// The annotation `authorization.k8s.io/decision` (`allow`, `forbid`).
    pub decision: Option<String>,
    /// The annotation `authorization.k8s.io/reason`: for RBAC, which binding of which role
    /// allowed the request.
    pub reason: Option<String>,
}

impl Request {
    /// Whether the apiserver refused it as forbidden (403, or the authorizer said `forbid`).
    pub fn denied(&self) -> bool {
        self.code == Some(403) || self.decision.as_deref() == Some("forbid")
    }

    /// The role whose binding allowed the request, as [`Grant::role`] names it, read from the
    /// RBAC authorizer's reason (`RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "r" to
    /// ...`, `RBAC: allowed by RoleBinding "b/ns" of Role "r" to ...`).
    pub fn allowed_by(&self) -> Option<String> {
        if self.decision.as_deref() != Some("allow") {
            return None;
        }
        let by = self.reason.as_deref()?.strip_prefix("RBAC: allowed by ")?;
        let (binding, rest) = by.split_once(" of ")?;
        let (kind, rest) = rest.split_once(" \"")?;
        let (role, _) = rest.split_once('"')?;
        match kind {
            "ClusterRole" => Some(format!("ClusterRole {role}")),
            "Role" => {
                let namespace = binding
                    .strip_prefix("RoleBinding \"")?
                    .strip_suffix('"')?
                    .rsplit_once('/')?
                    .1;
                Some(format!("Role {namespace}/{role}"))
            }
            _ => None,
        }
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let code = self.code.map_or("-".to_owned(), |c| c.to_string());
        write!(f, "{} {} ({code}", self.verb, self.uri)?;
        if let Some(reason) = &self.reason {
            write!(f, "; {reason}")?;
        }
        write!(f, ")")
    }
}

/// Reads an audit log in the JSON format (one `audit.k8s.io/v1` Event a line) into one
/// [`Request`] per `auditID`, in the order of their first stage.
pub fn parse_log(text: &str) -> Result<Vec<Request>, String> {
    let mut order = Vec::new();
    let mut requests: BTreeMap<String, Request> = BTreeMap::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let event: Value = serde_json::from_str(line)
            .map_err(|e| format!("audit log line {}: {e}", number + 1))?;
        let id = str_at(&event, "/auditID");
        if id.is_empty() {
            return Err(format!("audit log line {} has no auditID", number + 1));
        }
        let request = requests.entry(id.clone()).or_insert_with(|| {
            order.push(id.clone());
            let mut resource = str_at(&event, "/objectRef/resource");
            let subresource = str_at(&event, "/objectRef/subresource");
            if !subresource.is_empty() {
                resource = format!("{resource}/{subresource}");
            }
            Request {
                audit_id: id.clone(),
                user: str_at(&event, "/user/username"),
                verb: str_at(&event, "/verb"),
                group: str_at(&event, "/objectRef/apiGroup"),
                resource,
                namespace: str_at(&event, "/objectRef/namespace"),
                name: str_at(&event, "/objectRef/name"),
                uri: str_at(&event, "/requestURI"),
                ..Request::default()
            }
        });
        if let Some(code) = event
            .pointer("/responseStatus/code")
            .and_then(Value::as_u64)
        {
            request.code = u16::try_from(code).ok();
        }
        let annotations = event.pointer("/annotations");
        let annotation = |key: &str| {
            annotations
                .and_then(|a| a.get(key))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        if let Some(decision) = annotation("authorization.k8s.io/decision") {
            request.decision = Some(decision);
        }
        if let Some(reason) = annotation("authorization.k8s.io/reason") {
            request.reason = Some(reason);
        }
    }
    Ok(order
        .into_iter()
        .filter_map(|id| requests.remove(&id))
        .collect())
}

fn str_at(value: &Value, pointer: &str) -> String {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// One verb on one resource, granted by one role.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Grant {
    /// `ClusterRole <name>`, or `Role <namespace>/<name>`.
    pub role: String,
    /// The API group, empty for the core group.
    pub group: String,
    /// The resource, with `/<subresource>` when the rule names one.
    pub resource: String,
    /// The verb.
    pub verb: String,
}

impl fmt::Display for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let group = if self.group.is_empty() {
            "core"
        } else {
            &self.group
        };
        write!(
            f,
            "{}: {} {}.{}",
            self.role, self.verb, self.resource, group
        )
    }
}

/// Every grant of the roles that the bindings among `docs` (a `kubectl kustomize` output)
/// bind to the ServiceAccount `namespace/name`. A rule with a wildcard, `resourceNames` or
/// `nonResourceURLs` is an error: the proof does not cover it.
pub fn grants_bound_to(
    docs: &[Value],
    namespace: &str,
    name: &str,
) -> Result<BTreeSet<Grant>, String> {
    let find = |kind: &str, role: &str, role_namespace: Option<&str>| {
        docs.iter().find(|d| {
            d["kind"] == kind
                && d["metadata"]["name"] == role
                && role_namespace.is_none_or(|ns| d["metadata"]["namespace"] == ns)
        })
    };
    let mut grants = BTreeSet::new();
    for binding in docs {
        let kind = binding["kind"].as_str().unwrap_or_default();
        if kind != "RoleBinding" && kind != "ClusterRoleBinding" {
            continue;
        }
        let binding_namespace = binding["metadata"]["namespace"].as_str();
        let bound = binding["subjects"].as_array().is_some_and(|subjects| {
            subjects.iter().any(|s| {
                s["kind"] == "ServiceAccount"
                    && s["name"] == name
                    && (s["namespace"] == namespace
                        || (s["namespace"].is_null() && binding_namespace == Some(namespace)))
            })
        });
        if !bound {
            continue;
        }
        let role_kind = binding["roleRef"]["kind"].as_str().unwrap_or_default();
        let role_name = binding["roleRef"]["name"].as_str().unwrap_or_default();
        let (role, key) = match role_kind {
            "ClusterRole" => (
                find("ClusterRole", role_name, None),
                format!("ClusterRole {role_name}"),
            ),
            "Role" => {
                let ns = binding_namespace.unwrap_or_default();
                (
                    find("Role", role_name, Some(ns)),
                    format!("Role {ns}/{role_name}"),
                )
            }
            other => return Err(format!("binding to a {other:?}")),
        };
        let role = role.ok_or_else(|| format!("the bound {key} is not in the manifests"))?;
        for rule in role["rules"].as_array().into_iter().flatten() {
            if rule.get("resourceNames").is_some() || rule.get("nonResourceURLs").is_some() {
                return Err(format!(
                    "{key}: a rule with resourceNames or nonResourceURLs: {rule}"
                ));
            }
            let list = |field: &str| -> Vec<String> {
                rule[field]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            };
            for group in list("apiGroups") {
                for resource in list("resources") {
                    for verb in list("verbs") {
                        if [&group, &resource, &verb].iter().any(|v| v.contains('*')) {
                            return Err(format!("{key}: a wildcard rule: {rule}"));
                        }
                        grants.insert(Grant {
                            role: key.clone(),
                            group: group.clone(),
                            resource: resource.clone(),
                            verb: verb.clone(),
                        });
                    }
                }
            }
        }
    }
    Ok(grants)
}

/// The grants among `grants` that allowed at least one of `requests`, by the authorizer's
/// reason: a request counts for the role whose binding allowed it, and for its group, resource
/// and verb.
pub fn used_grants(requests: &[Request], grants: &BTreeSet<Grant>) -> BTreeSet<Grant> {
    requests
        .iter()
        .filter_map(|r| {
            let grant = Grant {
                role: r.allowed_by()?,
                group: r.group.clone(),
                resource: r.resource.clone(),
                verb: r.verb.clone(),
            };
            grants.contains(&grant).then_some(grant)
        })
        .collect()
}

/// A grant the proof accepts as unused, with why.
#[derive(Clone, Copy, Debug)]
pub struct UnusedGrant {
    /// As [`Grant::role`].
    pub role: &'static str,
    /// The API group, empty for the core group.
    pub group: &'static str,
    /// The resource (with `/<subresource>`).
    pub resource: &'static str,
    /// The verb.
    pub verb: &'static str,
    /// Why no request uses it.
    pub reason: &'static str,
}

impl UnusedGrant {
    /// The grant this row names.
    pub fn grant(&self) -> Grant {
        Grant {
            role: self.role.to_owned(),
            group: self.group.to_owned(),
            resource: self.resource.to_owned(),
            verb: self.verb.to_owned(),
        }
    }
}

/// What [`coverage`] found.
#[derive(Debug, Default)]
pub struct Coverage {
    /// Grants some request used.
    pub used: Vec<Grant>,
    /// Grants no request used that a row of the exceptions names.
    pub excepted: Vec<Grant>,
    /// Grants neither used nor excepted, exceptions that are used, and exceptions for grants
    /// that do not exist: each is a failure.
    pub problems: Vec<String>,
}

/// Sorts every grant into used or excepted, and names what is neither, as well as every row of
/// `exceptions` that no longer applies (its grant is used, absent, or named twice).
pub fn coverage(
    grants: &BTreeSet<Grant>,
    used: &BTreeSet<Grant>,
    exceptions: &[UnusedGrant],
) -> Coverage {
    let mut result = Coverage::default();
    let mut excepted = BTreeSet::new();
    for row in exceptions {
        let grant = row.grant();
        if !grants.contains(&grant) {
            result.problems.push(format!(
                "exception for {grant}: not granted (remove the row)"
            ));
        } else if used.contains(&grant) {
            result.problems.push(format!(
                "exception for {grant}: it is used (remove the row)"
            ));
        } else if !excepted.insert(grant.clone()) {
            result
                .problems
                .push(format!("exception for {grant}: listed twice"));
        }
    }
    for grant in grants {
        if used.contains(grant) {
            result.used.push(grant.clone());
        } else if excepted.contains(grant) {
            result.excepted.push(grant.clone());
        } else {
            result.problems.push(format!(
                "{grant}: granted, but no request used it and no exception names it"
            ));
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = r#"{"kind":"Event","level":"Metadata","auditID":"a1","stage":"ResponseStarted","requestURI":"/apis/crew.my.domain/v1/captains?watch=true","verb":"watch","user":{"username":"system:serviceaccount:sys:sa"},"objectRef":{"resource":"captains","apiGroup":"crew.my.domain","apiVersion":"v1"},"responseStatus":{"code":200},"annotations":{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":"RBAC: allowed by ClusterRoleBinding \"p-manager-rolebinding\" of ClusterRole \"p-manager-role\" to ServiceAccount \"sa/sys\""}}
{"kind":"Event","level":"Metadata","auditID":"a2","stage":"ResponseComplete","requestURI":"/apis/coordination.k8s.io/v1/namespaces/sys/leases/p-leader","verb":"update","user":{"username":"system:serviceaccount:sys:sa"},"objectRef":{"resource":"leases","namespace":"sys","name":"p-leader","apiGroup":"coordination.k8s.io","apiVersion":"v1"},"responseStatus":{"code":200},"annotations":{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":"RBAC: allowed by RoleBinding \"p-leader-election-rolebinding/sys\" of Role \"p-leader-election-role\" to ServiceAccount \"sa/sys\""}}
{"kind":"Event","level":"Metadata","auditID":"a3","stage":"ResponseComplete","requestURI":"/apis/crew.my.domain/v1/namespaces/default/captains/c/status","verb":"patch","user":{"username":"system:serviceaccount:sys:sa"},"objectRef":{"resource":"captains","namespace":"default","name":"c","apiGroup":"crew.my.domain","apiVersion":"v1","subresource":"status"},"responseStatus":{"code":403},"annotations":{"authorization.k8s.io/decision":"forbid","authorization.k8s.io/reason":""}}
{"kind":"Event","level":"Metadata","auditID":"a1","stage":"ResponseComplete","requestURI":"/apis/crew.my.domain/v1/captains?watch=true","verb":"watch","user":{"username":"system:serviceaccount:sys:sa"},"objectRef":{"resource":"captains","apiGroup":"crew.my.domain","apiVersion":"v1"},"responseStatus":{"code":200}}
"#;

    fn docs() -> Vec<Value> {
        serde_saphyr::from_multiple(
            r#"
kind: ClusterRole
metadata: {name: p-manager-role}
rules:
- apiGroups: [crew.my.domain]
  resources: [captains]
  verbs: [list, watch]
- apiGroups: [crew.my.domain]
  resources: [captains/status]
  verbs: [patch]
---
kind: ClusterRoleBinding
metadata: {name: p-manager-rolebinding}
roleRef: {kind: ClusterRole, name: p-manager-role}
subjects: [{kind: ServiceAccount, name: sa, namespace: sys}]
---
kind: Role
metadata: {name: p-leader-election-role, namespace: sys}
rules:
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [update, delete]
---
kind: RoleBinding
metadata: {name: p-leader-election-rolebinding, namespace: sys}
roleRef: {kind: Role, name: p-leader-election-role}
subjects: [{kind: ServiceAccount, name: sa, namespace: sys}]
---
kind: ClusterRole
metadata: {name: p-unbound}
rules:
- apiGroups: [""]
  resources: [secrets]
  verbs: [get]
"#,
        )
        .expect("yaml")
    }

    fn grant(role: &str, group: &str, resource: &str, verb: &str) -> Grant {
        Grant {
            role: role.into(),
            group: group.into(),
            resource: resource.into(),
            verb: verb.into(),
        }
    }

    #[test]
    fn merges_stages_and_reads_who_allowed_what() {
        let requests = parse_log(LOG).expect("parses");
        let ids: Vec<&str> = requests.iter().map(|r| r.audit_id.as_str()).collect();
        assert_eq!(ids, ["a1", "a2", "a3"]);
        assert_eq!(
            requests[0].allowed_by().as_deref(),
            Some("ClusterRole p-manager-role")
        );
        assert_eq!(
            requests[1].allowed_by().as_deref(),
            Some("Role sys/p-leader-election-role")
        );
        assert_eq!(requests[2].resource, "captains/status");
        let denied: Vec<&str> = requests
            .iter()
            .filter(|r| r.denied())
            .map(|r| r.audit_id.as_str())
            .collect();
        assert_eq!(denied, ["a3"]);
        assert!(parse_log("{not json").is_err());
    }

    #[test]
    fn grants_are_those_bound_to_the_account() {
        let grants = grants_bound_to(&docs(), "sys", "sa").expect("grants");
        let expected: BTreeSet<Grant> = [
            grant(
                "ClusterRole p-manager-role",
                "crew.my.domain",
                "captains",
                "list",
            ),
            grant(
                "ClusterRole p-manager-role",
                "crew.my.domain",
                "captains",
                "watch",
            ),
            grant(
                "ClusterRole p-manager-role",
                "crew.my.domain",
                "captains/status",
                "patch",
            ),
            grant(
                "Role sys/p-leader-election-role",
                "coordination.k8s.io",
                "leases",
                "update",
            ),
            grant(
                "Role sys/p-leader-election-role",
                "coordination.k8s.io",
                "leases",
                "delete",
            ),
        ]
        .into();
        assert_eq!(grants, expected);
        assert!(
            grants_bound_to(&docs(), "sys", "other")
                .expect("grants")
                .is_empty()
        );
    }

    #[test]
    fn coverage_names_what_is_unused_and_stale_exceptions() {
        let grants = grants_bound_to(&docs(), "sys", "sa").expect("grants");
        let used = used_grants(&parse_log(LOG).expect("log"), &grants);
        // the denied status patch uses nothing; list is never requested
        let used_names: Vec<String> = used.iter().map(ToString::to_string).collect();
        assert_eq!(
            used_names,
            [
                "ClusterRole p-manager-role: watch captains.crew.my.domain",
                "Role sys/p-leader-election-role: update leases.coordination.k8s.io",
            ]
        );
        let row = |role, group, resource, verb| UnusedGrant {
            role,
            group,
            resource,
            verb,
            reason: "test",
        };
        let exceptions = [
            row(
                "ClusterRole p-manager-role",
                "crew.my.domain",
                "captains",
                "list",
            ),
            row(
                "ClusterRole p-manager-role",
                "crew.my.domain",
                "captains/status",
                "patch",
            ),
            // used: stale
            row(
                "ClusterRole p-manager-role",
                "crew.my.domain",
                "captains",
                "watch",
            ),
            // not granted: stale
            row(
                "ClusterRole p-manager-role",
                "crew.my.domain",
                "captains",
                "delete",
            ),
        ];
        let found = coverage(&grants, &used, &exceptions);
        assert_eq!(found.used.len(), 2);
        assert_eq!(found.excepted.len(), 2);
        assert_eq!(
            found.problems,
            [
                "exception for ClusterRole p-manager-role: watch captains.crew.my.domain: it is used (remove the row)",
                "exception for ClusterRole p-manager-role: delete captains.crew.my.domain: not granted (remove the row)",
                "Role sys/p-leader-election-role: delete leases.coordination.k8s.io: granted, but no request used it and no exception names it",
            ]
        );
    }
}

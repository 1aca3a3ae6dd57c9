//! The authentication and authorization check in front of secure metrics: a TokenReview of the
//! caller's bearer token, then a SubjectAccessReview for the request's verb on its path (a
//! non-resource URL).

use hyper::header::HeaderValue;
use k8s_openapi::api::authentication::v1::TokenReview;
use k8s_openapi::api::authorization::v1::SubjectAccessReview;
use kube::api::PostParams;
use kube::{Api, Client};

/// What the check decided about one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The caller may read the path.
    Allowed,
    /// No bearer token, or one the apiserver does not accept: 401.
    Unauthenticated,
    /// The caller is authenticated but may not read the path: 403.
    Forbidden,
    /// A review could not be made (the manager's own permissions, the apiserver): 500.
    Failed(String),
}

/// Authenticates callers with a TokenReview and authorizes them with a SubjectAccessReview, as
/// controller-runtime's `WithAuthenticationAndAuthorization` filter does; the manager's identity
/// needs `create` on `tokenreviews` and `subjectaccessreviews` (the `metrics-auth-role`).
#[derive(Clone)]
pub(crate) struct Authorizer {
    client: Client,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer").finish_non_exhaustive()
    }
}

impl Authorizer {
    pub(crate) fn new(client: Client) -> Self {
        Self { client }
    }

    /// Decides whether the bearer of `authorization` may `verb` the non-resource URL `path`.
    pub(crate) async fn review(
        &self,
        authorization: Option<&HeaderValue>,
        verb: &str,
        path: &str,
    ) -> Verdict {
        let Some(token) = bearer_token(authorization) else {
            return Verdict::Unauthenticated;
        };
        // Built from JSON: the spec's field types differ between the Kubernetes versions
        // k8s-openapi supports (`token` is optional in some, required in others).
        let review: TokenReview = match serde_json::from_value(serde_json::json!({
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": { "token": token },
        })) {
            Ok(r) => r,
            Err(e) => return Verdict::Failed(format!("cannot build a token review: {e}")),
        };
        let reviewed = match Api::<TokenReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await
        {
            Ok(r) => r,
            Err(e) => {
                return Verdict::Failed(format!(
                    "token review failed: {e}; the manager's service account needs create on tokenreviews (metrics-auth-role)"
                ));
            }
        };
        let status = reviewed.status.unwrap_or_default();
        let user = match (status.authenticated, status.user) {
            (Some(true), Some(user)) => user,
            _ => return Verdict::Unauthenticated,
        };
        let access: SubjectAccessReview = match serde_json::from_value(serde_json::json!({
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": user.username,
                "groups": user.groups,
                "uid": user.uid,
                "extra": user.extra,
                "nonResourceAttributes": { "path": path, "verb": verb },
            },
        })) {
            Ok(r) => r,
            Err(e) => return Verdict::Failed(format!("cannot build a subject access review: {e}")),
        };
        match Api::<SubjectAccessReview>::all(self.client.clone())
            .create(&PostParams::default(), &access)
            .await
        {
            Ok(r) if r.status.as_ref().is_some_and(|s| s.allowed) => Verdict::Allowed,
            Ok(_) => Verdict::Forbidden,
            Err(e) => Verdict::Failed(format!(
                "subject access review failed: {e}; the manager's service account needs create on subjectaccessreviews (metrics-auth-role)"
            )),
        }
    }
}

/// The token of an `Authorization: Bearer <token>` header; the scheme is case-insensitive.
pub(crate) fn bearer_token(header: Option<&HeaderValue>) -> Option<&str> {
    let value = header?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens() {
        let h = |v: &'static str| HeaderValue::from_static(v);
        assert_eq!(bearer_token(Some(&h("Bearer abc.def"))), Some("abc.def"));
        assert_eq!(bearer_token(Some(&h("bearer  abc "))), Some("abc"));
        assert_eq!(bearer_token(Some(&h("Basic dXNlcjpwdw=="))), None);
        assert_eq!(bearer_token(Some(&h("Bearer "))), None);
        assert_eq!(bearer_token(Some(&h("Bearer"))), None);
        assert_eq!(bearer_token(None), None);
    }
}

//! The webhook markers kubebuilder scaffolds for project-v4 (`internal/webhook/v1/*_webhook.go`),
//! collected here as module-level markers.
//!
//! +kubebuilder:webhook:path=/mutate-crew-testproject-org-v1-admiral,mutating=true,failurePolicy=fail,sideEffects=None,verbs=create;update,versions=v1,admissionReviewVersions=v1,groups=crew.testproject.org,resources=admirales,name=madmiral-v1.kb.io
//! +kubebuilder:webhook:path=/custom-validate-admiral,mutating=false,failurePolicy=fail,sideEffects=None,verbs=create;update,versions=v1,admissionReviewVersions=v1,groups=crew.testproject.org,resources=admirales,name=vadmiral-v1.kb.io
//!
//! +kubebuilder:webhook:path=/mutate-crew-testproject-org-v1-captain,mutating=true,failurePolicy=fail,sideEffects=None,verbs=create;update,versions=v1,admissionReviewVersions=v1,groups=crew.testproject.org,resources=captains,name=mcaptain-v1.kb.io
//! +kubebuilder:webhook:path=/validate-crew-testproject-org-v1-captain,mutating=false,failurePolicy=fail,sideEffects=None,verbs=create;update,versions=v1,admissionReviewVersions=v1,groups=crew.testproject.org,resources=captains,name=vcaptain-v1.kb.io
//!
//! +kubebuilder:webhook:path=/custom-mutate-sailor,mutating=true,failurePolicy=fail,sideEffects=None,verbs=create;update,versions=v1,admissionReviewVersions=v1,groups=crew.testproject.org,resources=sailors,name=msailor-v1.kb.io
//! +kubebuilder:webhook:path=/custom-validate-sailor,mutating=false,failurePolicy=fail,sideEffects=None,verbs=create;update,versions=v1,admissionReviewVersions=v1,groups=crew.testproject.org,resources=sailors,name=vsailor-v1.kb.io
//!
//! +kubebuilder:webhook:path=/mutate-apps-v1-deployment,mutating=true,failurePolicy=fail,sideEffects=None,verbs=create;update,versions=v1,admissionReviewVersions=v1,groups=apps,resources=deployments,name=mdeployment-v1.kb.io
//! +kubebuilder:webhook:path=/validate-apps-v1-deployment,mutating=false,failurePolicy=fail,sideEffects=None,verbs=create;update,versions=v1,admissionReviewVersions=v1,groups=apps,resources=deployments,name=vdeployment-v1.kb.io
//!
//! +kubebuilder:webhook:path=/mutate--v1-pod,mutating=true,failurePolicy=fail,sideEffects=None,verbs=create;update,versions=v1,admissionReviewVersions=v1,groups="",resources=pods,name=mpod-v1.kb.io
//!
//! +kubebuilder:webhook:path=/mutate-cert-manager-io-v1-issuer,mutating=true,failurePolicy=fail,sideEffects=None,verbs=create;update,versions=v1,admissionReviewVersions=v1,groups=cert-manager.io,resources=issuers,name=missuer-v1.kb.io

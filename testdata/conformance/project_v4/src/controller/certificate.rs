//! The certificate reconciler's permissions.
//!
//! +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=get;list;watch;create;update;patch;delete
//! +kubebuilder:rbac:groups=cert-manager.io,resources=certificates/status,verbs=get;update;patch
//! +kubebuilder:rbac:groups=cert-manager.io,resources=certificates/finalizers,verbs=update

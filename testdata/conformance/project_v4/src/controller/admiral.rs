//! The admiral reconciler's permissions.
//!
//! +kubebuilder:rbac:groups=crew.testproject.org,resources=admirales,verbs=get;list;watch;create;update;patch;delete
//! +kubebuilder:rbac:groups=crew.testproject.org,resources=admirales/status,verbs=get;update;patch
//! +kubebuilder:rbac:groups=crew.testproject.org,resources=admirales/finalizers,verbs=update
